"""Memories by name, so a task or the command line can pick one with a string.

``make_memory("none")`` is ``None``: the model answers directly, with no memory in between.

The built-in memories are listed here; another package adds one with an entry point in the group
``m3kit.memories`` (name = a ``Memory`` subclass, or a function that returns a ``Memory``), the
way inspect-ai finds the providers of other packages:

    [project.entry-points."m3kit.memories"]
    keyword = "my_package.keyword:KeywordMemory"

Discovery reads the installed packages' metadata each time it is asked, and keeps nothing: a
package installed, or put on ``sys.path``, after ``import m3kit`` is seen. A plugin's module is
imported only when its memory is looked up by name (``make_memory``, ``memory_factory``), or
when every memory is listed (``m3kit list``). A name a plugin shares with a built-in or with
another package's plugin is refused when looked up (the other names work); a plugin that does not
load gives a ``MemoryPluginError`` naming its entry point and its package.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from importlib.metadata import EntryPoint, entry_points
from types import MappingProxyType
from typing import Any, NamedTuple

from m3kit.errors import M3kitError
from m3kit.memory.adapters.cognee import CogneeMemory
from m3kit.memory.adapters.graphiti import GraphitiMemory
from m3kit.memory.adapters.mem0 import Mem0Memory
from m3kit.memory.adapters.memoryos import MemoryosMemory
from m3kit.memory.base import Memory
from m3kit.memory.context import ContextMemory
from m3kit.memory.egorag import EgoRagMemory
from m3kit.memory.hierarchical import HierarchicalMemory
from m3kit.memory.proctor import ProctorMemory
from m3kit.memory.rag import RagMemory
from m3kit.memory.videoagent import VideoAgentMemory
from m3kit.memory.videorag import VideoRagMemory

__all__ = [
    "BUILTIN_PACKAGE",
    "ENTRY_POINT_GROUP",
    "NO_MEMORY",
    "MemoryDiscovery",
    "MemoryPluginError",
    "MemorySource",
    "check_finite_settings",
    "discover_memories",
    "make_memory",
    "memory_factory",
    "memory_names",
    "memory_sources",
    "refused_memories",
]

ENTRY_POINT_GROUP = "m3kit.memories"
BUILTIN_PACKAGE = "m3kit"  # the package that provides the built-in memories
NO_MEMORY = "none"  # the name of answering directly, with no memory

# Read-only: a memory is added by a package's entry point, never by changing this table.
_BUILTINS: Mapping[str, Callable[..., Memory]] = MappingProxyType({
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
    # VideoAgent (seed 003 §5.2.1): the iterative agent over captioned frames.
    "videoagent": VideoAgentMemory,
    # External systems on the streaming path (``memory.adapters``): mem0 with the text
    # surrogates of images or with the images (M3Exam's mem0_text, mem0_visual). The module
    # imports without mem0; building one without it is a ``Mem0NotInstalledError``.
    "mem0": Mem0Memory,
    "mem0-vision": partial(Mem0Memory, vision=True),
    # Graphiti's temporal knowledge graph (Kuzu, one graph per key); a
    # ``GraphitiNotInstalledError`` naming the extra when graphiti-core is missing.
    "graphiti": GraphitiMemory,
    # MemoryOS's short-, mid- and long-term memory (memoryos-pro 0.1.0, its JSON files per
    # key); a ``MemoryosNotInstalledError`` naming `pip install --no-deps memoryos-pro==0.1.0`
    # when it is missing (its declared pins resolve on no Python 3.11: no extra can say it).
    "memoryos": MemoryosMemory,
    # cognee's knowledge graph (SQLite + LanceDB + Ladybug/Kuzu, one dataset per key). Its pins
    # conflict with m3kit's main environment: it runs in a virtualenv of its own (README,
    # "Memory"); a ``CogneeNotInstalledError`` naming it when cognee is missing.
    "cognee": CogneeMemory,
})


class MemoryPluginError(M3kitError, ValueError):
    """A memory another package declares cannot be used: its name is a built-in's or another
    package's too, its entry point does not load, or what it loads makes no ``Memory``. A
    ``ValueError``, as an unknown memory name is, so a task reports it as a bad ``memory``."""


@dataclass(frozen=True)
class MemorySource:
    """Where the memory ``name`` comes from: the package (distribution) that provides it,
    ``m3kit`` for a built-in, and for a plugin its entry point in ``m3kit.memories``."""

    name: str
    package: str
    entry_point: EntryPoint | None = None

    @property
    def builtin(self) -> bool:
        return self.entry_point is None

    def describe(self) -> str:
        """``memory 'NAME' (entry point NAME = module:attr of package PKG)`` for a plugin,
        ``memory 'NAME'`` for a built-in: how errors name it."""
        if self.entry_point is None:
            return f"memory {self.name!r}"
        return (f"memory {self.name!r} (entry point {self.entry_point.name} = "
                f"{self.entry_point.value} of package {self.package})")

    def factory(self) -> Callable[..., Memory]:
        """What builds the memory: a ``Memory`` class, a ``partial`` of one with the settings
        its name fixes (``rag-mm``: ``send_images=True``), or a plugin's function. A plugin's
        module is imported here; ``MemoryPluginError`` when it does not load or loads
        something that is neither a ``Memory`` subclass nor a function."""
        if self.entry_point is None:
            return _BUILTINS[self.name]
        try:
            loaded = self.entry_point.load()
        except Exception as exc:  # a plugin's import may raise anything: named, never bare
            raise MemoryPluginError(f"{self.describe()} does not load: "
                                    f"{type(exc).__name__}: {_flat(exc)}") from exc
        target = loaded.func if isinstance(loaded, partial) else loaded
        if (isinstance(target, type) and not issubclass(target, Memory)) or not callable(target):
            raise MemoryPluginError(f"{self.describe()} is {_kind(target)}, not a Memory "
                                    "subclass or a function that returns a Memory")
        return loaded


def _flat(exc: BaseException) -> str:
    """An exception's message on one line (a plugin's ``SyntaxError`` spans several)."""
    return " ".join(str(exc).split())


def _kind(value: object) -> str:
    return f"the class {value.__name__}" if isinstance(value, type) else f"a {type(value).__name__}"


def _package(entry_point: EntryPoint) -> str:
    """The distribution that declares ``entry_point`` (its top-level module when the metadata
    does not say)."""
    dist = entry_point.dist
    return dist.name if dist is not None else entry_point.module.split(".")[0]


class MemoryDiscovery(NamedTuple):
    """What one reading of the installed packages finds: the memories a name can mean
    (``none`` aside; built-ins first in their order, then the plugins' by name) and the names
    that cannot be used, each with why."""

    sources: list[MemorySource]
    refused: dict[str, str]


def discover_memories() -> MemoryDiscovery:
    """Every memory by name, from one reading of the entry points; nothing is imported. A
    name two sources declare (a plugin taking a built-in's name or ``none``, or two packages
    one name) is refused: which memory a name means must never depend on what happens to be
    installed, so such a name means none of them; the other names are not affected."""
    declared = _declared()
    by_name: dict[str, list[MemorySource]] = {}
    for source in declared:
        by_name.setdefault(source.name, []).append(source)
    refused: dict[str, str] = {}
    for name, sources in by_name.items():
        plugins = [source for source in sources if not source.builtin]
        if name == NO_MEMORY or (plugins and len(sources) > 1 and sources[0].builtin):
            refused[name] = (
                f"{plugins[0].describe()} takes the name of a built-in m3kit memory: rename the "
                f"entry point in group {ENTRY_POINT_GROUP}, or uninstall {plugins[0].package}")
        elif len(sources) > 1:
            refused[name] = (
                f"{sources[1].describe()} takes the name of {sources[0].describe()}: rename one "
                f"of the entry points in group {ENTRY_POINT_GROUP}, or uninstall one of the "
                "packages")
    usable = [source for source in declared if source.name not in refused]
    return MemoryDiscovery(usable, refused)


def memory_sources() -> list[MemorySource]:
    """The memories a name can mean (``discover_memories().sources``)."""
    return discover_memories().sources


def refused_memories() -> dict[str, str]:
    """The names that cannot be used, each with why (``discover_memories().refused``)."""
    return discover_memories().refused


def _declared() -> list[MemorySource]:
    """The built-ins, then every plugin entry point by name (clashes included)."""
    sources = [MemorySource(name, BUILTIN_PACKAGE) for name in _BUILTINS]
    for entry_point in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        sources.append(MemorySource(entry_point.name, _package(entry_point), entry_point))
    return sources


def memory_names() -> tuple[str, ...]:
    """The names ``make_memory`` takes: ``none``, the built-ins, the installed plugins' (a
    refused name aside)."""
    return (NO_MEMORY, *(source.name for source in memory_sources()))


def _source(name: str) -> MemorySource:
    sources, refused = discover_memories()
    if name in refused:
        raise MemoryPluginError(refused[name])
    found = next((source for source in sources if source.name == name), None)
    if found is None:
        known = ", ".join((NO_MEMORY, *(source.name for source in sources)))
        raise ValueError(f"unknown memory {name!r}; known: {known}")
    return found


def memory_factory(name: str) -> Callable[..., Memory]:
    """What builds the memory ``name`` (``MemorySource.factory``); a plugin's module is
    imported now, no other plugin's. ``ValueError`` for an unknown name or ``none``."""
    return _source(name).factory()


