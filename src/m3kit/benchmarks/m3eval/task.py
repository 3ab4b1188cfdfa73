"""M3Eval as inspect tasks: the released benchmark (``inspect eval m3kit/m3eval_nback``) and
the synthetic suite (``inspect eval m3kit/synth_nback``), with M3Eval's frame policy, its
prompt, its dataset and its two registered solvers.

Released tasks: one per paradigm, plus the two repetition probes of Fig. 8:
``m3eval_interference`` asks the proactive and retroactive questions,
``m3eval_interference_repeat_target`` ([V1, V1, V2]) and
``m3eval_interference_repeat_interferer`` ([V1, V2, V2]) the repetition ones. Each takes:

- ``data``: the released folder (default ``$M3KIT_M3EVAL_DATA``), ``review``: a review file
  (only ``accepted`` questions are asked; ``<data>/review/review.csv`` is used when present),
- ``frames`` (default 96 uniform, 144 for repetition, 8 per clip for N-Back; 0 for none),
  ``fps`` (0.5 for models that take video; ``frames`` then caps the count), ``max_side``,
  ``frame_store``, ``memory`` / ``memory_config``, ``cache``, ``blind`` (no frames at all).

Synthetic tasks (``synth_*``) take the same options, with ``suite`` instead of ``data``: a
synthetic suite folder, or any folder with a ``questions.jsonl`` (default: the small synthetic
suite, built once into m3kit's cache directory). ``blind`` runs record ``m3kit_blind`` in the
task metadata, so reports label the run ``<model> (blind)``.

Each ``@task`` function is only its signature (what inspect shows and validates ``-T`` args
against) and hands its arguments unchanged to ``released_task`` / ``_synth`` (``**locals()``).
Records the loader skipped are logged as one warning; samples whose video cannot be read are
excluded at run time and counted (``excluded_count``).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspect_ai import Task, task
from inspect_ai.solver import solver

from m3kit.benchmarks.m3eval.item import group_labels
from m3kit.benchmarks.m3eval.load import data_files, load_m3eval, media_files, memory_key
from m3kit.benchmarks.m3eval.prompt import (
    answer_format,
    build_prompt,
    frames_preamble,
    prompt_template,
)
from m3kit.benchmarks.m3eval.score import scoring_rules
from m3kit.benchmarks.m3eval.scorer import m3eval_answer
from m3kit.errors import M3kitError
from m3kit.harness.card import data_fingerprint, frame_policy_card, task_card_metadata
from m3kit.harness.defaults import task_generate_config
from m3kit.harness.frames import DEFAULT_FRAMES, FramePolicy, policy_fingerprint
from m3kit.harness.sample_state import resolve_memory
from m3kit.harness.skips import warn_skipped
from m3kit.harness.solvers import (
    FrameSelector,
    direct_solver,
    frames_message,
    memory_solver,
    source_frame_events,
)
from m3kit.paths import cache_dir
from m3kit.schema import Question, read_jsonl_lenient
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import (
    BENCHMARK_KEY,
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

logger = logging.getLogger(__name__)

DATA_ENV = "M3KIT_M3EVAL_DATA"
# Task → (paradigm, conditions asked; None for every condition).
_SELECTIONS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "m3eval_divided_attention": ("divided_attention", None),
    "m3eval_interference": ("interference", ("proactive", "retroactive")),
    "m3eval_interference_repeat_target": ("interference", ("repeat_target",)),
    "m3eval_interference_repeat_interferer": ("interference", ("repeat_interferer",)),
    "m3eval_interleaved": ("interleaved", None),
    "m3eval_nback": ("nback", None),
}

SYNTH_TASKS = ("synth_divided_attention", "synth_interference", "synth_interleaved",
               "synth_nback")
# Every task this module registers (the benchmark's declaration lists the same names).
TASKS = (*_SELECTIONS, *SYNTH_TASKS)

# The released task names are the table keys (one list, so a new task cannot be left out).
__all__ = [
    "DATA_ENV", "DEFAULT_FRAMES", "NBACK_FRAMES_PER_CLIP", "PARADIGMS", "REPETITION_FRAMES",
    "SYNTH_TASKS", "TASKS", "SuiteError", "direct_answer", "frame_policy_for",
    "load_suite_questions", "load_suite_with_skips", "m3eval_task", "memory_answer",
    "memory_key", "question_to_sample", "questions_dataset", "released_task",
    *_SELECTIONS, *SYNTH_TASKS,
]

QUESTIONS_FILE = "questions.jsonl"
SUITE_MANIFEST = "suite.json"
# Spellings of each M3Eval paradigm accepted in ``metadata["paradigm"]`` (compared lowercased,
# without separators).
PARADIGMS: dict[str, tuple[str, ...]] = {
    "divided_attention": ("dividedattention", "divided"),
    "interference": ("interference", "memoryinterference"),
    "interleaved": ("interleaved", "interleavedevents"),
    "nback": ("nback",),
}

# M3Eval shows a model 96 ``uniform`` frames of the probe video (``DEFAULT_FRAMES``: every model
# but Gemini), 144 for the repetition probes ([V1, V1, V2] and [V1, V2, V2]), 8 frames per clip
# for N-Back, and 0.5 fps to models that take video (Appendix D).
NBACK_FRAMES_PER_CLIP = 8  # N-Back experiments (Sec. 4.4)
REPETITION_FRAMES = 144  # repeated-trial experiments (Fig. 8): three videos, not two
REPETITION_CONDITIONS = frozenset({"repeat_target", "repeat_interferer"})


class M3EvalDataError(M3kitError):
    """The released data cannot be found or holds no question for the task."""


class SuiteError(M3kitError):
    """A question suite cannot be found, built or read."""


# -- frames ---------------------------------------------------------------------------------


def is_nback(question: Question) -> bool:
    paradigm = str(question.metadata.get("paradigm", "")).replace("-", "").replace("_", "")
    return paradigm.lower() == "nback" or (question.question_type or "").lower() == "nback"


def is_repetition(question: Question) -> bool:
    return str(question.metadata.get("condition", "")) in REPETITION_CONDITIONS


def frame_policy_for(
    question: Question,
    n: int | None = None,
    *,
    max_side: int | None = None,
    fps: float | None = None,
) -> FramePolicy:
    """M3Eval's policy for ``question``: 96 uniform frames, 144 for a repetition probe, or 8 per
    clip for N-Back; ``n`` overrides the count (per clip for N-Back). With ``fps`` (0.5 for
    models that take video), one frame every ``1/fps`` seconds instead, ``n`` then capping the
    count; ``n = 0`` still sends no frames."""
    nback = is_nback(question)
    if fps is not None:
        if n == 0:
            return FramePolicy(n=0, per_clip=nback, max_side=max_side)
        return FramePolicy(policy="fps", fps=fps, max_frames=n, per_clip=nback,
                           max_side=max_side)
    if nback:
        count = NBACK_FRAMES_PER_CLIP if n is None else n
        return FramePolicy(n=count, per_clip=True, max_side=max_side)
    default = REPETITION_FRAMES if is_repetition(question) else DEFAULT_FRAMES
    return FramePolicy(n=default if n is None else n, max_side=max_side)


def _frame_source(frame_store: str | None, frames: int | None, max_side: int | None,
                  fps: float | None) -> FrameSelector:
    return FrameSelector(frame_store, policy=lambda q: frame_policy_for(q, frames,
                                                                      max_side=max_side, fps=fps))


# -- dataset --------------------------------------------------------------------------------


def question_to_sample(question: Question, *, root: str | Path | None = None) -> Sample:
    """One inspect ``Sample`` for ``question``: the whole ``Question`` rides in its metadata
    (the solver and the scorer read it back, so a log is self-describing), with its memory key,
    where its relative media paths resolve (``root``) and flat group labels for tables. Its
    input is the text prompt; the solver puts the frames in front of it at run time, so
    building a dataset decodes nothing."""
    from inspect_ai.dataset import Sample

    return Sample(
        id=question.id,
        input=build_prompt(question),
        target=question.answer,
        metadata={
            QUESTION_KEY: question.model_dump(mode="json"),
            MEMORY_KEY: memory_key(question),
            MEDIA_ROOT_KEY: str(root) if root is not None else None,
            "answer_format": answer_format(question),
            **group_labels(question),
        },
    )


def questions_dataset(
    questions: Iterable[Question], *, name: str, root: str | Path | None = None
) -> MemoryDataset:
    """A dataset of ``questions`` in their order."""
    from inspect_ai.dataset import MemoryDataset

    return MemoryDataset([question_to_sample(q, root=root) for q in questions], name=name)


# -- solvers --------------------------------------------------------------------------------


@solver
def direct_answer(
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
) -> Solver:
    """Frames as images, then the M3Eval prompt, to the model under evaluation.

    ``frames``: frames per video (per clip for N-Back; default 96, 144 for repetition probes,
    8 for N-Back; 0 for none), ``fps``: sample at this rate instead (``frames`` then caps the
    count), ``max_side``: shrink frames to fit, ``frame_store``: the frame store directory,
    ``cache``: the response cache.
    """
    source = _frame_source(frame_store, frames, max_side, fps)

    async def message(state: TaskState, question: Question,
                      record: SampleRecord) -> tuple[str | list[Content], int]:
        return await frames_message(source, state, question, record,
                                    preamble=frames_preamble, prompt=build_prompt(question))

    return direct_solver(message, cache=cache,
                         scope=lambda q: {"frames": policy_fingerprint(source.policy(q))})


@solver
def memory_answer(
    memory: str | Memory,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
) -> Solver:
    """The question's video goes into ``memory`` (a name for ``make_memory`` with
    ``memory_config``, or a ``Memory``) once per memory key; then the memory answers the M3Eval
    prompt with the model under evaluation, seeing only what came before the question's time."""
    mem = resolve_memory(memory, memory_config, none_hint="use direct_answer")
    source = _frame_source(frame_store, frames, max_side, fps)

    async def events(state: TaskState, question: Question,
                     record: SampleRecord) -> list[MemoryEvent]:
        key = str(state.metadata.get(MEMORY_KEY) or question.id)
        return await source_frame_events(source, key, state, question, record)

    # the memory retrieves with the bare question; the model still gets the whole prompt
    return memory_solver(mem, events=events, prompt=lambda _state, q: build_prompt(q),
                         cache=cache,
                         scope=lambda q: {"frames": policy_fingerprint(source.policy(q))})


