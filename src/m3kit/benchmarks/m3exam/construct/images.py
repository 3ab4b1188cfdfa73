"""The local file pool: images assigned to timeline events by keyword, captioned by the
backend when no description is given, numbered ``img_<n>`` in order of first use."""

from __future__ import annotations

import json
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.m3exam.construct import prompts
from m3kit.benchmarks.m3exam.construct.errors import SynthesisError
from m3kit.benchmarks.m3exam.construct.records import TimelineEvent, content_words
from m3kit.models.backend import BackendRequest, TextBackend, call_json

__all__ = ["NumberedImage", "PoolImage", "assign_images", "load_pool"]

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


@dataclass(frozen=True)
class PoolImage:
    path: Path
    description: str | None = None


class NumberedImage(BaseModel):
    """An image as the dataset names it: ``img_<id>`` with its file in ``images/``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int = Field(ge=1)
    file: str
    source: str
    description: str


class _Caption(BaseModel):
    description: str = Field(min_length=1)


def pool_descriptions(folder: Path, kind: str, field: str) -> dict[str, str]:
    """``{file name: description}`` from ``descriptions.json`` in a pool ``folder`` of ``kind``
    (image, document; empty when there is none); ``field`` names the pool option in errors."""
    if not folder.is_dir():
        raise SynthesisError(f"the {kind} pool is not a folder", path=folder, field=field)
    meta = folder / "descriptions.json"
    if not meta.exists():
        return {}
    try:
        raw = json.loads(meta.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SynthesisError(f"invalid JSON: {exc.msg}", path=meta) from exc
    if not isinstance(raw, dict):
        raise SynthesisError("expected an object {file: description}", path=meta)
    return {str(k): str(v) for k, v in raw.items()}


def load_pool(folder: Path) -> list[PoolImage]:
    """Images in ``folder`` (sorted by name); ``descriptions.json`` beside them, a
    ``{file name: description}`` object, supplies known descriptions."""
    descriptions = pool_descriptions(folder, "image", "images")
    return [
        PoolImage(path, descriptions.get(path.name))
        for path in sorted(folder.iterdir())
        if path.suffix.lower() in IMAGE_SUFFIXES
    ]


def assign_images(
    events: list[TimelineEvent],
    pool: list[PoolImage],
    backend: TextBackend,
    out_images: Path,
    *,
    per_event: int,
    seed: int,
    retries: int = 2,
    skip: frozenset[int] = frozenset(),
) -> dict[int, list[NumberedImage]]:
    """Give each event up to ``per_event`` unused pool images, best keyword overlap first
    (ties in a seeded random order), caption the ones without a description, and copy them
    to ``out_images/img_<n><suffix>``. Returns event index → images. Events in ``skip`` (those
    whose evidence is a document) get none."""
    rng = random.Random(seed)
    order = list(range(len(pool)))
    rng.shuffle(order)  # the tie-break order, fixed by the seed
    rank = {i: r for r, i in enumerate(order)}
    unused = set(range(len(pool)))
    out_images.mkdir(parents=True, exist_ok=True)
    assigned: dict[int, list[NumberedImage]] = {}
    next_id = 1
    for event in events:
        if event.index in skip:
            assigned[event.index] = []
            continue
        want = content_words(f"{event.keyword} {event.description}")

        def score(i: int, want: set[str] = want) -> tuple[int, int]:
            text = pool[i].description or pool[i].path.stem.replace("_", " ")
            return (-len(want & content_words(text)), rank[i])

        chosen = sorted(unused, key=score)[:per_event]
        unused -= set(chosen)
        images = []
        for i in chosen:
            source = pool[i]
            description = source.description or call_json(
                backend,
                BackendRequest("images.caption", source.path.name, prompts.CAPTION.format(),
                               (source.path,)),
                _Caption, retries=retries,
            ).description
            name = f"img_{next_id}{source.path.suffix.lower()}"
            shutil.copyfile(source.path, out_images / name)
            images.append(NumberedImage(id=next_id, file=name, source=str(source.path),
                                        description=description))
            next_id += 1
        assigned[event.index] = images
    return assigned