def make_memory(name: str, **config: Any) -> Memory | None:
    """A new memory ``name`` (one of ``memory_names()``) built with ``config``; ``None`` for
    ``none``.

    Each call gives a fresh memory with no keys ingested: share one instance across the
    samples of a run so that each memory key is built once. ``replay: "stream"`` runs an index
    memory on the streaming path (``memory.stream.StreamReplay``).
    """
    if name == NO_MEMORY:
        if config:
            raise ValueError(f"memory {NO_MEMORY!r} takes no settings, got {sorted(config)}")
        return None
    settings = dict(config)
    replay = settings.pop("replay", None)
    if replay not in (None, "index", "stream"):
        raise ValueError(f"memory setting 'replay' must be 'index' or 'stream', got {replay!r}")
    source = _source(name)
    factory = source.factory()
    check_finite_settings(settings)
    made = _built(factory, settings)
    if not isinstance(made, Memory):
        raise MemoryPluginError(f"{source.describe()} made {_kind(made)}, not a Memory")
    if replay is not None and replay != made.replay:
        if replay == "index":
            raise ValueError(f"memory {name!r} rewrites what it stores: it runs only on the "
                             "streaming path (replay: stream)")
        # an index memory on the streaming path: the check that both paths answer alike
        from m3kit.memory.stream import StreamReplay

        return StreamReplay(made)
    return made


def _built(factory: Callable[..., Memory], config: Mapping[str, Any]) -> Memory:
    """What ``factory`` builds with ``config``: a ``Memory`` class (or a ``partial`` of one)
    through ``Memory.from_settings``, which gathers its retrieval settings, flat or nested,
    into its ``retrieval`` record; a plugin's function with ``config`` as it is. A setting
    given overrides one the name fixes (``rag-mm`` with ``send_images: false``)."""
    body = factory.func if isinstance(factory, partial) else factory
    if isinstance(body, type) and issubclass(body, Memory):
        fixed = factory.keywords if isinstance(factory, partial) else {}
        return body.from_settings(**{**fixed, **config})
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
