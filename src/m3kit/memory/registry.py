"""Memories by name, so a task or the command line can pick one with a string.

``make_memory("none")`` is ``None``: the model answers directly, with no memory in between.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from m3kit.memory.base import Memory
from m3kit.memory.context import ContextMemory
from m3kit.memory.rag import RagMemory

_MEMORIES: dict[str, Callable[..., Memory]] = {"context": ContextMemory, "rag": RagMemory}
MEMORIES: tuple[str, ...] = ("none", *_MEMORIES)


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
    return factory(**config)