# -- tasks ----------------------------------------------------------------------------------


def m3eval_task(
    questions: Sequence[Question],
    *,
    name: str,
    root: str | Path | None = None,
    memory: str | Memory | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
    blind: bool = False,
    metadata: dict[str, Any] | None = None,
    question_files: Sequence[Path] = (),
    data_media: Sequence[Path] | None = None,
) -> Task:
    """An inspect task asking ``questions`` (media paths relative to ``root``), scored with
    M3Eval's strict parsing; through ``memory`` (a name for ``make_memory`` with
    ``memory_config``, or a ``Memory``) when given. ``blind``: no frames (and no memory: a
    memory of nothing is not a memory baseline). ``question_files``: the files the questions
    were read from, and ``data_media`` the media files of the data set they were loaded from
    (``None``: those ``questions`` read): the reproducibility card's data fingerprint, none for
    questions built in code."""
    uses_memory = memory is not None and memory != "none"
    if blind:
        if uses_memory:
            raise M3kitError("a blind run sends no frames, so it takes no memory", field="memory")
        frames, fps = 0, None
    if uses_memory:
        assert memory is not None
        chosen = memory_answer(
            memory, memory_config=memory_config, frames=frames, max_side=max_side,
            frame_store=frame_store, cache=cache, fps=fps,
        )
    else:
        chosen = direct_answer(
            frames=frames, max_side=max_side, frame_store=frame_store, cache=cache, fps=fps,
        )
    memory_name = memory if isinstance(memory, str) or memory is None else memory.name
    card = ReproCard.with_prompt(
        prompt_template(), benchmark="m3eval", task=name,
        frames=frame_policy_card(frames, fps, max_side, blind=blind,
                                 default=f"{DEFAULT_FRAMES}, {REPETITION_FRAMES} for repetition, "
                                         f"{NBACK_FRAMES_PER_CLIP} per N-Back clip"),
        blind=blind, memory=memory_name if uses_memory else None,
        memory_config=dict(memory_config) if uses_memory and memory_config else None,
        data_fingerprint=data_fingerprint(
            question_files, media_files(questions, root or ".") if data_media is None
            else data_media),
        scoring=scoring_rules(),
    )
    return Task(
        dataset=questions_dataset(questions, name=name, root=root),
        solver=chosen,
        scorer=m3eval_answer(),
        config=task_generate_config(),
        metadata={
            MEMORY_NAME_KEY: memory if isinstance(memory, str) or memory is None
            else memory.name,
            FRAMES_KEY: frames,
            FPS_KEY: fps,
            BLIND_KEY: blind,
            BENCHMARK_KEY: "m3eval",
            **task_card_metadata(card),
            **(metadata or {}),
        },
    )


