"""The recordings stage 1 captions, found and placed in the benchmark root being built.

A path given is a video file, a folder of video files, or a folder in the released layout
(``data/video/Person_<n>/...`` with ``data/transcripts/person_<n>/...`` beside; the folder
holding ``data/`` or ``data/`` itself). The released layout is read by the benchmark's loader
(``load.read_sessions``): each session's person, its start (its transcript's
``metadata.start_time_unix`` / ``video_start_time_unix``, or ``--starts``), its duration, its
transcript (the aligned one first, the Whisper one when the aligned one does not parse). A
loose video is person ``person`` (``--person``) and starts at ``starts[<video id>]``
(``--starts``) or at its container's ``creation_time`` tag. A session whose start is unknown,
a video that cannot be decoded (with no transcript to stand for it), a loose video without a
person, a session given twice: each is skipped and named, the others go on.

Each recording is placed in the root's layout by a hard link (``m3kit.files.link_or_copy``: a
copy only across file systems; not a symbolic link, which the loader refuses when it leads out
of the root)
(``schema.supermemory.video_path``), and so is the transcript it is read from. A session with
no transcript gets one from faster-whisper (``perception.speech.WhisperRecognizer``, tiny.en,
offline), written as ``<id>_whisper_transcript.json`` in the root's layout with the session's
start in its ``metadata``, so a later run reads it instead of transcribing again; a video with
no audio is named and captioned without a transcript.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.supermemory.load import TimelineSession, read_sessions
from m3kit.benchmarks.supermemory.transcripts import read_transcript
from m3kit.errors import M3kitError, MediaError
from m3kit.files import atomic_write_text, link_or_copy
from m3kit.perception.base import SpeechRecognizer
from m3kit.schema import SkippedRecord
from m3kit.schema.supermemory import (
    DATA_DIR,
    WHISPER_SUFFIX,
    video_path,
    whisper_transcript_path,
)

__all__ = [
    "VIDEO_SUFFIXES",
    "FoundSessions",
    "HeardLine",
    "SessionInputs",
    "SessionSource",
    "find_sessions",
]

VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v")
WHISPER_SOURCE = "faster-whisper tiny.en (m3kit annotate captions)"


class HeardLine(BaseModel):
    """A transcript line: seconds local to the recording, who spoke (a person label of an
    aligned transcript, a diarisation label of a Whisper one, ``None``: unknown), what;
    ``kind`` ``speech`` or ``sound``."""

    model_config = ConfigDict(frozen=True)

    start: float
    end: float
    text: str
    speaker: str | None = None
    kind: str = "speech"


class SessionSource(BaseModel):
    """One recording to caption, as placed in the root: ``video`` and ``transcript`` relative
    to the root (``None``: none), ``start`` unix seconds, ``duration`` seconds, ``lines`` its
    transcript's lines (file order)."""

    model_config = ConfigDict(frozen=True)

    subject: int
    video_id: str
    start: float
    duration: float
    video: str | None = None
    transcript: str | None = None
    lines: list[HeardLine] = Field(default_factory=list, repr=False)


class SessionInputs(BaseModel):
    """How recordings are found: ``person`` for loose videos, ``starts`` (video id → unix
    seconds; before any other source), whether a session without a transcript is
    transcribed."""

    person: int | None = Field(default=None, ge=1)
    starts: dict[str, float] = Field(default_factory=dict)
    transcribe_missing: bool = True


class FoundSessions(BaseModel):
    sessions: list[SessionSource] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    transcribed: list[str] = Field(default_factory=list)  # transcripts made by faster-whisper


def _data_folder(path: Path) -> Path | None:
    """The ``data`` folder of a released layout at ``path``, else ``None``."""
    for folder in (path / DATA_DIR, path):
        if (folder / "video").is_dir() or (folder / "transcripts").is_dir():
            return folder
    return None


def _whisper_speakers(file: Path) -> dict[tuple[float, float, str], str]:
    """A Whisper file's diarisation labels by line (``read_transcript`` drops them: they are
    not the questions' people, but the captioner maps them to people)."""
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    entries = data.get("segments") if isinstance(data, Mapping) else data
    out: dict[tuple[float, float, str], str] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, Mapping) and entry.get("speaker"):
            try:
                key = (float(entry["start"]), float(entry["end"]), str(entry["text"]).strip())
            except (KeyError, TypeError, ValueError):
                continue
            out[key] = str(entry["speaker"])
    return out


