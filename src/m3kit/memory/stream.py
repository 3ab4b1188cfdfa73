"""Streaming replay: how a memory that rewrites what it stores is held to the causal cut.

An index memory (``rag``, ``context``...) stores each event as an item and can filter its items
at the question's time: building once from the whole stream and cutting at ``answer`` is exact.
A *stateful* memory (mem0 extracts and merges facts, a graph memory links entities, a summary
memory rewrites its summaries) cannot be cut afterwards: a fact merged from a later event is no
longer separable from the earlier one. So such a memory is never built from the whole stream.
``ingest`` only keeps the key's stream; each question *advances* the memory to the question's
time, feeding it the events it has not seen yet in time order, and the memory answers from the
state it has then. It has seen exactly the events at or before the cut, and nothing after.

A question earlier than what the memory has already seen (questions reached it out of time
order) cannot be answered from the state it has: the key is *replayed*, its state dropped and
the stream fed again from the start up to the question's time. Correct always, and charged: a
replay's calls and tokens are part of the question's ingest cost and counted in ``replays``.
The harness (``memory_solver``) lets the questions of one key take their turns earliest first,
so a run needs no replay unless a run was resumed (the resumed key starts from nothing: its state
is rebuilt by replay up to the first question left, at the cost of feeding those events again).

Every advance is paid by the question that triggered it (``IngestCost``, in its ``Usage``): the
sum over a key's questions is what ingesting the key cost, replays included, so a table of
memory runs can charge ingestion next to the answers (M3Exam, Fig. 5(c)).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from time import perf_counter
from typing import Any, ClassVar

import anyio
from pydantic import BaseModel, ConfigDict, Field

from m3kit.memory.base import (
    AnswerRequest,
    Memory,
    MemoryAnswer,
    MemoryEvent,
    MemoryItem,
    ReplayMode,
)
from m3kit.schema.media import MediaRef

__all__ = ["IngestCost", "StreamReplay", "StreamingMemory", "stream_order"]


class IngestCost(BaseModel):
    """What feeding events into a memory cost: the events fed, the model calls the memory made
    while storing them (fact extraction, summaries, notes, embeddings) with their tokens, the
    seconds it took, and how many replays (a key's state rebuilt from the start) it took."""

    model_config = ConfigDict(frozen=True)

    events: int = Field(default=0, ge=0)
    calls: int = Field(default=0, ge=0)
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    seconds: float = Field(default=0.0, ge=0)
    replays: int = Field(default=0, ge=0)

    def __add__(self, other: IngestCost) -> IngestCost:
        if not isinstance(other, IngestCost):
            return NotImplemented
        return IngestCost(**{name: getattr(self, name) + getattr(other, name)
                             for name in IngestCost.model_fields})

    def usage_update(self) -> dict[str, Any]:
        """The ``Usage`` fields this cost fills (``Usage.ingest_*``)."""
        return {f"ingest_{name}": getattr(self, name) for name in IngestCost.model_fields}


def stream_order(events: Sequence[MemoryEvent]) -> list[MemoryEvent]:
    """The order a stream is fed in: undated events first (every question may use them, the
    causal cut's rule), then by time; ties keep the stream's order. Then the events a question
    at time T may use are always a prefix."""
    return sorted(events, key=lambda e: (e.time is not None, e.time or 0.0))


def _visible_count(stream: Sequence[MemoryEvent], time: float | None) -> int:
    """How long the prefix of ``stream`` (``stream_order``) a question at ``time`` may use is."""
    if time is None:
        return len(stream)
    count = 0
    for event in stream:
        if event.time is not None and event.time > time:
            break
        count += 1
    return count


class StreamingMemory(Memory):
    """Base of a memory that is fed in time order and asked at each question's time.

    Subclasses implement ``_observe`` (store a batch of events, time-ordered, the next ones of
    the key's stream; return what the model calls it made cost), ``_reset`` (drop the key's
    state, to replay it) and ``_answer`` (answer from the state it has now; ``items`` are
    those of ``_stored`` visible at the question's time), and may implement ``_stored`` (what
    the memory holds for the key now, as items, for ``items``/``visible`` and evidence recall).

    Answers and retrievals on one key are serialised: the state is shared, and a question must
    see it as it was at its own time. Keys run concurrently. An ``_observe`` that raises fails
    the question that caused it (an event the memory merely cannot use is the subclass's to
    skip, ``_skip``, not to raise), and the key is fed from the start at its next question.
    """

    replay: ClassVar[ReplayMode] = "stream"

    def __init__(self) -> None:
        super().__init__()
        self._streams: dict[str, list[MemoryEvent]] = {}
        self._fed: dict[str, int] = {}
        self._broken: set[str] = set()  # keys whose last feed failed part-way
        self._turn_locks: dict[str, anyio.Lock] = {}

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        # Nothing is fed here: the stream is fed as the questions reach its times.
        self._streams[key] = stream_order(events)
        self._fed[key] = 0
        return []

    def fed(self, key: str) -> int:
        """How many events of ``key``'s stream the memory holds now."""
        return self._fed.get(key, 0)

    def stream(self, key: str) -> list[MemoryEvent]:
        """``key``'s stream in the order it is fed (``stream_order``)."""
        return list(self._streams.get(key, []))

    async def advance(self, key: str, time: float | None) -> IngestCost:
        """Bring ``key``'s state to ``time``: feed the events up to it not fed yet, or replay
        the key from the start when it has seen past ``time``. For a caller holding the key's
        turn (``answer`` and ``retrieve`` do); what it cost."""
        if key not in self._streams:
            raise KeyError(f"memory {self.name!r} has no stream for key {key!r}: ingest it first")
        stream = self._streams[key]
        until = _visible_count(stream, time)
        replays = 0
        if until < self._fed[key] or key in self._broken:
            await self._start_over(key)
            replays = 1
        batch = stream[self._fed[key]:until]
        if not batch:
            return IngestCost(replays=replays)
        start = perf_counter()
        try:
            spent = await self._observe(key, batch)
        except BaseException:
            # the state may hold part of the batch: dropped, and the next advance feeds the
            # key again from the start (a replay); the error is the question's
            await self._start_over(key)
            self._broken.add(key)
            raise
        self._fed[key] = until
        self._items[key] = self._stored(key)
        return spent + IngestCost(events=len(batch), seconds=perf_counter() - start,
                                  replays=replays)

    async def retrieve(
        self, key: str, query: str, *, k: int | None = None, time: float | None = None
    ) -> list[MemoryItem]:
        async with self._turn(key):
            await self.advance(key, time)
            return await super().retrieve(key, query, k=k, time=time)

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
        async with self._turn(key):
            spent = await self.advance(key, time)
            answer = await super().answer(key, prompt, model, time=time, images=images,
                                          generate_config=generate_config, cache=cache,
                                          query=query)
        usage = answer.usage.model_copy(update=spent.usage_update())
        return answer.model_copy(update={"usage": usage})

    async def _start_over(self, key: str) -> None:
        """Drop ``key``'s state and what was recorded of feeding it (its skips: the events
        are fed again, and skipped again), so the stream is fed from the start."""
        await self._reset(key)
        self._fed[key] = 0
        self._items[key] = []
        self._skipped[key] = []
        self._broken.discard(key)

    def forget(self, key: str) -> None:
        super().forget(key)
        self._streams.pop(key, None)
        self._fed.pop(key, None)
        self._broken.discard(key)

    def _turn(self, key: str) -> anyio.Lock:
        return self._turn_locks.setdefault(key, anyio.Lock())

    # -- for subclasses ---------------------------------------------------------------------------

    @abstractmethod
    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        """Store ``events`` (the next ones of ``key``'s stream, in time order); what the model
        calls made while storing them cost (``events`` and ``seconds`` are the base's)."""

    @abstractmethod
    async def _reset(self, key: str) -> None:
        """Drop everything the memory holds for ``key`` (its store, its files), so the stream
        can be fed again from the start."""

    def _stored(self, key: str) -> list[MemoryItem]:
        """What the memory holds for ``key`` now, as items (for ``items`` and ``visible``);
        by default nothing the base can show."""
        return []

    def _forget(self, key: str) -> None:
        # ``forget`` is synchronous; a subclass whose reset must await drops its state itself.
        pass


class StreamReplay(StreamingMemory):
    """Any memory run on the streaming path: each advance builds ``inner`` again from the
    events fed so far (``forget`` and ``ingest``), and ``inner`` answers. Nothing an index
    memory does depends on events after the cut, so its answers equal those of the index path
    (the test of the streaming machinery itself); each advance costs a rebuild."""

    def __init__(self, inner: Memory) -> None:
        super().__init__()
        if inner.replay == "stream":
            raise ValueError(f"memory {inner.name!r} already runs on the streaming path")
        self.inner = inner
        self.name = f"{inner.name}+stream"  # type: ignore[misc]
        self._seen: dict[str, list[MemoryEvent]] = {}

    def config(self) -> dict[str, Any]:
        return {**self.inner.config(), "replay": "stream"}

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        self._seen[key] = [*self._seen.get(key, []), *events]
        self.inner.forget(key)
        await self.inner.ingest(key, self._seen[key])
        self._skipped[key] = self.inner.skipped(key)
        return IngestCost()

    async def _reset(self, key: str) -> None:
        self._seen.pop(key, None)
        self.inner.forget(key)

    def _stored(self, key: str) -> list[MemoryItem]:
        return self.inner.items(key)

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        return await self.inner._retrieve(key, query, items, k)

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        return await self.inner._answer(key, items, request)

    def _forget(self, key: str) -> None:
        self._seen.pop(key, None)
        self.inner.forget(key)
