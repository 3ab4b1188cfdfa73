"""The two ways every benchmark answers a question: directly (its media and prompt to the model)
or through a memory (the media ingested once per memory key, then the memory answers).

``direct_solver`` and ``memory_solver`` are the solve steps; a benchmark's registered
``@solver`` binds them to its prompt and its media (in the benchmark's ``task.py``). Both record a
``SampleRecord`` (frames, usage, timings, failure) in the sample's metadata. A model call that
still fails after inspect's retries, a memory that reports an error, or media that cannot be
read make the sample *failed*, with the reason (``MEDIA_FAILURE`` first for media): the run goes
on and the scorer counts the sample wrong (or excluded). Limits and cancellation are inspect's
business and pass through untouched.

The causal cut: a memory answers with the question's ``time``; every memory's ``answer`` keeps
to what was recorded before it (``m3kit.memory``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from m3kit.errors import M3kitError
from m3kit.harness.cache import cache_scope, response_cache
from m3kit.harness.frames import (
    FramePolicy,
    SelectedFrame,
    select_frames,
    selected_frame_images,
)
from m3kit.harness.progress import note_sample
from m3kit.harness.sample_state import (
    answer_from_memory,
    fail,
    failure_reason,
    generate_answer,
    passes_through,
    save,
    stop_if_endpoint_down,
    timed,
)
from m3kit.harness.turns import QuestionTurns
from m3kit.paths import cache_dir
from m3kit.schema import ImageRef, Question
from m3kit.schema.evallog import (
    INPUTS_FAILURE,
    MEDIA_FAILURE,
    MEDIA_ROOT_KEY,
    MEMORY_KEY,
    RECORD_KEY,
    SampleRecord,
    sample_question,
)

if TYPE_CHECKING:
    from inspect_ai.model import Content
    from inspect_ai.solver import Generate, Solver, TaskState

    from m3kit.media.store import FrameStore
    from m3kit.memory.base import Memory, MemoryAnswer, MemoryEvent

__all__ = [
    "FrameSelector",
    "MemoryExtra",
    "MessageBuilder",
    "direct_solver",
    "frames_message",
    "memory_solver",
    "selected_frame_events",
    "source_frame_events",
]

# A benchmark's message for one sample: (content parts, images sent), given the state, the
# question and the record (for timings). Media errors it raises (``M3kitError``, ``OSError``)
# make the sample failed with ``MEDIA_FAILURE``.
MessageBuilder = Callable[["TaskState", Question, SampleRecord],
                          Awaitable[tuple["str | list[Content]", int]]]


class MemoryExtra(Protocol):
    """A benchmark's own sample-metadata entries for a memory answer: ``ingested`` false when
    the ingest failed; ``answer`` the memory's answer once it answered."""

    # positional: a benchmark names its own parameters (``_state`` where it reads no state)
    def __call__(self, state: TaskState, question: Question, answer: MemoryAnswer | None, /, *,
                 ingested: bool) -> Mapping[str, Any]: ...


class FrameSelector:
    """The frame store a task's samples share, opened on first use (in the eval's process), and
    the task's frame policy per question."""

    def __init__(self, root: str | Path | None = None, *,
                 policy: Callable[[Question], FramePolicy]) -> None:
        # one store for every run of this user: frames are content-addressed
        self.root = Path(root) if root is not None else cache_dir() / "frames"
        self.policy = policy
        self._store: FrameStore | None = None

    def store(self) -> FrameStore:
        if self._store is None:
            from m3kit.media.store import FrameStore

            self._store = FrameStore(self.root)
        return self._store

    async def select(self, question: Question, media_root: str | None, *,
                     causal: bool = True) -> list[SelectedFrame]:
        """The question's frames, decoded in a worker thread (decoding blocks)."""
        policy = self.policy(question)
        if policy.n == 0:
            return []
        return await anyio.to_thread.run_sync(
            lambda: select_frames(self.store(), question, policy, root=media_root, causal=causal)
        )