def _heard(session: TimelineSession, data: Path) -> list[HeardLine]:
    speakers = (_whisper_speakers(data / session.transcript)
                if session.transcript and session.transcript_kind == "whisper" else {})
    return [HeardLine(start=line.start, end=line.end, text=line.text, kind=line.kind,
                      speaker=line.person or speakers.get((line.start, line.end, line.text)))
            for line in session.lines]


def _layout_starts(data: Path, starts: Mapping[str, float]) -> dict[tuple[int, str], float]:
    """``--starts`` for every person of a layout (a video id names one session)."""
    if not starts:
        return {}
    subjects = {int(d.name.split("_", 1)[1]) for kind in ("video", "transcripts")
                for d in (data / kind).glob("[Pp]erson_*")
                if d.is_dir() and d.name.split("_", 1)[1].isdigit()}
    return {(s, vid): t for s in subjects for vid, t in starts.items()}


def _creation_time(path: Path) -> float | None:
    """The container's ``creation_time`` tag as unix seconds, ``None`` when absent."""
    from m3kit.media.container import open_video

    container, stream = open_video(path)
    try:
        tags = {**dict(container.metadata or {}), **dict(stream.metadata or {})}
    finally:
        container.close()
    text = tags.get("creation_time")
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class _Finder:
    def __init__(self, root: Path, inputs: SessionInputs,
                 recognizer: SpeechRecognizer | None,
                 message: Callable[[str], None]) -> None:
        self.root = root
        self.inputs = inputs
        self.recognizer = recognizer
        self.message = message
        self.found = FoundSessions()
        self.seen: set[tuple[int, str]] = set()

    def skip(self, file: str | Path, reason: str, field: str | None = None) -> None:
        self.found.skipped.append(SkippedRecord.at(file, None, reason, field))

    def add(self, source: SessionSource, origin: Path) -> None:
        key = (source.subject, source.video_id)
        if key in self.seen:
            self.skip(origin, f"session {source.video_id} of person {source.subject} is given "
                      "again: the first is kept", "video_id")
            return
        self.seen.add(key)
        self.found.sessions.append(source)

    def layout(self, data: Path) -> None:
        skipped: list[SkippedRecord] = []
        sessions = read_sessions(data, _layout_starts(data, self.inputs.starts), skipped)
        self.found.skipped += skipped
        for subject_sessions in sessions.values():
            for session in subject_sessions:
                self._place(session, data)

    def _place(self, session: TimelineSession, data: Path) -> None:
        video = transcript = None
        if session.video is not None:
            video = video_path(session.subject, session.video_id)
            link_or_copy(data / session.video, self.root / video)
        if session.transcript is not None:
            transcript = f"{DATA_DIR}/{session.transcript}"
            link_or_copy(data / session.transcript, self.root / transcript)
        lines = _heard(session, data)
        vid, duration = session.video_id, session.duration
        if duration is None and session.transcript is not None:
            # transcript-only: the loader names it by its file (lower case); its metadata
            # may spell the id and state the duration
            meta = _metadata(data / session.transcript)
            stated = meta.get("video_id")
            if isinstance(stated, str) and stated.lower() == vid.lower():
                vid = stated
            value = meta.get("duration")
            if isinstance(value, int | float) and value > 0:
                duration = float(value)
        if duration is None:
            duration = max((line.end for line in lines), default=0.0)
        if duration <= 0:
            self.skip(data / (session.transcript or ""), f"session {session.video_id}: no "
                      "video and an empty transcript, nothing to caption")
            return
        source = SessionSource(subject=session.subject, video_id=vid,
                               start=session.start, duration=duration, video=video,
                               transcript=transcript, lines=lines)
        if transcript is None and video is not None:
            source = self._transcribed(source)
        self.add(source, data / (session.video or session.transcript or ""))

    def loose(self, file: Path) -> None:
        from m3kit.media.info import video_info

        vid = file.stem
        if self.inputs.person is None:
            self.skip(file, "a video outside the released layout needs --person N", "person")
            return
        try:
            duration = float(video_info(file).duration)
            start = self.inputs.starts.get(vid)
            if start is None:
                start = _creation_time(file)
        except MediaError as exc:
            self.skip(file, f"video cannot be decoded: {exc.reason}", "video")
            return
        if start is None:
            self.skip(file, f"session {vid}: its start is unknown (no creation_time tag in the "
                      "container; give it with --starts FILE)", "start_time")
            return
        subject = self.inputs.person
        video = video_path(subject, vid)
        link_or_copy(file, self.root / video)
        source = SessionSource(subject=subject, video_id=vid, start=start, duration=duration,
                               video=video)
        made = self.root / whisper_transcript_path(subject, vid)
        if made.is_file():  # transcribed by an earlier run
            try:
                read = read_transcript(made, "whisper", duration)
            except M3kitError as exc:
                self.skip(made, f"{exc.reason}: transcribed again", "transcript")
            else:
                self.found.skipped += read.skipped
                source = source.model_copy(update={
                    "transcript": whisper_transcript_path(subject, vid),
                    "lines": [HeardLine(start=x.start, end=x.end, text=x.text)
                              for x in read.lines]})
        if source.transcript is None:
            source = self._transcribed(source)
        self.add(source, file)

    def _transcribed(self, source: SessionSource) -> SessionSource:
        """``source`` with a transcript made by faster-whisper, written into the layout; as
        it is, named, when it has no audio or transcribing is off."""
        assert source.video is not None
        video = self.root / source.video
        if self.recognizer is None:
            self.skip(video, f"session {source.video_id} has no transcript (transcribing is "
                      "off): captioned without one", "transcript")
            return source
        self.message(f"transcribing {source.video_id} with {self.recognizer.name}")
        try:
            segments = self.recognizer.transcribe(video)
        except M3kitError as exc:  # no audio stream, damaged audio
            self.skip(video, f"session {source.video_id} has no transcript and none can be "
                      f"made ({exc.reason}): captioned without one", "transcript")
            return source
        name = whisper_transcript_path(source.subject, source.video_id)
        body = {"metadata": {"video_id": source.video_id, "subject": source.subject,
                             "start_time_unix": source.start, "duration": source.duration,
                             "source": WHISPER_SOURCE},
                "segments": [{"start": s.start, "end": s.end, "text": s.text, "speaker": None}
                             for s in segments]}
        atomic_write_text(self.root / name, json.dumps(body, indent=1))
        self.found.transcribed.append(name)
        return source.model_copy(update={
            "transcript": name,
            "lines": [HeardLine(start=s.start, end=s.end, text=s.text) for s in segments]})


