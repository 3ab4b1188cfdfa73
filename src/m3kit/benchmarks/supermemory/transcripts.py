"""A session's transcript: its lines, read once per run, bounded to its recording, and placed on
the person's clock in time order.

``read_transcript`` reads one file (aligned or Whisper) leniently: a bad line is skipped and
named, among them a line past a day or past the end of the session's video (a time no
recording has, which would otherwise fail its person's questions at answer time).
``TranscriptCache`` holds what each file gave, keyed by the file's identity (resolved path,
size, modification time: a file changed meanwhile is read again). A task makes one; the
loader fills it while it checks the layout and the solvers read from it, so a transcript is
parsed once per run, never once per question (a 159 MB transcript took minutes per question).
"""

from __future__ import annotations

import json
import os
import threading
from bisect import bisect_right
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.supermemory.fields import (
    SPAN_SLACK_S,
    RecordSkip,
    SuperMemoryError,
    as_local_seconds,
    as_text,
)
from m3kit.schema import SkippedRecord

__all__ = [
    "SessionLines",
    "SpokenLine",
    "TranscriptCache",
    "TranscriptFile",
    "TranscriptKind",
    "read_transcript",
]

TranscriptKind = Literal["aligned", "whisper"]


class SpokenLine(BaseModel):
    """One transcript line: seconds from the recording's start, who spoke (``None``: not
    known), what (``kind`` ``speech`` or ``sound``)."""

    model_config = ConfigDict(frozen=True)

    start: float
    end: float
    text: str
    person: str | None = None
    kind: str = "speech"


class TranscriptFile(BaseModel):
    """What one transcript file gave: its lines (file order), the lines skipped (each named)
    and its ``metadata`` object."""

    model_config = ConfigDict(frozen=True)

    lines: list[SpokenLine] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)


def read_transcript(path: str | Path, kind: TranscriptKind = "aligned",
                    duration: float | None = None,
                    ) -> tuple[list[SpokenLine], list[SkippedRecord], dict[str, Any]]:
    """The lines of a transcript file (seconds from the recording's start, in file order),
    the lines skipped (each named: no start/end, a time past a day, an end before its start,
    an end more than ``SPAN_SLACK_S`` past the video's ``duration`` when it is given, text that
    is not text; a line of blank text is no line), and the file's ``metadata`` object. The
    aligned file keeps ``person`` (``User``, ``A``...); a Whisper file's ``speaker`` is dropped
    (its diarisation labels are not the questions' people). ``SuperMemoryError`` when the file
    is not a transcript at all."""
    file = Path(path)
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SuperMemoryError(f"not a readable JSON transcript ({type(exc).__name__})",
                               path=file) from None
    meta: dict[str, Any] = {}
    if isinstance(data, Mapping):
        meta = dict(data.get("metadata") or {}) if isinstance(data.get("metadata"),
                                                              Mapping) else {}
        entries = data.get("transcript", data.get("segments"))
    else:
        entries = data
    if not isinstance(entries, list):
        raise SuperMemoryError("no list of transcript lines ('transcript')", path=file,
                               field="transcript")
    lines: list[SpokenLine] = []
    skipped: list[SkippedRecord] = []
    for n, entry in enumerate(entries):
        try:
            if not isinstance(entry, Mapping):
                raise RecordSkip("", "not an object")
            start = as_local_seconds(entry.get("start"), "start")
            end = as_local_seconds(entry.get("end"), "end")
            if end < start:
                raise RecordSkip("end", f"ends ({end:g} s) before it starts ({start:g} s)")
            if duration is not None and end > duration + SPAN_SLACK_S:
                raise RecordSkip("end", f"ends at {end:g} s, past the end of its video "
                                        f"({duration:g} s)")
            if isinstance(entry.get("text"), str) and not entry["text"].strip():
                continue  # nothing was heard: no line, and nothing wrong with the file
            text = as_text(entry.get("text"), "text").strip()
        except RecordSkip as skip:
            skipped.append(SkippedRecord.at(file, f"transcript[{n}]", skip.reason,
                                            skip.field or None))
            continue
        person = entry.get("person") if kind == "aligned" else None
        lines.append(SpokenLine(start=start, end=end, text=text,
                                person=str(person) if person not in (None, "") else None,
                                kind=str(entry.get("kind") or "speech")))
    return lines, skipped, meta


class SessionLines:
    """A session's transcript lines on the person's clock, in time order: each line at its
    end (when all its words were heard), ``times[i]`` the unix time of ``lines[i]``."""

    def __init__(self, lines: list[SpokenLine], start: float) -> None:
        # ``end + start``: the very sum ``m3kit.memory.events.transcript_events`` times an
        # event by, so the cut falls on the same lines either way
        timed = sorted(((line.end + start, n) for n, line in enumerate(lines)))
        self.times = [t for t, _ in timed]
        self.lines = [lines[n] for _, n in timed]

    def heard_by(self, time: float) -> int:
        """How many lines were heard by ``time`` (unix s): the first ones of ``lines``."""
        return bisect_right(self.times, time)


# a file by identity (resolved path, size, modification time), how it is read, its video's length
_Key = tuple[str, int, int, str, float | None]


class TranscriptCache:
    """Each transcript file read once (see the module doc); safe to share between threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: dict[_Key, TranscriptFile] = {}
        self._clocked: dict[tuple[_Key, float], SessionLines] = {}

    def _read(self, path: Path, kind: TranscriptKind, duration: float | None,
              ) -> tuple[_Key, TranscriptFile]:
        try:
            found = os.stat(path)
        except OSError as exc:
            raise SuperMemoryError(f"cannot be read: {exc.strerror or exc}", path=path) from None
        key = (str(path.resolve()), found.st_size, found.st_mtime_ns, kind, duration)
        if key not in self._files:
            lines, skipped, meta = read_transcript(path, kind, duration)
            self._files[key] = TranscriptFile(lines=lines, skipped=skipped, meta=meta)
        return key, self._files[key]

    def read(self, path: str | Path, kind: TranscriptKind,
             duration: float | None = None) -> TranscriptFile:
        """The file as ``read_transcript(path, kind, duration)`` reads it (``duration``: its
        video's, ``None`` for a transcript-only session). ``SuperMemoryError`` when it is not
        a transcript at all."""
        with self._lock:
            return self._read(Path(path), kind, duration)[1]

    def on_clock(self, path: str | Path, kind: TranscriptKind, duration: float | None,
                 start: float) -> SessionLines:
        """``read``'s lines placed on the person's clock from ``start`` (unix s), in time
        order."""
        with self._lock:
            key, read = self._read(Path(path), kind, duration)
            if (key, start) not in self._clocked:
                self._clocked[(key, start)] = SessionLines(read.lines, start)
            return self._clocked[(key, start)]