async def frames_message(source: FrameSelector, state: TaskState, question: Question,
                         record: SampleRecord, *, preamble: Callable[[int], str],
                         prompt: str) -> tuple[str | list[Content], int]:
    """The question's frames (``preamble(count)`` first), then ``prompt``; plain text when no
    frame is shown (text-only chat templates, llama.cpp's for one, join content parts as a
    string). Records the frames shown."""
    from inspect_ai.model import ContentText

    chosen = await timed(record, "frames",
                         source.select(question, state.metadata.get(MEDIA_ROOT_KEY)))
    images = await timed(record, "frames", selected_frame_images(chosen))
    record.frames = [f.path for f in chosen]
    record.frame_times = [f.time for f in chosen]
    if not images:
        return prompt, 0
    content: list[Content] = [ContentText(text=preamble(len(images))), *images,
                              ContentText(text=prompt)]
    return content, len(images)


def _counted(solve: Callable[[TaskState, Generate], Awaitable[TaskState]]) -> Solver:
    """``solve``, counting each sample it finishes (failed or answered) in the run's progress
    (``m3kit.harness.progress``)."""

    async def counted(state: TaskState, generate: Generate) -> TaskState:
        state = await solve(state, generate)
        record = state.metadata.get(RECORD_KEY) or {}
        note_sample(failed=bool(record.get("failure")))
        return state

    return counted


