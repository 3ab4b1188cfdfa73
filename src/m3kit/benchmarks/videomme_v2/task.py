"""The ``videomme_v2`` inspect task: released questions, frames, optional subtitles, and the
official answer extraction, with the grouped non-linear score as the task's metric.

Task args (``-T``):

- ``data``: the Video-MME-v2 folder (``test.parquet`` / ``.jsonl`` / ``.tsv``, ``videos/``,
  ``subtitles/``) or its table file; required;
- ``subtitles``: ``none`` (default), ``concat`` (all subtitle text in one block after the frames)
  or ``interleave`` (sentences placed after the frame whose interval they overlap);
- ``frames``: frames per video by the ``uniform_inner`` policy (default 64), or ``fps``: a rate
  instead (one frame per ``1/fps`` s);
- ``reasoning``: ask for reasoning ending in ``Final Answer: <letter>`` instead of the letter;
- ``blind``: no frames and no subtitles, the same questions (what language priors alone answer);
- ``memory`` (``m3kit eval --memory``) and ``memory_config``: answer through a memory of
  ``m3kit.memory``: each video's frames (and its subtitle sentences, under ``concat`` or
  ``interleave``) are ingested once as events under the video's id, and the memory answers each
  of its questions;
- ``max_side``, ``frame_store``, ``cache``: as in every m3kit task.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from inspect_ai import Task, task
from inspect_ai.solver import solver

from m3kit.benchmarks.videomme_v2.item import GROUP_META, group_fields
from m3kit.benchmarks.videomme_v2.load import (
    BENCHMARK_NAME,
    VideoMMEv2Set,
    data_files,
    load_videomme_v2,
    media_files,
    subtitle_path,
)
from m3kit.benchmarks.videomme_v2.prompt import (
    SubtitleMode,
    preamble,
    prompt_template,
    question_text,
)
from m3kit.benchmarks.videomme_v2.score import scoring_rules
from m3kit.benchmarks.videomme_v2.scorer import videomme_v2_answer
from m3kit.benchmarks.videomme_v2.subtitles import (
    SubtitleSegment,
    concat_subtitles,
    group_sentences,
    interleave,
    read_subtitles,
    segment_line,
)
from m3kit.errors import M3kitError
from m3kit.harness.card import data_fingerprint, frame_policy_card, task_card_metadata
from m3kit.harness.defaults import task_generate_config
from m3kit.harness.frames import (
    FramePolicy,
    SelectedFrame,
    policy_fingerprint,
    selected_frame_images,
)
from m3kit.harness.sample_state import resolve_memory, timed
from m3kit.harness.skips import warn_skipped
from m3kit.harness.solvers import (
    FrameSelector,
    direct_solver,
    memory_solver,
    source_frame_events,
)
from m3kit.schema import Question
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import (
    BLIND_KEY,
    FRAMES_KEY,
    MEDIA_ROOT_KEY,
    MEMORY_KEY,
    MEMORY_NAME_KEY,
    QUESTION_KEY,
    REASONING_KEY,
    SKIPPED_KEY,
    SUBTITLES_KEY,
    SampleRecord,
)

if TYPE_CHECKING:
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import Content
    from inspect_ai.solver import Solver, TaskState

    from m3kit.memory.base import Memory, MemoryEvent

__all__ = [
    "DEFAULT_FRAMES",
    "SUBTITLE_MODES",
    "subtitle_events",
    "videomme_v2",
    "videomme_v2_dataset",
    "videomme_v2_memory_solver",
    "videomme_v2_solver",
]

logger = logging.getLogger(__name__)

DEFAULT_FRAMES = 64  # the released evaluation's default (--nframe 64), uniform_inner
SUBTITLE_MODES: tuple[str, ...] = ("none", "concat", "interleave")


class VideoMMEv2TaskError(M3kitError, ValueError):
    """A ``videomme_v2`` task argument is invalid."""


def _subtitle_mode(value: Any) -> SubtitleMode:
    if value is True:
        return "concat"
    if value in (None, False):
        return "none"
    mode = str(value).strip().lower()
    if mode not in SUBTITLE_MODES:
        raise VideoMMEv2TaskError(f"subtitles must be one of {', '.join(SUBTITLE_MODES)}, "
                                  f"got {value!r}", field="subtitles")
    return cast(SubtitleMode, mode)  # checked against SUBTITLE_MODES above


def _to_sample(question: Question, root: Path, mode: SubtitleMode, reasoning: bool) -> Sample:
    from inspect_ai.dataset import Sample

    return Sample(
        id=question.id,
        input=question_text(question, reasoning=reasoning),
        target=question.answer,
        metadata={
            QUESTION_KEY: question.model_dump(mode="json"),
            MEMORY_KEY: question.metadata.get("video_id", question.id),
            MEDIA_ROOT_KEY: str(root),
            "question_type": question.question_type,
            "condition": f"subtitles={mode}",
            GROUP_META: group_fields(question).model_dump(mode="json"),
        },
    )


def videomme_v2_dataset(data: VideoMMEv2Set, *, subtitles: SubtitleMode = "none",
                        reasoning: bool = False) -> MemoryDataset:
    """The loaded questions as inspect samples, group by group."""
    from inspect_ai.dataset import MemoryDataset

    return MemoryDataset(
        [_to_sample(q, data.root, subtitles, reasoning) for q in data.questions],
        name=BENCHMARK_NAME,
    )


def _duration(times: Any) -> float:
    """The video's length as the released script takes it (frame count / average rate)."""
    n = len(times)
    if n < 2 or float(times[-1]) <= 0:
        return float(times[-1]) if n else 0.0
    return n * float(times[-1]) / (n - 1)