def _paradigm_key(value: Any) -> str:
    return re.sub(r"[^a-z]", "", str(value).lower())


def load_suite_questions(suite: str | Path | None, paradigm: str | None = None) -> tuple[
    list[Question], Path
]:
    """The questions of ``suite`` and their media root (``load_suite_with_skips`` without the
    skipped records)."""
    questions, root, _ = load_suite_with_skips(suite, paradigm)
    return questions, root


def load_suite_with_skips(suite: str | Path | None, paradigm: str | None = None) -> tuple[
    list[Question], Path, list[str]
]:
    """The questions of ``suite`` (only ``paradigm``'s when given) and the directory relative
    media paths resolve against.

    ``suite`` is a synthetic suite folder (``suite.json``, read by ``m3kit.synth.load_suite``) or
    any folder with a ``questions.jsonl`` (bad records are skipped with a warning naming each);
    ``None`` builds the small synthetic suite once into m3kit's cache and reuses it.
    """
    skipped: list[str] = []
    if suite is None:
        from m3kit.synth import build_suite

        built = build_suite(cache_dir() / "synth" / "small")
        questions, root = list(built.questions), built.root
    else:
        root = Path(suite)
        if (root / SUITE_MANIFEST).is_file():
            from m3kit.synth import load_suite

            questions = list(load_suite(root).questions)
        else:
            path = root / QUESTIONS_FILE if root.is_dir() else root
            if not path.is_file():
                raise SuiteError(f"no {SUITE_MANIFEST} or {QUESTIONS_FILE} here", path=root)
            questions, errors = read_jsonl_lenient(path, Question)
            warn_skipped(logger, str(path), errors)
            skipped = [str(e) for e in errors]
            root = path.parent
    if paradigm is not None:
        names = PARADIGMS[paradigm]
        questions = [q for q in questions
                     if _paradigm_key(q.metadata.get("paradigm", "")) in names]
        if not questions:
            raise SuiteError(f"the suite has no {paradigm} questions", path=root)
    return questions, root, skipped


