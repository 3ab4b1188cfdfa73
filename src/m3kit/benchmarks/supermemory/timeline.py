"""A person's timeline: every session's frames and transcript lines as memory events on one
absolute clock (unix seconds), and the question session's transcript up to the question.

SuperMemory-VQA asks about days of one person's recordings (seed 003 §3): the memory key is the
person, and each event is timed at ``session start + its time in the recording`` (a frame at
its presentation time, a transcript line at its end, when all its words were heard). The causal
cut is not applied here: a memory cuts its items at answer time (``Memory.visible``), the
direct prompt cuts the transcript with the same rule (``m3kit.memory.base.causal_cut``) and its
frames in ``m3kit.harness.frames.select_frames``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from m3kit.benchmarks.supermemory.load import Session, read_transcript
from m3kit.errors import M3kitError
from m3kit.memory.base import MemoryEvent, causal_cut
from m3kit.memory.events import frame_events, merge_events, transcript_events, wall_clock
from m3kit.perception.base import TranscriptSegment
from m3kit.schema import SkippedRecord

if TYPE_CHECKING:
    from m3kit.harness.frames import FramePolicy
    from m3kit.media.store import FrameStore

__all__ = [
    "DEFAULT_MEMORY_FPS",
    "person_events",
    "session_frame_events",
    "session_transcript_events",
    "transcript_before",
    "wall_clock",
]

# One frame every 10 s of each session for a memory: a 30-45 min session gives 180-270 frames
# (days of 30 fps video cannot be ingested whole). EgoButler captions 30 s windows at 1 fps
# (seed 003 §4.2); ``-T memory_fps`` changes it.
DEFAULT_MEMORY_FPS = 0.1


def _dated(events: list[MemoryEvent], session: Session) -> list[MemoryEvent]:
    """The events with their wall-clock time as their label and their session named."""
    return [e.model_copy(update={"metadata": {
        **e.metadata, "when": wall_clock(e.time) if e.time is not None else "",
        "session": session.video_id}}) for e in events]


def session_frame_events(store: FrameStore, root: Path, session: Session,
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


def _segments(root: Path, session: Session) -> tuple[list[TranscriptSegment], list[SkippedRecord]]:
    if session.transcript is None or session.transcript_kind is None:
        return [], []
    try:
        lines, skipped, _ = read_transcript(root / session.transcript, session.transcript_kind)
    except M3kitError as exc:
        return [], [SkippedRecord.from_error(exc)]
    segments = []
    for line in lines:
        text = f"[sound] {line.text}" if line.kind == "sound" else line.text
        if line.person:
            text = f"{line.person}: {text}"
        segments.append(TranscriptSegment(start=line.start, end=line.end, text=text))
    return segments, skipped


def session_transcript_events(root: Path, session: Session
                              ) -> tuple[list[MemoryEvent], list[SkippedRecord]]:
    """The session's transcript lines as ``transcript`` events on the absolute clock (timed at
    each line's end; ``"A: words"`` when the speaker is known, ``[sound]`` for sounds), and the
    lines (or the whole file) that could not be read, each named."""
    segments, skipped = _segments(root, session)
    events = transcript_events(segments, id_prefix=f"{session.video_id}#speech-",
                               time_offset=session.start)
    return _dated(events, session), skipped


def person_events(store: FrameStore, root: Path, sessions: list[Session],
                  policy: FramePolicy) -> tuple[list[MemoryEvent], list[SkippedRecord]]:
    """All sessions of one person, frames and transcript lines, merged in time order (the
    memory's stream for the person), and what could not be read. Blocking."""
    streams: list[list[MemoryEvent]] = []
    skipped: list[SkippedRecord] = []
    for session in sorted(sessions, key=lambda s: s.start):
        streams.append(session_frame_events(store, root, session, policy))
        words, lost = session_transcript_events(root, session)
        streams.append(words)
        skipped += lost
    return merge_events(*streams), skipped


def transcript_before(root: Path, session: Session, time: float) -> list[MemoryEvent]:
    """The question session's transcript lines heard by ``time`` (unix s): the causal cut's
    rule (``causal_cut``) on the session's transcript events."""
    events, _ = session_transcript_events(root, session)
    return causal_cut(events, time)
