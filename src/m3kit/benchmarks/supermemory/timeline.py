"""A person's timeline: every session's frames and transcript lines as memory events on one
absolute clock (unix seconds), the question session's transcript up to the question, and the
loaded sessions a task's samples share (``PersonTimelines``).

SuperMemory-VQA asks about days of one person's recordings (seed 003 §3): the memory key is the
person, and each event is timed at ``session start + its time in the recording`` (a frame at
its presentation time, a transcript line at its end, when all its words were heard). The causal
cut is not applied here: a memory cuts its items at answer time (``Memory.visible``), the
direct prompt cuts the transcript with the same rule (``m3kit.memory.base.causal_cut``) and its
frames in ``m3kit.harness.frames.select_frames``.

Transcripts were read once, at load (``TimelineSession.lines``): nothing here reads a file but
the frames. The direct prompt's transcript (``recent_transcript``) is the lines heard last
before the question that fit a token budget, found by time on the session's lines in time order
(``TimelineSession.heard``), never by turning a whole long transcript into events per question.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, computed_field

from m3kit.benchmarks.supermemory.load import SuperMemorySet, TimelineSession
from m3kit.benchmarks.supermemory.prompt import transcript_within
from m3kit.benchmarks.supermemory.transcripts import SpokenLine
from m3kit.memory.base import MemoryEvent, causal_cut
from m3kit.memory.context import estimated_tokens
from m3kit.memory.events import frame_events, merge_events, transcript_events, wall_clock
from m3kit.perception.base import TranscriptSegment

if TYPE_CHECKING:
    from m3kit.harness.frames import FramePolicy
    from m3kit.media.store import FrameStore

__all__ = [
    "DEFAULT_MEMORY_FPS",
    "PersonTimelines",
    "RecentTranscript",
    "person_events",
    "recent_transcript",
    "session_frame_events",
    "session_transcript_events",
    "transcript_before",
    "wall_clock",
]

# One frame every 10 s of each session for a memory: a 30-45 min session gives 180-270 frames
# (days of 30 fps video cannot be ingested whole). EgoButler captions 30 s windows at 1 fps
# (seed 003 §4.2); ``-T memory_fps`` changes it.
DEFAULT_MEMORY_FPS = 0.1


def _dated(events: list[MemoryEvent], session: TimelineSession) -> list[MemoryEvent]:
    """The events with their wall-clock time as their label and their session named."""
    return [e.model_copy(update={"metadata": {
        **e.metadata, "when": wall_clock(e.time) if e.time is not None else "",
        "session": session.video_id}}) for e in events]


def session_frame_events(store: FrameStore, root: Path, session: TimelineSession,
                         policy: FramePolicy) -> list[MemoryEvent]:
    """The session's frames chosen by ``policy`` over the whole recording, as ``frame``
    events on the absolute clock (none for a transcript-only session). Blocking (decodes)."""
    from m3kit.media.sampling import sample_indices

    if session.video is None or policy.n == 0 and policy.policy != "fps":
        return []
    video = root / session.video
    times = store.index_for(video).times
    if len(times) == 0:
        return []
    indices = sample_indices(times, policy.policy, policy.n, fps=policy.fps,
                             max_frames=policy.max_frames)
    events = frame_events(store, video, indices, resize=policy.resize,
                          time_offset=session.start, id_prefix=f"{session.video_id}#")
    return _dated(events, session)


def _said(line: SpokenLine) -> str:
    """A line as it is shown: ``"A: words"`` when the speaker is known, ``[sound]`` for a
    sound."""
    text = f"[sound] {line.text}" if line.kind == "sound" else line.text
    return f"{line.person}: {text}" if line.person else text


def session_transcript_events(session: TimelineSession) -> list[MemoryEvent]:
    """The session's transcript lines (as read at load) as ``transcript`` events on the
    absolute clock (timed at each line's end; ``"A: words"`` when the speaker is known,
    ``[sound]`` for sounds)."""
    segments = [TranscriptSegment(start=line.start, end=line.end, text=_said(line))
                for line in session.lines]
    events = transcript_events(segments, id_prefix=f"{session.video_id}#speech-",
                               time_offset=session.start)
    return _dated(events, session)


def person_events(store: FrameStore, root: Path, sessions: Sequence[TimelineSession],
                  policy: FramePolicy) -> list[MemoryEvent]:
    """All sessions of one person, frames and transcript lines, merged in time order (the
    memory's stream for the person). Blocking (decodes frames)."""
    streams: list[list[MemoryEvent]] = []
    for session in sorted(sessions, key=lambda s: s.start):
        streams.append(session_frame_events(store, root, session, policy))
        streams.append(session_transcript_events(session))
    return merge_events(*streams)


def transcript_before(session: TimelineSession, time: float) -> list[MemoryEvent]:
    """The question session's transcript lines heard by ``time`` (unix s): the causal cut's
    rule (``causal_cut``) on the session's transcript events."""
    return causal_cut(session_transcript_events(session), time)


class PersonTimelines:
    """Each person's sessions on the clock, their transcripts as read at load: made once per
    task from the loaded data and held by its solver, shared by every sample, which names its
    person (its question's ``subject``) and session (its video id) by key. (A plain object,
    not a pydantic record: inspect writes a solver's pydantic arguments into the log whole.)"""

    def __init__(self, root: Path, sessions: Mapping[int, Sequence[TimelineSession]]) -> None:
        self.root = root
        self._sessions = {subject: list(person) for subject, person in sessions.items()}

    @classmethod
    def of(cls, data: SuperMemorySet) -> PersonTimelines:
        """The timelines of data loaded from a folder (``ValueError`` for the JSON alone)."""
        if data.root is None:
            raise ValueError("the JSON alone has no timelines: load the data folder")
        return cls(data.root, data.sessions)

    def person(self, subject: int) -> list[TimelineSession]:
        """Person ``subject``'s sessions in time order (none when unknown)."""
        return self._sessions.get(subject, [])

    def session(self, subject: int, video_id: str) -> TimelineSession | None:
        """Session ``video_id`` of person ``subject``, if it is on the timeline."""
        return next((s for s in self.person(subject) if s.video_id == video_id), None)


class RecentTranscript(BaseModel):
    """What a direct prompt carries of a session's transcript: ``text`` (the prompt's block,
    empty when nothing fits or was heard), ``lines`` kept of the ``heard`` ones (heard by the
    question's moment), ``cut`` = the older ones left out for the budget, ``tokens`` its
    estimate (``m3kit.memory.context.estimated_tokens``) and the ``budget`` it kept to."""

    model_config = ConfigDict(frozen=True)

    text: str
    heard: int
    lines: int
    tokens: int
    budget: int

    # mypy rejects any decorator above @property; this stacking is pydantic's documented form
    @computed_field  # type: ignore[prop-decorator]
    @property
    def cut(self) -> int:
        return self.heard - self.lines


@dataclass(frozen=True)
class _Heard:
    time: float
    line: SpokenLine


def recent_transcript(session: TimelineSession, time: float,
                      budget_tokens: int) -> RecentTranscript:
    """The lines of ``session`` heard by ``time`` (unix s) that fit ``budget_tokens``, the last
    heard first before the cut (``prompt.transcript_within``), each as ``[hh:mm:ss] A: words``.
    Only the lines considered are labelled: the cost is the kept lines', not the file's."""
    timed = session.heard
    heard = timed.heard_by(time)

    def newest_first() -> Iterator[tuple[str, str]]:
        for n in range(heard - 1, -1, -1):
            # the one causal rule on each line taken (the bisect found the same ones)
            for entry in causal_cut([_Heard(timed.times[n], timed.lines[n])], time):
                yield wall_clock(entry.time).split(" ")[1], _said(entry.line)

    text, kept = transcript_within(newest_first(), budget_tokens)
    return RecentTranscript(text=text, heard=heard, lines=kept, tokens=estimated_tokens(text),
                            budget=budget_tokens)
