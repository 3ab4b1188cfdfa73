"""Memories by name, so a task or the command line can pick one with a string.

``make_memory("none")`` is ``None``: the model answers directly, with no memory in between.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from m3kit.memory.base import Memory
from m3kit.memory.context import ContextMemory
from m3kit.memory.egorag import EgoRagMemory
from m3kit.memory.hierarchical import HierarchicalMemory
from m3kit.memory.proctor import ProctorMemory
from m3kit.memory.rag import RagMemory
from m3kit.memory.videorag import VideoRagMemory

_MEMORIES: dict[str, Callable[..., Memory]] = {
    "context": ContextMemory,
    "rag": RagMemory,
    # Text-only vs multimodal under one protocol (M3Exam Appendix B.3): "-text" sends the text
    # surrogates of images (descriptions, OCR), "-mm" the images themselves. Plain "context"
    # is multimodal and plain "rag" text-only, as before.
    "context-text": partial(ContextMemory, send_images=False),
    "context-mm": partial(ContextMemory, send_images=True),
    "rag-text": partial(RagMemory, send_images=False),
    "rag-mm": partial(RagMemory, send_images=True),
    "hierarchical": HierarchicalMemory,
    "hierarchical-mm": partial(HierarchicalMemory, send_images=True),
    "proctor": ProctorMemory,
    # Long video (SuperMemory-VQA 4.1): Video-RAG and EgoButler, indexes stored on disk.
    "videorag": VideoRagMemory,
    "egorag": EgoRagMemory,
}
MEMORIES: tuple[str, ...] = ("none", *_MEMORIES)


def memory_factories() -> dict[str, Callable[..., Memory]]:
    """Each memory name (``none`` aside) and what builds it: a class, or a ``partial`` of one
    with the settings its name fixes (``rag-mm``: ``send_images=True``). A copy: changing it
    changes no registry."""
    return dict(_MEMORIES)


def make_memory(name: str, **config: Any) -> Memory | None:
    """A new memory ``name`` (one of ``MEMORIES``) built with ``config``; ``None`` for ``none``.

    Each call gives a fresh memory with no keys ingested: share one instance across the
    samples of a run so that each memory key is built once.
    """
    if name == "none":
        if config:
            raise ValueError(f"memory 'none' takes no settings, got {sorted(config)}")
        return None
    try:
        factory = _MEMORIES[name]
    except KeyError:
        raise ValueError(f"unknown memory {name!r}; known: {', '.join(MEMORIES)}") from None
    check_finite_settings(config)
    return factory(**config)


def check_finite_settings(config: Mapping[str, Any], prefix: str = "") -> None:
    """``ValueError`` naming the first setting (nested: ``retrieval.alpha``) that is an infinite
    or NaN number: no memory reads ``.inf`` as a budget or ``.nan`` as a weight, and every
    comparison with NaN passes a constructor's own range check."""
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            check_finite_settings(value, f"{name}.")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"memory setting {name!r} must be a finite number, got {value}")
