"""A session's transcript: its lines, read once at load, bounded to its recording, and placed on
the person's clock in time order.

``read_transcript`` reads one file (aligned or Whisper) leniently: each line is read by the
released format's records (``m3kit.schema.supermemory.TranscriptLine`` / ``WhisperSegment``)
and a bad one is skipped and named, among them a line past a day or past the end of the
session's video (a time no recording has, which would otherwise fail its person's questions at
answer time). The loader reads each session's transcript once and keeps its lines with the
session (``load.TimelineSession``); a task's samples share them, so a transcript is never
parsed per question (a 159 MB transcript took minutes per question).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from m3kit.benchmarks.supermemory.fields import (
    SPAN_SLACK_S,
    RecordSkip,
    SuperMemoryError,
    record_skip,
)
from m3kit.schema import SkippedRecord
from m3kit.schema.supermemory import TranscriptLine, WhisperSegment

__all__ = [
    "SessionLines",
    "SpokenLine",
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
    meta: dict[str, JsonValue] = Field(default_factory=dict)


def _spoken(entry: object, kind: TranscriptKind, duration: float | None) -> SpokenLine | None:
    """``entry`` as a line (``None``: blank text, nothing heard); ``RecordSkip`` names what is
    wrong with it."""
    if not isinstance(entry, Mapping):
        raise RecordSkip("", "not an object")
    try:
        read = (TranscriptLine if kind == "aligned" else WhisperSegment).model_validate(entry)
    except ValidationError as exc:
        raise record_skip(exc) from None
    if duration is not None and read.end > duration + SPAN_SLACK_S:
        raise RecordSkip("end", f"ends at {read.end:g} s, past the end of its video "
                                f"({duration:g} s)")
    if not read.text.strip():
        return None  # nothing was heard: no line, and nothing wrong with the file
    if isinstance(read, TranscriptLine):
        return SpokenLine(start=read.start, end=read.end, text=read.text.strip(),
                          person=read.person, kind=read.kind)
    # a Whisper file's ``speaker`` is a diarisation label, not one of the questions' people
    return SpokenLine(start=read.start, end=read.end, text=read.text.strip(), kind=read.kind)


def read_transcript(path: str | Path, kind: TranscriptKind = "aligned",
                    duration: float | None = None) -> TranscriptFile:
    """The lines of a transcript file (seconds from the recording's start, in file order),
    the lines skipped (each named: what the format's records refuse, an end more than
    ``SPAN_SLACK_S`` past the video's ``duration`` when it is given; a line of blank text is no
    line), and the file's ``metadata`` object. The aligned file keeps ``person`` (``User``,
    ``A``...); a Whisper file's ``speaker`` is dropped. ``SuperMemoryError`` when the file is
    not a transcript at all."""
    file = Path(path)
    try:
        data = json.loads(file.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SuperMemoryError(f"not a readable JSON transcript ({type(exc).__name__})",
                               path=file) from None
    meta: dict[str, JsonValue] = {}
    if isinstance(data, Mapping):
        if isinstance(data.get("metadata"), Mapping):
            meta = dict(data["metadata"])
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
            line = _spoken(entry, kind, duration)
        except RecordSkip as skip:
            skipped.append(SkippedRecord.at(file, f"transcript[{n}]", skip.reason,
                                            skip.field or None))
            continue
        if line is not None:
            lines.append(line)
    return TranscriptFile(lines=lines, skipped=skipped, meta=meta)


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
