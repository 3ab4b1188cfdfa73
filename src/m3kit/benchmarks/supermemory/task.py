"""The ``supermemory`` inspect task: SuperMemory-VQA questions answered directly, blind, or
through a memory of the person's whole timeline, every answer a ranking of the four options.

Task args (``-T``):

- ``data``: the SuperMemory-VQA folder (holding ``data/json/all_qa.json``, ``data/video/``,
  ``data/transcripts/``) or its ``data`` folder; required;
- ``frames``: frames of the question's session, uniform from its start to the question's
  moment (default 32, as Video-RAG's 32 frames in seed 003 §4.2); the session's transcript up
  to that moment goes with them as text;
- ``transcript_tokens``: the most that text may be, in estimated tokens (default
  ``DEFAULT_TRANSCRIPT_TOKENS``, 8000; ``m3kit.memory.context.estimated_tokens``): the lines
  heard last before the question that fit; what was cut is noted per sample
  (``TRANSCRIPT_META``) and the budget is on the card's ``settings``;
- ``blind``: the question and its options alone (the seed's Table 3);
- ``memory`` (``m3kit eval --memory``) and ``memory_config``: answer through a memory of
  ``m3kit.memory``; the memory key is the person, its events every session's frames (one every
  ``1/memory_fps`` s, default 0.1: one frame every 10 s) and transcript lines on one unix
  clock, and the memory sees only what came before the question (``Memory.visible``);
- ``memory_fps``: the memory's frame rate; ``max_side``, ``frame_store``, ``cache``: as in
  every m3kit task.

Generation is greedy (temperature 0) unless the command line says otherwise. A sample whose
inputs cannot be built (whatever the exception) fails alone, never the run (the harness's
solvers: ``INPUTS_FAILURE``).

The data is loaded once per task: every person's sessions, their transcripts read, are held
by the task's solver (``timeline.PersonTimelines``), and a sample names its person and session
by key (its question's ``subject``, ``SESSION_META``), never carrying them. What the loader
skipped on the way (records, transcript lines and files, sessions left off a timeline) is the
run's skip record (``SKIPPED_KEY``), each naming file, record and field.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from inspect_ai import Task, task
from inspect_ai.solver import solver

from m3kit.benchmarks.supermemory.load import (
    BENCHMARK_NAME,
    SuperMemorySet,
    data_files,
    load_supermemory,
    media_files,
)
from m3kit.benchmarks.supermemory.prompt import (
    DEFAULT_TRANSCRIPT_TOKENS,
    FRAMES_PREAMBLE,
    TRANSCRIPT_META,
    direct_text,
    memory_text,
    prompt_template,
    question_block,
)
from m3kit.benchmarks.supermemory.score import scoring_rules
from m3kit.benchmarks.supermemory.scorer import supermemory_answer
from m3kit.benchmarks.supermemory.timeline import (
    DEFAULT_MEMORY_FPS,
    PersonTimelines,
    RecentTranscript,
    person_events,
    recent_transcript,
    wall_clock,
)
from m3kit.errors import M3kitError
from m3kit.harness.card import data_fingerprint, frame_policy_card, task_card_metadata
from m3kit.harness.defaults import task_generate_config
from m3kit.harness.frames import FramePolicy, policy_fingerprint, selected_frame_images
from m3kit.harness.sample_state import resolve_memory, timed
from m3kit.harness.skips import warn_skipped
from m3kit.harness.solvers import FrameSelector, direct_solver, memory_solver
from m3kit.memory.context import TOKENS_PER_CHAR
from m3kit.schema import Question
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import (
    BLIND_KEY,
    FPS_KEY,
    FRAMES_KEY,
    MEDIA_ROOT_KEY,
    MEMORY_KEY,
    MEMORY_NAME_KEY,
    QUESTION_KEY,
    SKIPPED_KEY,
    SampleRecord,
)

if TYPE_CHECKING:
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import Content
    from inspect_ai.solver import Solver, TaskState

    from m3kit.memory.base import Memory, MemoryEvent

__all__ = [
    "DEFAULT_FRAMES",
    "SESSION_META",
    "TRANSCRIPT_META",
    "person_key",
    "supermemory",
    "supermemory_dataset",
    "supermemory_memory_solver",
    "supermemory_solver",
]

logger = logging.getLogger(__name__)

DEFAULT_FRAMES = 32  # Video-RAG's frames per question in seed 003 §4.2
SESSION_META = "supermemory_session"  # the question's session id (sample metadata)


class SuperMemoryTaskError(M3kitError, ValueError):
    """A ``supermemory`` task argument is invalid."""


def person_key(subject: int | str) -> str:
    """The memory key of a person: all of their sessions are one memory."""
    return f"person_{subject}"


def _subject(question: Question) -> int:
    return int(question.metadata["subject"])


def _to_sample(question: Question, data: SuperMemorySet) -> Sample:
    from inspect_ai.dataset import Sample

    return Sample(
        id=question.id,
        input=question_block(question),
        target=question.answer,
        metadata={
            QUESTION_KEY: question.model_dump(mode="json"),
            MEMORY_KEY: person_key(_subject(question)),
            MEDIA_ROOT_KEY: str(data.root) if data.root is not None else None,
            "skill": question.metadata.get("skill"),
            SESSION_META: question.metadata.get("primary_video_id"),
        },
    )


def supermemory_dataset(data: SuperMemorySet) -> MemoryDataset:
    """The loaded questions as inspect samples, in file order: each names its person and
    session by key (the sessions themselves are the task's, ``PersonTimelines``)."""
    from inspect_ai.dataset import MemoryDataset

    return MemoryDataset([_to_sample(q, data) for q in data.questions], name=BENCHMARK_NAME)


def _heard_by_question(timelines: PersonTimelines, state: TaskState, question: Question,
                       budget_tokens: int) -> RecentTranscript | None:
    """What the question session's transcript gives the prompt up to the question, within
    ``budget_tokens``; ``None`` when there is no session or moment to cut at."""
    session = timelines.session(_subject(question), str(state.metadata.get(SESSION_META)))
    if session is None or question.time is None:
        return None
    return recent_transcript(session, question.time, budget_tokens)


@solver
def supermemory_solver(
    timelines: PersonTimelines,
    frames: int = DEFAULT_FRAMES,
    blind: bool = False,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    transcript_tokens: int = DEFAULT_TRANSCRIPT_TOKENS,
) -> Solver:
    """The question session's frames and transcript up to the question's moment (the causal
    cut: ``select_frames`` and ``causal_cut``), the transcript's last lines within
    ``transcript_tokens``, then the question and the ranking request; blind: the question
    alone. ``timelines``: the task's sessions, where a sample finds its session by key."""
    import anyio

    policy = FramePolicy(policy="uniform", n=0 if blind else frames, max_side=max_side)
    source = FrameSelector(frame_store, policy=lambda _q: policy)
    warned: list[str] = []  # the first question whose transcript was cut: said once a run

    async def message(state: TaskState, question: Question,
                      record: SampleRecord) -> tuple[str | list[Content], int]:
        from inspect_ai.model import ContentText

        if blind:
            return direct_text(question, now=None, transcript="", blind=True), 0
        chosen = await timed(record, "frames",
                             source.select(question, state.metadata.get(MEDIA_ROOT_KEY)))
        images = await timed(record, "frames", selected_frame_images(chosen))
        record.frames = [f.path for f in chosen]
        record.frame_times = [f.time for f in chosen]
        heard = await anyio.to_thread.run_sync(
            lambda: _heard_by_question(timelines, state, question, int(transcript_tokens)))
        if heard is not None:
            state.metadata[TRANSCRIPT_META] = heard.model_dump(exclude={"text"})
            if heard.cut and not warned:
                warned.append(question.id)
                logger.warning(
                    "SuperMemory-VQA: question %s: %d of the %d transcript lines heard by its "
                    "moment left out to keep within %d tokens (-T transcript_tokens); each "
                    "sample's metadata %s says what was cut", question.id, heard.cut,
                    heard.heard, heard.budget, TRANSCRIPT_META)
        now = wall_clock(question.time) if question.time is not None else None
        text = direct_text(question, now=now, transcript=heard.text if heard else "",
                           blind=False)
        if not images:
            return text, 0
        intro = FRAMES_PREAMBLE.format(n=len(images),
                                       session=state.metadata.get(SESSION_META))
        return [ContentText(text=intro), *images, ContentText(text=text)], len(images)

    return direct_solver(message, cache=cache,
                         scope=lambda _q: {"frames": policy_fingerprint(policy)})


@solver
def supermemory_memory_solver(
    timelines: PersonTimelines,
    memory: str | Memory,
    memory_config: dict[str, Any] | None = None,
    memory_fps: float = DEFAULT_MEMORY_FPS,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
) -> Solver:
    """The person's whole timeline goes into ``memory`` once per person (frames of every
    session at ``memory_fps``, transcript lines); the memory answers with the model under
    evaluation from what was recorded up to the question's moment. ``timelines``: the task's
    sessions, where a sample finds its person's by key."""
    import anyio

    mem = resolve_memory(memory, memory_config, none_hint="leave out --memory",
                         error=SuperMemoryTaskError)
    policy = FramePolicy(policy="fps", fps=memory_fps, n=1, max_side=max_side)
    source = FrameSelector(frame_store, policy=lambda _q: policy)

    async def events(_state: TaskState, question: Question,
                     record: SampleRecord) -> list[MemoryEvent]:
        # the transcripts were read at load (their skips are the run's skip record)
        return await timed(record, "frames", anyio.to_thread.run_sync(
            lambda: person_events(source.store(), timelines.root,
                                  timelines.person(_subject(question)), policy)))

    def prompt(_state: TaskState, question: Question) -> str:
        return memory_text(question, now=wall_clock(question.time)
                           if question.time is not None else None)

    return memory_solver(mem, events=events, prompt=prompt, cache=cache,
                         scope=lambda _q: {"frames": policy_fingerprint(policy)})


@task
def supermemory(
    data: str | None = None,
    frames: int = DEFAULT_FRAMES,
    blind: bool = False,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    memory_fps: float = DEFAULT_MEMORY_FPS,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    transcript_tokens: int = DEFAULT_TRANSCRIPT_TOKENS,
) -> Task:
    """SuperMemory-VQA: rank four options about a person's days, from uniform frames (``frames``)
    of the question's session and its transcript up to the question, its last lines within
    ``transcript_tokens`` (``blind``: neither; ``memory``: the person's timeline, frames at
    ``memory_fps``, cut at the question)."""
    if not data:
        raise SuperMemoryTaskError("give the SuperMemory-VQA folder: -T data=PATH",
                                   field="data")
    if int(frames) < 0:
        raise SuperMemoryTaskError(f"frames must be >= 0, got {frames}", field="frames")
    if not float(memory_fps) > 0:
        raise SuperMemoryTaskError(f"memory_fps must be > 0, got {memory_fps}",
                                   field="memory_fps")
    transcript_tokens = _budget(transcript_tokens)
    loaded = load_supermemory(data)
    warn_skipped(logger, "SuperMemory-VQA", loaded.skipped)
    if not loaded.questions:
        raise SuperMemoryTaskError("no usable question", path=loaded.qa_file)
    if loaded.root is None:
        raise SuperMemoryTaskError("give the folder holding data/json/all_qa.json (the JSON "
                                   "alone is enough for m3kit score, not for a run)",
                                   path=data, field="data")
    timelines = PersonTimelines.of(loaded)  # the task's: every sample refers to it by key
    uses_memory = memory is not None and memory != "none"
    if uses_memory and blind:
        raise SuperMemoryTaskError("a blind run shows no recording, so it takes no memory",
                                   field="memory")
    if uses_memory:
        assert memory is not None
        chosen = supermemory_memory_solver(timelines, memory, memory_config=memory_config,
                                           memory_fps=float(memory_fps), max_side=max_side,
                                           frame_store=frame_store, cache=cache)
    else:
        chosen = supermemory_solver(timelines, frames=int(frames), blind=bool(blind),
                                    max_side=max_side, frame_store=frame_store, cache=cache,
                                    transcript_tokens=transcript_tokens)
    no_frames = bool(blind) or uses_memory
    card = ReproCard.with_prompt(
        prompt_template(blind=bool(blind), memory=uses_memory),
        benchmark=BENCHMARK_NAME, task="supermemory",
        frames=(frame_policy_card(None, float(memory_fps), max_side) if uses_memory
                else frame_policy_card(int(frames), None, max_side, blind=bool(blind))),
        blind=bool(blind),
        memory=memory if uses_memory else None,
        memory_config=dict(memory_config) if uses_memory and memory_config else None,
        data_fingerprint=data_fingerprint(data_files(data), media_files(loaded)),
        scoring=scoring_rules(),
        # the direct prompt's transcript: its budget and how tokens are estimated
        settings=({} if no_frames else {"transcript_tokens": transcript_tokens,
                                        "tokens_per_char": TOKENS_PER_CHAR}),
    )
    return Task(
        dataset=supermemory_dataset(loaded),
        solver=chosen,
        scorer=supermemory_answer(),
        config=task_generate_config().merge(_greedy()),
        metadata={
            MEMORY_NAME_KEY: memory if uses_memory else None,
            BLIND_KEY: bool(blind),
            FRAMES_KEY: (f"{memory_fps:g} fps" if uses_memory
                         else 0 if no_frames else int(frames)),
            FPS_KEY: float(memory_fps) if uses_memory else None,
            SKIPPED_KEY: [str(e) for e in loaded.skipped],
            **task_card_metadata(card),
        },
    )


def _budget(value: Any) -> int:
    """``transcript_tokens`` as a whole number >= 0 (``-T`` may give it as text)."""
    try:
        number = int(str(value).strip()) if not isinstance(value, bool | float) else None
    except ValueError:
        number = None
    if isinstance(value, float) and value.is_integer():
        number = int(value)
    if number is None or number < 0:
        raise SuperMemoryTaskError(f"transcript_tokens must be a whole number >= 0, got "
                                   f"{value!r}", field="transcript_tokens")
    return number


def _greedy() -> Any:
    from inspect_ai.model import GenerateConfig

    return GenerateConfig(temperature=0.0)
