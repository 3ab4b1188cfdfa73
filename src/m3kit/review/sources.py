"""Which builder's output a folder is: each benchmark with a construction pipeline offers
``open_review_source(root) -> ReviewSource | None`` in its ``construct/review_source.py``; the
first that recognises the folder serves it."""

from __future__ import annotations

import importlib
from pathlib import Path

from m3kit.errors import SchemaError
from m3kit.review.store import DEFAULT_EXPORT_DIR, DecisionStore, export_current
from m3kit.schema.review import ExportResult, ReviewSource

__all__ = ["SOURCE_MODULES", "export_reviewed", "open_source"]

# Tried in turn, most specific layout first.
SOURCE_MODULES: tuple[str, ...] = (
    "m3kit.benchmarks.supermemory.construct.review_source",
    "m3kit.benchmarks.m3eval.construct.review_source",
    "m3kit.benchmarks.m3exam.construct.review_source",
)


def open_source(root: Path) -> ReviewSource:
    """The review source of the builder output at ``root``; ``SchemaError`` naming ``root``
    when no builder recognises it."""
    root = Path(root)
    if not root.is_dir():
        raise SchemaError("not a folder", path=root)
    for name in SOURCE_MODULES:
        module = importlib.import_module(name)
        source = module.open_review_source(root)
        if source is not None:
            if not isinstance(source, ReviewSource):
                raise TypeError(f"{name}.open_review_source returned {type(source).__name__}, "
                                "not a ReviewSource")
            return source
    raise SchemaError("not the output of an m3kit builder (a SuperMemory-VQA folder with "
                      "data/json/all_qa.json, M3Eval's or M3Exam's builder output)", path=root)


def export_reviewed(root: Path, out: Path | None = None) -> ExportResult:
    """Export the items accepted so far in the builder output at ``root`` (its decisions in
    ``ROOT/review``) to ``out`` (default ``ROOT/review/export``), without serving anything."""
    source = open_source(root)
    store = DecisionStore(source.root, source.benchmark)
    return export_current(source, source.items(), store,
                          out if out is not None else Path(source.root) / DEFAULT_EXPORT_DIR)