def released_task(
    name: str,
    data: str | None = None,
    *,
    review: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    fps: float | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    blind: bool = False,
) -> Task:
    """The task ``name`` (a key of the task table) over the released folder ``data``."""
    paradigm, conditions = _SELECTIONS[name]
    root = data or os.environ.get(DATA_ENV)
    if not root:
        raise M3EvalDataError(f"no data: pass -T data=FOLDER or set ${DATA_ENV}", field="data")
    loaded = load_m3eval(root, review=Path(review) if review else None)
    warn_skipped(logger, "M3Eval", loaded.skipped)
    questions = [q for q in loaded.select(paradigm)
                 if conditions is None or q.metadata.get("condition") in conditions]
    if not questions:
        asked = f" ({', '.join(conditions)})" if conditions else ""
        raise M3EvalDataError(f"no {paradigm}{asked} questions here", path=root, field="data")
    return m3eval_task(
        questions, name=name, root=loaded.root, memory=memory, memory_config=memory_config,
        frames=frames, fps=fps, max_side=max_side, frame_store=frame_store, cache=cache,
        blind=blind,
        metadata={BENCHMARK_KEY: "m3eval",
                  SKIPPED_KEY: [str(s) for s in loaded.skipped]},
        question_files=data_files(root, review),
        data_media=media_files(loaded.questions, loaded.root),
    )