def _select(source: FrameSelector, question: Question, policy: FramePolicy,
            root: str | None) -> tuple[list[SelectedFrame], float]:
    from m3kit.harness.frames import select_frames

    chosen = select_frames(source.store(), question, policy, root=root, causal=False)
    if not chosen:
        return chosen, _duration([])
    return chosen, _duration(source.store().index_for(chosen[0].video).times)


def _policy(frames: int, fps: float | None, blind: bool, max_side: int | None) -> FramePolicy:
    if fps is not None:
        return FramePolicy(policy="fps", fps=fps, n=0 if blind else DEFAULT_FRAMES,
                           max_side=max_side)
    return FramePolicy(policy="uniform_inner", n=0 if blind else frames, max_side=max_side)


def _subtitles(question: Question, root: str | None) -> list[SubtitleSegment]:
    video_id = str(question.metadata.get("video_id", question.id))
    return read_subtitles(subtitle_path(root or ".", video_id))


@solver
def videomme_v2_solver(
    subtitles: str = "none",
    frames: int = DEFAULT_FRAMES,
    fps: float | None = None,
    reasoning: bool = False,
    blind: bool = False,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
) -> Solver:
    """Frames (and subtitles, concatenated or interleaved) then the Video-MME-v2 question, to
    the model under evaluation; blind: the question alone."""
    mode = _subtitle_mode(subtitles)
    policy = _policy(frames, fps, blind, max_side)
    source = FrameSelector(frame_store, policy=lambda _q: policy)

    async def message(state: TaskState, question: Question,
                      record: SampleRecord) -> tuple[str | list[Content], int]:
        import anyio
        from inspect_ai.model import ContentText

        root = state.metadata.get(MEDIA_ROOT_KEY)
        chosen: list[SelectedFrame] = []
        duration = 0.0
        words: list[SubtitleSegment] = []
        if not blind and policy.n > 0:
            chosen, duration = await timed(record, "frames", anyio.to_thread.run_sync(
                lambda: _select(source, question, policy, root)
            ))
        if not blind and mode != "none":
            words = _subtitles(question, root)
        images = await timed(record, "frames", selected_frame_images(chosen))
        record.frames = [f.path for f in chosen]
        record.frame_times = [f.time for f in chosen]
        text = question_text(question, reasoning=reasoning)
        if mode == "interleave" and images:
            content: list[Content] = []
            between = interleave([f.time for f in chosen], duration, group_sentences(words))
            for image, lines in zip(images, between, strict=True):
                content.append(image)
                content += [ContentText(text=segment_line(s)) for s in lines]
            content += [ContentText(text=preamble(mode)), ContentText(text=text)]
            return content, len(images)
        # without frames the interleaved condition has nothing to interleave: its sentences
        # would have no frame to follow, so the whole text is given as in ``concat``
        shown = "concat" if mode == "interleave" else mode
        intro = preamble(shown, concat_subtitles(words), blind=blind, frames=bool(images))
        if images:
            return [*images, ContentText(text=intro), ContentText(text=text)], len(images)
        # plain text: text-only chat templates join content parts as a string
        return f"{intro}\n{text}", 0

    return direct_solver(message, cache=cache,
                         scope=lambda _q: {"frames": policy_fingerprint(policy)})


def subtitle_events(key: str, segments: list[SubtitleSegment]) -> list[MemoryEvent]:
    """The memory's text stream for ``key``: one ``text`` event per subtitle sentence, at its
    start on the video's clock."""
    from m3kit.memory.base import MemoryEvent

    return [
        MemoryEvent(id=f"{key}#sub{i}", kind="text", time=s.start_time,
                    text=s.text, metadata={"end": s.end_time})
        for i, s in enumerate(segments)
    ]