def direct_solver(
    message: MessageBuilder,
    *,
    cache: bool = True,
    scope: Callable[[Question], Mapping[str, Any]] | None = None,
    failure: str = MEDIA_FAILURE,
) -> Solver:
    """Ask the model under evaluation ``message(state, question, record)`` in one user message.
    ``scope(question)``: what else shapes the answer (the frame policy...), for the response
    cache; ``cache``: the response cache on or off; ``failure``: how the failure reason of a
    sample whose message cannot be built (an ``M3kitError`` or ``OSError``) starts (unreadable
    media, ``MEDIA_FAILURE``, unless the benchmark says otherwise)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from inspect_ai.model import ChatMessageUser, get_model

        question = sample_question(state.metadata)
        record = SampleRecord()
        try:
            content, images = await message(state, question, record)
        except (M3kitError, OSError) as exc:
            return fail(state, record, f"{failure} {failure_reason(exc)}")
        except Exception as exc:
            if passes_through(exc):
                raise
            # a bug or a value no check caught (a date out of range...): this sample's
            # failure, never the run's (issue 23: one bad record never sinks the others)
            return fail(state, record, f"{INPUTS_FAILURE} {failure_reason(exc)}")
        state.messages = [ChatMessageUser(content=content)]
        key = cache_scope(get_model(), **dict(scope(question) if scope else {}))
        return await generate_answer(state, generate, record,
                                     cache=response_cache(cache, key), images=images)

    return _counted(solve)


def memory_solver(
    memory: Memory,
    *,
    events: Callable[[TaskState, Question, SampleRecord], Awaitable[list[MemoryEvent]]],
    prompt: Callable[[TaskState, Question], str],
    cache: bool = True,
    scope: Callable[[Question], Mapping[str, Any]] | None = None,
    media_errors: bool = True,
    extra: MemoryExtra | None = None,
) -> Solver:
    """The sample's memory key (``MEMORY_KEY`` in its metadata, else the question id) is
    ingested into ``memory`` once, from ``events(state, question, record)``; then ``memory``
    answers ``prompt(state, question)`` with the model under evaluation, retrieving with the
    bare question and seeing only what came before the question's time.

    ``media_errors``: an ``M3kitError`` or ``OSError`` while the events are made is unreadable
    media (``MEDIA_FAILURE``); otherwise every ingest error is a memory failure. ``extra``: the
    benchmark's own metadata entries, saved with the record: ``ingested`` false when the ingest
    failed, the memory's answer once it answered. ``scope``: as in ``direct_solver``.

    A streaming memory (``memory.replay == "stream"``, ``m3kit.memory.stream``) is fed as its
    questions are asked: the questions of one key in flight answer one at a time, earliest
    first (``harness.turns``), and each records the skips of the events its turn fed.
    """
    locks: dict[str, anyio.Lock] = {}

    async def ingest(key: str, state: TaskState, question: Question,
                     record: SampleRecord) -> None:
        # One lock per key: the first sample of a key makes the events and builds the index,
        # the others wait and find it built.
        async with locks.setdefault(key, anyio.Lock()):
            if memory.is_ingested(key):
                return
            stream = await events(state, question, record)
            await timed(record, "ingest", memory.ingest(key, stream))
            record.skipped = memory.skipped(key)  # once per key: by the sample that built it

    def entries(state: TaskState, question: Question, result: MemoryAnswer | None, *,
                ingested: bool = True) -> dict[str, Any]:
        if extra is None:
            return {}
        return dict(extra(state, question, result, ingested=ingested))

    turns = QuestionTurns()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        question = sample_question(state.metadata)
        key = str(state.metadata.get(MEMORY_KEY) or question.id)
        if memory.replay != "stream":
            return await solve_sample(state, question, key, None)
        # a streaming memory answers from the state it has reached: the key's questions in
        # flight take their turns earliest first (``harness.turns``), so none costs a replay
        async with turns.place(key, question.time) as ticket:
            return await solve_sample(state, question, key, ticket)

    async def solve_sample(state: TaskState, question: Question, key: str,
                           ticket: tuple[float, int] | None) -> TaskState:
        record = SampleRecord(memory=memory.name)
        try:
            await ingest(key, state, question, record)
        except (M3kitError, OSError) as exc:
            await stop_if_endpoint_down(exc)  # a refused connection is an OSError too
            failed = entries(state, question, None, ingested=False)
            if media_errors:
                return fail(state, record, f"{MEDIA_FAILURE} {failure_reason(exc)}", failed)
            return fail(state, record, f"memory ingest: {failure_reason(exc)}", failed)
        except Exception as exc:
            if passes_through(exc):
                raise
            await stop_if_endpoint_down(exc)
            return fail(state, record, f"memory ingest: {failure_reason(exc)}",
                        entries(state, question, None, ingested=False))
        from inspect_ai.model import get_model

        try:
            asked = prompt(state, question)
        except Exception as exc:
            if passes_through(exc):
                raise
            return fail(state, record, f"{INPUTS_FAILURE} {failure_reason(exc)}",
                        entries(state, question, None))
        key_scope = cache_scope(
            get_model(), memory={"name": memory.name, **memory.config()},
            **dict(scope(question) if scope else {}),
        )
        skips_before = 0
        if ticket is not None:
            await turns.wait(key, ticket)
            skips_before = len(memory.skipped(key))
        state, result = await answer_from_memory(
            state, record, memory, key, asked, query=question.text,
            time=question.time, cache=response_cache(cache, key_scope),
            extra=entries(state, question, None),
        )
        if ticket is not None:
            # a streaming memory stores events as the questions reach them: what it left out
            # is recorded by the sample whose advance fed those events
            record.skipped = memory.skipped(key)[skips_before:]
            save(state, record)
        if result is not None and extra is not None:
            save(state, record, entries(state, question, result))
        return state

    return _counted(solve)


def selected_frame_events(key: str, chosen: list[SelectedFrame]) -> list[MemoryEvent]:
    """The memory's stream for ``key`` from frames already selected and stored
    (``FrameSelector``): one ``frame`` event per frame, in time order.
    (``m3kit.memory.events.frame_events`` makes the same events from frame indices, reading the
    store itself.)"""
    from m3kit.memory.base import MemoryEvent

    ordered = sorted(chosen, key=lambda f: (f.time, f.index))
    return [
        MemoryEvent(
            id=f"{key}#{f.index}",
            kind="frame",
            time=f.time,
            media=ImageRef(path=f.path),
            metadata={"video": f.video, "index": f.index},
        )
        for f in ordered
    ]


async def source_frame_events(source: FrameSelector, key: str, state: TaskState,
                              question: Question, record: SampleRecord) -> list[MemoryEvent]:
    """Every frame the policy picks from the question's videos, before any cut (the memory
    cuts at answer time), as ``frame`` events for ``key``."""
    chosen = await timed(record, "frames", source.select(
        question, state.metadata.get(MEDIA_ROOT_KEY), causal=False))
    return selected_frame_events(key, chosen)