@task
def m3eval_divided_attention(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """Divided attention: split-screen probes without and with 10 left/right swaps."""
    return released_task("m3eval_divided_attention", **locals())


@task
def m3eval_interference(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """Memory interference: [V1, V2] (retroactive) and [V2, V1] (proactive), questions on V1."""
    return released_task("m3eval_interference", **locals())


@task
def m3eval_interference_repeat_target(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """Repetition of the target: [V1, V1, V2], questions on V1 (144 frames)."""
    return released_task("m3eval_interference_repeat_target", **locals())


@task
def m3eval_interference_repeat_interferer(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """Repetition of the interferer: [V1, V2, V2], questions on V1 (144 frames)."""
    return released_task("m3eval_interference_repeat_interferer", **locals())


@task
def m3eval_interleaved(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """Interleaved events: A1 B1 A2 B2 ... A10 B10, storylines, source memory, false memory."""
    return released_task("m3eval_interleaved", **locals())


@task
def m3eval_nback(
    data: str | None = None, review: str | None = None, memory: str | None = None,
    memory_config: dict[str, Any] | None = None, frames: int | None = None,
    fps: float | None = None, max_side: int | None = None, frame_store: str | None = None,
    cache: bool = True, blind: bool = False,
) -> Task:
    """N-Back: does the last of K clips match the clip N before it (8 frames per clip)?"""
    return released_task("m3eval_nback", **locals())


# -- the synthetic suite ----------------------------------------------------------------------


def _synth(paradigm: str, options: dict[str, Any]) -> Task:
    """The synthetic suite's ``paradigm`` questions as a task; ``options`` are the task's own
    arguments (``suite`` and those of ``m3eval_task``)."""
    options = dict(options)
    suite = options.pop("suite")
    questions, root, skipped = load_suite_with_skips(suite, paradigm)
    # the loader's skips travel with the log (``m3kit eval`` prints them after the run)
    return m3eval_task(questions, name=f"synth_{paradigm}", root=root,
                       metadata={SKIPPED_KEY: skipped},
                       question_files=[suite_questions_file(suite, root)], **options)


def suite_questions_file(suite: str | Path | None, root: Path) -> Path:
    """The question file of a suite (the reproducibility card's data fingerprint): the
    ``questions.jsonl`` of the suite folder (``root`` when the default suite was built), or
    the file given."""
    if suite is None or Path(suite).is_dir():
        return (Path(suite) if suite is not None else root) / QUESTIONS_FILE
    return Path(suite)


@task
def synth_divided_attention(
    suite: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
    blind: bool = False,
) -> Task:
    """Divided attention: two videos side by side, questions about one of them."""
    return _synth("divided_attention", locals())


@task
def synth_interference(
    suite: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
    blind: bool = False,
) -> Task:
    """Memory interference: two similar videos in sequence, questions about one of them."""
    return _synth("interference", locals())


@task
def synth_interleaved(
    suite: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
    blind: bool = False,
) -> Task:
    """Interleaved events: segments of two storylines alternate."""
    return _synth("interleaved", locals())


@task
def synth_nback(
    suite: str | None = None,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
    frames: int | None = None,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    fps: float | None = None,
    blind: bool = False,
) -> Task:
    """N-Back: does the last clip match the clip N positions earlier? (8 frames per clip)."""
    return _synth("nback", locals())