@solver
def videomme_v2_memory_solver(
    memory: str | Memory,
    memory_config: dict[str, Any] | None = None,
    subtitles: str = "none",
    frames: int = DEFAULT_FRAMES,
    fps: float | None = None,
    reasoning: bool = False,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
) -> Solver:
    """The group's video goes into ``memory`` once per video (memory key = ``video_id``): its
    frames by the task's frame policy, and its subtitle sentences as text events when the
    subtitle mode gives them; then the memory answers the Video-MME-v2 question with the model
    under evaluation, seeing only what came before the question's time."""
    mode = _subtitle_mode(subtitles)
    mem = resolve_memory(memory, memory_config, none_hint="leave out --memory",
                         error=VideoMMEv2TaskError)
    policy = _policy(frames, fps, False, max_side)
    source = FrameSelector(frame_store, policy=lambda _q: policy)

    async def events(state: TaskState, question: Question,
                     record: SampleRecord) -> list[MemoryEvent]:
        from m3kit.memory.events import merge_events

        key = str(state.metadata.get(MEMORY_KEY) or question.id)
        stream = await source_frame_events(source, key, state, question, record)
        if mode == "none":
            return stream
        words = _subtitles(question, state.metadata.get(MEDIA_ROOT_KEY))
        return merge_events(stream, subtitle_events(key, group_sentences(words)))

    def prompt(_state: TaskState, question: Question) -> str:
        return question_text(question, reasoning=reasoning)

    return memory_solver(mem, events=events, prompt=prompt, cache=cache,
                         scope=lambda _q: {"frames": policy_fingerprint(policy)})


@task
def videomme_v2(
    data: str | None = None,
    subtitles: str = "none",
    frames: int = DEFAULT_FRAMES,
    fps: float | None = None,
    reasoning: bool = False,
    blind: bool = False,
    max_side: int | None = None,
    frame_store: str | None = None,
    cache: bool = True,
    memory: str | None = None,
    memory_config: dict[str, Any] | None = None,
) -> Task:
    """Video-MME-v2: groups of 4 questions per video, from uniform frames (``frames``, or
    ``fps``) and the ``subtitles`` mode; ``reasoning`` asks for reasoning before the letter."""
    if not data:
        raise VideoMMEv2TaskError("give the Video-MME-v2 folder: -T data=PATH", field="data")
    mode = _subtitle_mode(subtitles)
    if frames is not None and int(frames) < 0:
        raise VideoMMEv2TaskError(f"frames must be >= 0, got {frames}", field="frames")
    if fps is not None and not float(fps) > 0:
        raise VideoMMEv2TaskError(f"fps must be > 0, got {fps}", field="fps")
    loaded = load_videomme_v2(data)
    warn_skipped(logger, "Video-MME-v2", loaded.skipped)
    if not loaded.questions:
        raise VideoMMEv2TaskError("no usable question groups", path=loaded.table)
    no_frames = bool(blind) or (fps is None and int(frames) == 0)
    # frames=0 and no subtitles shows the question alone: a blind run in all but name, so it is
    # recorded as one and the report never lists it beside the full runs as if it were one
    blind = bool(blind) or (no_frames and mode == "none")
    uses_memory = memory is not None and memory != "none"
    if uses_memory and blind:
        raise VideoMMEv2TaskError("a blind run shows no video, so it takes no memory",
                                  field="memory")
    if uses_memory:
        assert memory is not None
        chosen = videomme_v2_memory_solver(
            memory, memory_config=memory_config, subtitles=mode, frames=int(frames), fps=fps,
            reasoning=bool(reasoning), max_side=max_side, frame_store=frame_store, cache=cache,
        )
    else:
        chosen = videomme_v2_solver(
            subtitles=mode, frames=int(frames), fps=fps, reasoning=bool(reasoning),
            blind=bool(blind), max_side=max_side, frame_store=frame_store, cache=cache,
        )
    card = ReproCard.with_prompt(
        prompt_template("none" if blind else mode, blind=bool(blind), frames=not no_frames,
                        reasoning=bool(reasoning)),
        benchmark="videomme_v2", task="videomme_v2",
        frames=frame_policy_card(int(frames), fps, max_side, blind=no_frames),
        subtitles="none" if blind else mode, blind=bool(blind),
        memory=memory if uses_memory else None,
        memory_config=dict(memory_config) if uses_memory and memory_config else None,
        data_fingerprint=data_fingerprint(data_files(data), media_files(loaded)),
        scoring=scoring_rules(), settings={"reasoning": bool(reasoning)},
    )
    return Task(
        dataset=videomme_v2_dataset(loaded, subtitles="none" if blind else mode,
                                    reasoning=bool(reasoning)),
        solver=chosen,
        scorer=videomme_v2_answer(),
        config=task_generate_config(),
        metadata={
            MEMORY_NAME_KEY: memory if uses_memory else None,
            BLIND_KEY: bool(blind),
            SUBTITLES_KEY: "none" if blind else mode,
            FRAMES_KEY: 0 if no_frames else (f"{fps} fps" if fps is not None else int(frames)),
            REASONING_KEY: bool(reasoning),
            SKIPPED_KEY: [str(e) for e in loaded.skipped],
            **task_card_metadata(card),
        },
    )
