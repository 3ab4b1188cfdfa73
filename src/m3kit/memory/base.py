"""The memory protocol: one interface for every benchmark.

A memory takes a time-ordered stream of events for a *memory key* (one video, one conversation),
builds its index once per key, retrieves the items a question needs, and answers questions on that
key with a model, reporting what the answer cost. Items keep a modality tag and a reference to
their raw source, so a memory can go back to the pixels when text is not enough.

    memory = RagMemory(embedder=...)
    await memory.ingest("video-17", events)          # once per key; later calls are no-ops
    ranked = await memory.retrieve("video-17", question, k=8, time=42.0)  # best first
    result = await memory.answer("video-17", prompt, model, time=42.0, query=question)
    result.output, result.usage.prompt_tokens, result.usage.retrieved_ids
    memory.skipped("video-17")                       # what the ingest left out, each named
    memory.forget("video-17")                        # the next ingest builds it again

``answer`` retrieves with ``retrieve`` (the memory's own ``k``) and reports what it retrieved in
``usage.retrieved_ids``, in ``retrieve``'s order: a ranking read from a log is the ranking
``retrieve`` gives for the same key, question and time.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, Self, TypeVar

import anyio
from pydantic import BaseModel, ConfigDict, Field

from m3kit.memory.retrieval.items import MemoryItem as MemoryItem
from m3kit.memory.retrieval.items import Modality as Modality
from m3kit.schema.media import MediaRef
from m3kit.schema.prediction import Usage
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from m3kit.memory.retrieval.config import RetrievalConfig

EventKind = Literal["frame", "transcript", "round", "image", "pdf_page", "text"]
# How a memory is held to the causal cut (``Memory.replay``): "index", built once from the
# whole stream and cut at each question; "stream", fed in time order and asked at each
# question's time (``memory.stream``), for a memory that rewrites what it stores.
ReplayMode = Literal["index", "stream"]


class MemoryEvent(BaseModel):
    """One thing the memory witnessed, in stream order.

    ``time`` is seconds on the stream's clock (video time, or seconds since the first session);
    questions asked at time T may only use events with ``time <= T`` (the causal cut).
    ``media`` points at the raw source (an ``ImageRef`` to a stored frame, a ``PdfPageRef``...),
    ``text`` carries what is already known as text (transcript words, a round's utterance, an
    image description shipped with the data).
    """

    model_config = ConfigDict(frozen=True)

    id: str
    kind: EventKind
    time: float | None = None
    text: str = ""
    media: MediaRef | None = None
    speaker: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class MemoryAnswer(BaseModel):
    """A model's answer through a memory, and what it cost.

    ``metadata`` holds a memory's own account of how it answered (M3Proctor: the bias vector,
    the confidence test, which modalities it escalated to); empty for the plain memories.
    """

    output: str
    usage: Usage
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    # What the provider reported about the output (inspect's ModelOutput.metadata), for a memory
    # that judges its own answer; not part of the record.
    provider_metadata: dict[str, Any] = Field(default_factory=dict, exclude=True)


@dataclass(frozen=True)
class AnswerRequest:
    """One ``answer`` call as a memory's ``_answer`` sees it.

    ``prompt`` is what the model is asked (instructions, choices...); ``query`` is the text
    used for retrieval and modality-bias detection: the caller's bare question, else the prompt
    itself; ``time`` is the question's causal cut (``None``: everything). One record rather
    than a parameter list: every memory gets the same call, and a new field reaches all of them
    without changing their signatures.
    """

    prompt: str
    query: str
    model: Any
    images: Sequence[MediaRef] = ()
    generate_config: Any = None
    cache: Any = None
    time: float | None = None


class _Dated(Protocol):
    @property
    def time(self) -> float | None: ...


DatedT = TypeVar("DatedT", bound=_Dated)


def causal_cut(entries: Iterable[DatedT], time: float | None) -> list[DatedT]:
    """The causal cut, the one rule for items and events alike: the entries a question asked
    at ``time`` may use (dated at or before ``time``, or undated), in their order; all of them
    when ``time`` is ``None``. ``Memory.visible`` applies it to a key's items, and a direct
    prompt built from events (a transcript up to the question) to its events."""
    return [e for e in entries if time is None or e.time is None or e.time <= time]


def checked_k(k: int | None) -> int | None:
    """``k`` for ``retrieve``: ``None`` (the memory's own setting) or a positive count."""
    if k is not None and k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    return k


class Memory(ABC):
    """Base of every memory. Subclasses implement ``_build`` and ``_answer``, and ``_retrieve``
    when they rank (the default ranking is the visible items, newest first).

    ``ingest`` is safe under inspect's concurrency: the first caller for a key builds the index,
    the others wait for it; keys never share items.
    """

    name: ClassVar[str]
    # The search a memory that searches runs when its constructor's ``retrieval`` is not
    # given (a preset of ``retrieval.config``); ``None``: it does not search, and takes no
    # retrieval settings.
    default_retrieval: ClassVar[RetrievalConfig | None] = None
    # An index memory stores each event as an item and is cut at each question; a memory that
    # rewrites what it stores is a ``memory.stream.StreamingMemory`` ("stream").
    replay: ClassVar[ReplayMode] = "index"

    @classmethod
    def from_settings(cls, **settings: Any) -> Self:
        """This memory built from flat settings (``memory_config``, ``make_memory``): its
        constructor's keywords, and for a memory that searches the retrieval settings, flat
        or under ``retrieval`` (``retrieval.config.settings_record``, over
        ``default_retrieval``), gathered into its ``retrieval`` record."""
        if cls.default_retrieval is None:
            return cls(**settings)
        from m3kit.memory.retrieval.config import settings_record

        record, own = settings_record(settings, cls.default_retrieval)
        # Only a memory that searches (a ``default_retrieval``) takes ``retrieval``: a keyword
        # this base's constructor lacks, so it is passed among the settings.
        return cls(**{**own, "retrieval": record})

    def __init__(self) -> None:
        self._items: dict[str, list[MemoryItem]] = {}
        self._build_seconds: dict[str, float] = {}
        self._locks: dict[str, anyio.Lock] = {}
        self._skipped: dict[str, list[SkippedRecord]] = {}

    # -- public surface ---------------------------------------------------------------------------

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """Everything that changes answers (budgets, k, embedder...): part of the cache scope."""

    async def ingest(self, key: str, events: Iterable[MemoryEvent]) -> None:
        """Build the index for ``key`` from ``events`` once; later calls for ``key`` do nothing."""
        lock = self._locks.setdefault(key, anyio.Lock())
        async with lock:
            if key in self._items:
                return
            start = time.perf_counter()
            self._skipped[key] = []
            items = await self._build(key, list(events))
            self._items[key] = items
            self._build_seconds[key] = time.perf_counter() - start

    def is_ingested(self, key: str) -> bool:
        return key in self._items

    def items(self, key: str) -> list[MemoryItem]:
        """The items stored under ``key`` (empty when nothing was ingested)."""
        return list(self._items.get(key, []))

    def build_seconds(self, key: str) -> float:
        return self._build_seconds.get(key, 0.0)

    def skipped(self, key: str) -> list[SkippedRecord]:
        """What the ingest of ``key`` left out: each attachment it could not use (missing,
        damaged, over the pixel bound), naming the file, the event and the reason; its round
        keeps its text. Empty before ``key`` is ingested and when nothing was left out."""
        return list(self._skipped.get(key, []))

    def forget(self, key: str) -> None:
        """Drop the items, the index and the build time of ``key``; the next ``ingest`` of
        ``key`` builds it again. Forgetting a key never ingested does nothing."""
        self._items.pop(key, None)
        self._build_seconds.pop(key, None)
        self._skipped.pop(key, None)
        self._forget(key)

    def visible(self, key: str, time: float | None = None) -> list[MemoryItem]:
        """The items of ``key`` a question at ``time`` may use (the causal cut: dated at or
        before ``time``, or undated), in time order; all of them when ``time`` is ``None``."""
        if key not in self._items:
            raise KeyError(f"memory {self.name!r} has no index for key {key!r}: ingest it first")
        return causal_cut(self._items[key], time)

    async def retrieve(
        self, key: str, query: str, *, k: int | None = None, time: float | None = None
    ) -> list[MemoryItem]:
        """The items of ``key`` this memory would answer ``query`` from, best first, among
        those visible at ``time`` (``visible``); at most ``k`` (``None``: the memory's own
        setting). ``answer`` retrieves with this and reports the ids in this order."""
        return await self._retrieve(key, query, self.visible(key, time), checked_k(k))

    async def answer(
        self,
        key: str,
        prompt: str,
        model: Any,
        *,
        time: float | None = None,
        images: Sequence[MediaRef] = (),
        generate_config: Any = None,
        cache: Any = None,
        query: str | None = None,
    ) -> MemoryAnswer:
        """Answer ``prompt`` about ``key`` with ``model`` (an inspect ``Model``), using only items
        with ``time`` at or before ``time`` when it is given.

        ``query`` is the bare question, used for retrieval and bias detection instead of the
        prompt (whose instructions and choices would pull retrieval towards whatever shares
        their words); without it the prompt is the query.
        """
        visible = self.visible(key, time)
        request = AnswerRequest(prompt=prompt, query=query or prompt, model=model,
                                images=tuple(images), generate_config=generate_config,
                                cache=cache, time=time)
        answer = await self._answer(key, visible, request)
        usage = answer.usage.model_copy(update={"index_build_seconds": self.build_seconds(key)})
        return answer.model_copy(update={"usage": usage})

    # -- for subclasses ---------------------------------------------------------------------------

    @abstractmethod
    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        """Turn the events of ``key`` into items and index them."""

    @abstractmethod
    async def _answer(
        self, key: str, items: list[MemoryItem], request: AnswerRequest
    ) -> MemoryAnswer:
        """Answer ``request`` from the visible ``items`` of ``key`` (time order)."""

    async def _retrieve(
        self, key: str, query: str, items: list[MemoryItem], k: int | None
    ) -> list[MemoryItem]:
        """The ranking of ``retrieve`` over the visible ``items`` of ``key`` (time order).
        Without a ranking of its own a memory has only recency: the newest first."""
        newest = items[::-1]
        return newest if k is None else newest[:k]

    def _skip(self, key: str, records: Iterable[SkippedRecord]) -> None:
        """Record what the build of ``key`` left out (``skipped``); for ``_build`` and what it
        calls, under ``ingest``'s lock of ``key``."""
        self._skipped.setdefault(key, []).extend(records)

    def _forget(self, key: str) -> None:  # noqa: B027 - a hook: by default nothing to drop
        """Drop what a subclass keeps for ``key`` beyond its items (an index, a report)."""