def _metadata(file: Path) -> dict[str, object]:
    """A transcript's ``metadata`` object (empty when it has none)."""
    try:
        return dict(read_transcript(file).meta)
    except M3kitError:
        return {}


def find_sessions(paths: Sequence[str | Path], root: str | Path, inputs: SessionInputs, *,
                  recognizer: SpeechRecognizer | None = None,
                  message: Callable[[str], None] | None = None) -> FoundSessions:
    """Every recording under ``paths`` placed in ``root``'s layout (linked), each person's
    sessions in time order, with what was skipped and why. ``recognizer`` transcribes a
    session that has none (default: faster-whisper tiny.en when ``inputs.transcribe_missing``).
    """
    if recognizer is None and inputs.transcribe_missing:
        from m3kit.perception.speech import WhisperRecognizer

        recognizer = WhisperRecognizer()
    finder = _Finder(Path(root), inputs, recognizer if inputs.transcribe_missing else None,
                     message or (lambda _text: None))
    for given in paths:
        path = Path(given)
        if path.is_dir():
            data = _data_folder(path)
            if data is not None:
                finder.layout(data)
                continue
            videos = sorted(p for p in path.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES)
            if not videos:
                finder.skip(path, "no video and no released layout (data/video/Person_<n>) in "
                            "this folder")
            for video in videos:
                finder.loose(video)
        elif path.is_file() and not path.name.endswith(WHISPER_SUFFIX):
            finder.loose(path)
        else:
            finder.skip(path, "no such file or folder")
    found = finder.found
    found.sessions.sort(key=lambda s: (s.subject, s.start, s.video_id))
    return found
