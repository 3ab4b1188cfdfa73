"""SuperMemory-VQA's released files as m3kit ``Question``s and each person's sessions on one
absolute clock, their transcripts read once (seed 003 §3, appendix D.2; the dataset release).

Layout (``ROOT``, or ``ROOT/data`` given directly; the JSON alone is enough for scoring)::

    data/json/all_qa.json
    data/video/Person_<n>/<video_id>.mp4
    data/transcripts/person_<n>/<video_id lower-cased>_gemini_aligned_transcript.json
    data/transcripts/person_<n>/<video_id lower-cased>_whisper_transcript.json

Every record and transcript line is read by the released format's records
(``m3kit.schema.supermemory``, which the synthetic suite writes with): this module places what
they read on the clock. A record of ``all_qa.json`` becomes one ``Question``: ``id`` the
``question_id``, four lettered choices with their roles (``correct`` / ``vague`` / ``wrong`` by
``choice_types``, the abstain option by its text), ``answer`` the letter of
``correct_option_index``, ``time`` the question's moment in unix seconds: the question video's
start plus the largest ``end_time`` of its ``question_evidence`` spans on that video (legacy
records: one ``time_span`` of ``MM:SS`` strings). Its ``media`` is the question's session video
placed on that clock (``clock_start``), so ``m3kit.harness.frames.select_frames`` cuts it at the
question time.

A session (``TimelineSession``) is one recording of a person: its video and/or its transcript,
its start (unix s) taken from the records that name it (``metadata.primary_video_start_time``
/ ``start_time`` for the question video, ``video_start_time_unix`` of an evidence span for
another; a transcript's ``metadata.start_time_unix`` (or ``video_start_time_unix``) as the last
resort), and the lines of its transcript, read here once: a task's samples share them. One
session of the release has no mp4: it is transcript-only, not an error. The aligned transcript
is read when it exists and is readable (its ``person`` labels are the questions'); the Whisper
one otherwise, with no speaker (its diarisation labels are not the questions' people). Where a
synthetic suite's manifest (``suite.json`` beside ``data/``) lists the suite's files, a video or
transcript it does not list (a stale day of an earlier suite) is skipped and named, never added
to a person's timeline.

Each unusable record is skipped and named (file, record, field): what the format's records
refuse (not four choices or choice types, an unknown choice type, no abstain option, a gold
index out of range, ``is_answerable`` disagreeing with the gold, an unknown skill, a start
time that disagrees with another of the record, a start off the clock, a time local to a
recording past a day...), a question id given again (the first is kept), a start that
disagrees with another record's for the same video, a span (or a transcript line) past its
video's end, a question video the layout does not have. A session without a known start is
left off its person's timeline and named, never placed at a guessed time.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from m3kit.benchmarks.supermemory.fields import (
    SPAN_SLACK_S,
    RecordSkip,
    SuperMemoryError,
    record_skip,
)
from m3kit.benchmarks.supermemory.transcripts import (
    SessionLines,
    SpokenLine,
    TranscriptFile,
    TranscriptKind,
    read_transcript,
)
from m3kit.errors import M3kitError
from m3kit.paths import resolve_in_root
from m3kit.schema import Choice, ChoiceRole, Question, SkippedRecord, VideoRef
from m3kit.schema.supermemory import (
    ALIGNED_SUFFIX,
    ALL_QA_PATH,
    DATA_DIR,
    SKILLS,
    WHISPER_SUFFIX,
    QARecord,
    UnixTime,
    is_abstain_text,
)

__all__ = [
    "BENCHMARK_NAME",
    "SKILLS",
    "EvidenceSpan",
    "SuperMemoryError",
    "SuperMemorySet",
    "TimelineSession",
    "data_files",
    "data_media",
    "find_qa_file",
    "load_supermemory",
    "media_files",
    "question_cut",
    "read_sessions",
]

BENCHMARK_NAME = "supermemory"
QA_FILE = Path(ALL_QA_PATH).relative_to(DATA_DIR)
_ROLES = {"correct": ChoiceRole.CORRECT, "vague": ChoiceRole.VAGUE,
          "incorrect": ChoiceRole.WRONG}
_PERSON_DIR = re.compile(r"^person_(\d+)$", re.IGNORECASE)
# A session's transcript files, the one to read first first.
_TRANSCRIPTS: tuple[tuple[str, TranscriptKind], ...] = ((ALIGNED_SUFFIX, "aligned"),
                                                        (WHISPER_SUFFIX, "whisper"))
_UNIX_TIME: TypeAdapter[float] = TypeAdapter(UnixTime)


class EvidenceSpan(BaseModel):
    """A time span of evidence: seconds local to ``video_id``'s recording."""

    model_config = ConfigDict(frozen=True)

    video_id: str
    start: float
    end: float


def question_cut(primary: str, spans: Sequence[EvidenceSpan]) -> float:
    """Seconds into its video ``primary`` at which a question is asked: the largest end of its
    spans there. Its moment is that video's start plus this (the annotation pipeline's
    causality check places questions by it too)."""
    return max(s.end for s in spans if s.video_id == primary)


class TimelineSession(BaseModel):
    """One recording of a person placed on their timeline: ``start`` in unix seconds;
    ``video`` and ``transcript`` relative to the data folder (``None``: not released);
    ``duration`` of the video in seconds when there is one; ``lines``: its transcript's lines
    as read at load (file order; none without a transcript)."""

    model_config = ConfigDict(frozen=True)

    subject: int
    video_id: str
    start: float
    video: str | None = None
    transcript: str | None = None
    transcript_kind: TranscriptKind | None = None
    duration: float | None = None
    lines: list[SpokenLine] = Field(default_factory=list, repr=False)

    @cached_property
    def heard(self) -> SessionLines:
        """The transcript's lines on the person's clock, in time order (ordered once)."""
        return SessionLines(self.lines, self.start)


class SuperMemorySet(BaseModel):
    """The loaded questions, each person's sessions in time order, and what was skipped.
    ``root`` is the data folder (``None`` when only the JSON was given)."""

    qa_file: Path
    root: Path | None = None
    questions: list[Question] = Field(default_factory=list)
    sessions: dict[int, list[TimelineSession]] = Field(default_factory=dict)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    skipped_question_ids: list[str] = Field(default_factory=list)

    def session(self, subject: int, video_id: str) -> TimelineSession | None:
        """The session ``video_id`` of person ``subject``, if loaded."""
        return next((s for s in self.sessions.get(subject, []) if s.video_id == video_id), None)


def find_qa_file(data: str | Path) -> tuple[Path, Path | None]:
    """``(all_qa.json, data folder)`` for ``data``: the JSON file itself (no data folder), a
    ``data/`` folder, or the folder holding it. ``SuperMemoryError`` when none is there."""
    path = Path(data)
    if path.is_file():
        return path, None
    for folder in (path, path / "data"):
        if (folder / QA_FILE).is_file():
            return folder / QA_FILE, folder
    raise SuperMemoryError(f"no {QA_FILE.as_posix()} under it (give the folder holding "
                           "data/json/all_qa.json, or the JSON file)", path=path)


def data_files(data: str | Path) -> list[Path]:
    """The question file (the data set's fingerprint is taken over it, with ``media_files``)."""
    return [find_qa_file(data)[0]]


def media_files(data: SuperMemorySet) -> list[Path]:
    """The files the samples of ``data`` read besides the question file, in load order: each
    person's sessions in time order, each session's video then the transcript it is read from
    (none when only the JSON was given). The data set's fingerprint covers them
    (``m3kit.harness.card.data_fingerprint``)."""
    if data.root is None:
        return []
    return [data.root / name for subject in sorted(data.sessions)
            for session in data.sessions[subject]
            for name in (session.video, session.transcript) if name is not None]


def data_media(data: str | Path) -> list[Path]:
    """``media_files`` of the data at ``data`` (``m3kit score``'s card)."""
    return media_files(load_supermemory(data))


# -- records -----------------------------------------------------------------------------------


class _Parsed(BaseModel):
    """A record read, before it is placed on the timeline."""

    model_config = ConfigDict(frozen=True)

    qid: str
    subject: int
    question: Question
    primary: str
    spans: list[EvidenceSpan]
    answer_spans: list[EvidenceSpan]
    starts: dict[str, float]  # video id -> unix start, as this record states them


def _parse(raw: object) -> _Parsed:
    """A record of ``all_qa.json`` as the released format (``QARecord``) reads it, as a
    ``Question``; ``RecordSkip`` names the first thing wrong with it."""
    if not isinstance(raw, Mapping):
        raise RecordSkip("", "not a JSON object")
    try:
        record = QARecord.model_validate(raw)
    except ValidationError as exc:
        raise record_skip(exc) from None
    primary = record.metadata.primary_video_id
    spans = [EvidenceSpan(video_id=s.video_id or primary, start=s.start_time, end=s.end_time)
             for s in record.question_evidence.spans]
    answered = record.answer_evidence.evidence_list if record.answer_evidence else []
    answer_spans = [EvidenceSpan(video_id=a.video_id, start=a.time_span.start_time,
                                 end=a.time_span.end_time) for a in answered]
    cut = question_cut(primary, spans)
    types = list(record.choice_types)
    gold = record.correct_option_index
    choices = [
        Choice(letter=chr(ord("A") + n), text=text,
               role=ChoiceRole.ABSTAIN if is_abstain_text(text) else _ROLES[types[n]])
        for n, text in enumerate(record.choices)
    ]
    question = Question(
        id=str(record.question_id).strip(), benchmark=BENCHMARK_NAME, text=record.question,
        choices=choices, answer=chr(ord("A") + gold), question_type=record.metadata.skill,
        time=record.primary_start + cut,
        evidence=[f"{s.video_id}@{s.start:g}-{s.end:g}" for s in answer_spans],
        metadata={
            "skill": record.metadata.skill, "subject": record.subject,
            "primary_video_id": primary, "video_ids": record.video_ids or [primary],
            "is_answerable": record.is_answerable, "choice_types": types,
            "correct_answer": record.correct_answer,
            "question_cut_s": cut,
            "question_spans": [s.model_dump() for s in spans],
            "answer_spans": [s.model_dump() for s in answer_spans],
        },
    )
    return _Parsed(qid=question.id, subject=record.subject, question=question, primary=primary,
                   spans=spans, answer_spans=answer_spans, starts=record.video_starts)


def _raw_records(qa_file: Path) -> list[object]:
    try:
        text = qa_file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SuperMemoryError(f"not UTF-8 text (byte {exc.start})", path=qa_file) from None
    except OSError as exc:
        raise SuperMemoryError(f"cannot be read: {exc.strerror or exc}", path=qa_file) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SuperMemoryError(f"invalid JSON at line {exc.lineno} column {exc.colno}: "
                               f"{exc.msg}", path=qa_file) from None
    if not isinstance(data, list):
        raise SuperMemoryError("not a JSON list of question records", path=qa_file)
    return data


def _record_name(raw: object, n: int) -> str:
    qid = raw.get("question_id") if isinstance(raw, Mapping) else None
    return str(qid) if isinstance(qid, int | str) and not isinstance(qid, bool) else f"#{n}"


# -- the layout --------------------------------------------------------------------------------


def _person_folders(root: Path, kind: str) -> dict[int, Path]:
    folder = root / kind
    if not folder.is_dir():
        return {}
    out = {}
    for child in sorted(folder.iterdir()):
        match = _PERSON_DIR.match(child.name)
        if match and child.is_dir():
            out[int(match.group(1))] = child
    return out


def _listed(root: Path, skipped: list[SkippedRecord]) -> set[Path] | None:
    """The media files a synthetic suite's manifest (``suite.json`` beside the data folder)
    lists, ``None`` when there is none (the release has none: every file counts)."""
    if root.name != "data" or not (root.parent / "suite.json").is_file():
        return None
    from m3kit.synth.ego.suite import suite_files
    from m3kit.synth.errors import SynthError

    try:
        files = suite_files(root.parent)
    except SynthError as exc:
        skipped.append(SkippedRecord.at(exc.path or root.parent / "suite.json", None,
                                        f"{exc.reason}: the files are not checked against it",
                                        exc.field))
        return None
    return {root.parent / name for name in files or []}


def _is_listed(file: Path, listed: set[Path] | None, skipped: list[SkippedRecord]) -> bool:
    if listed is None or file in listed:
        return True
    skipped.append(SkippedRecord.at(file, None, "not listed in the suite's manifest "
                                    "(suite.json): a file of another suite, left out of the "
                                    "person's timeline"))
    return False


def _videos(root: Path, listed: set[Path] | None,
            skipped: list[SkippedRecord]) -> dict[tuple[int, str], Path]:
    out = {}
    for subject, folder in _person_folders(root, "video").items():
        for file in sorted(folder.glob("*.mp4")):
            if _is_listed(file, listed, skipped):
                out[(subject, file.stem)] = file
    return out


def _transcripts(root: Path, listed: set[Path] | None, skipped: list[SkippedRecord]
                 ) -> dict[tuple[int, str], list[tuple[Path, TranscriptKind]]]:
    """Each session's transcript files, the one to read first first: the aligned one, then the
    Whisper one."""
    out: dict[tuple[int, str], list[tuple[Path, TranscriptKind]]] = defaultdict(list)
    for subject, folder in _person_folders(root, "transcripts").items():
        for suffix, kind in _TRANSCRIPTS:
            for file in sorted(folder.glob(f"*{suffix}")):
                if _is_listed(file, listed, skipped):
                    out[(subject, file.name[: -len(suffix)])].append((file, kind))
    return dict(out)


def _duration(video: Path) -> float:
    from m3kit.media.info import video_info

    return float(video_info(video).duration)


def _transcript(root: Path, found: Sequence[tuple[Path, TranscriptKind]],
                duration: float | None, skipped: list[SkippedRecord]
                ) -> tuple[Path, TranscriptKind, TranscriptFile] | None:
    """The first of a session's transcript files that can be read, as read (its lines' skips
    named), each unreadable one named with the file read in its place; ``None`` when none
    can."""
    for n, (file, kind) in enumerate(found):
        try:
            resolve_in_root(root, file.relative_to(root).as_posix(), path=file)
            read = read_transcript(file, kind, duration)
        except M3kitError as exc:  # unreadable, or a link out of the data folder
            instead = (f": {found[n + 1][0].name} is read instead" if n + 1 < len(found)
                       else "")
            skipped.append(SkippedRecord.at(exc.path or file, exc.record,
                                            f"{exc.reason}{instead}", exc.field))
            continue
        skipped += read.skipped
        return file, kind, read
    return None


def _transcript_start(file: Path, read: TranscriptFile,
                      skipped: list[SkippedRecord]) -> float | None:
    """A session's start as its transcript states it (the last resort), on the clock."""
    field = next((f for f in ("video_start_time_unix", "start_time_unix") if f in read.meta),
                 None)
    if field is None:
        return None
    try:
        return _UNIX_TIME.validate_python(read.meta[field])
    except ValidationError as exc:
        skipped.append(SkippedRecord.at(file, None, record_skip(exc).reason,
                                        f"metadata.{field}"))
        return None


def read_sessions(root: Path, starts: Mapping[tuple[int, str], float],
                  skipped: list[SkippedRecord]) -> dict[int, list[TimelineSession]]:
    """Every session of the layout under the data folder ``root`` placed on its person's
    clock (``starts``: (person, video id) → unix s, before a transcript's own), its
    transcript read, each problem appended to ``skipped`` (also the annotation pipeline's
    way to find recordings)."""
    listed = _listed(root, skipped)
    videos = _videos(root, listed, skipped)
    candidates = _transcripts(root, listed, skipped)
    # a session by its lower-cased id (transcript files are named so), under the id its mp4
    # or its records spell
    keys: dict[tuple[int, str], str] = {}
    for (subject, vid) in [*videos, *starts]:
        keys.setdefault((subject, vid.lower()), vid)
    for (subject, lower) in candidates:
        keys.setdefault((subject, lower), lower)
    out: dict[int, list[TimelineSession]] = defaultdict(list)
    for (subject, lower), vid in sorted(keys.items()):
        video = videos.get((subject, vid))
        found = candidates.get((subject, lower), [])
        if video is None and not found:
            continue  # named by records only: no session (their questions are skipped)
        duration = None
        if video is not None:
            try:
                resolve_in_root(root, video.relative_to(root).as_posix(), path=video)
                duration = _duration(video)
            except M3kitError as exc:  # undecodable, or a link out of the data folder
                skipped.append(SkippedRecord.at(video, None, f"video unusable ({exc.reason}): "
                                                "the session is transcript-only", "video"))
                video = None
        read = _transcript(root, found, duration, skipped)
        start = starts.get((subject, vid))
        if start is None and read is not None:
            start = _transcript_start(read[0], read[2], skipped)
        if start is None:
            skipped.append(SkippedRecord.at(
                video or (read[0] if read else found[0][0] if found else root), None,
                f"session {vid} of person {subject}: no record gives its start time, so it "
                "is left off the person's timeline", "video_start_time_unix"))
            continue
        if read is None and video is None:
            continue  # nothing usable is left of it (named above): its questions are skipped
        if read is None:
            skipped.append(SkippedRecord.at(
                root / "transcripts" / f"person_{subject}" / f"{lower}{ALIGNED_SUFFIX}", None,
                f"session {vid} of person {subject} has no transcript: video only",
                "transcript"))
        out[subject].append(TimelineSession(
            subject=subject, video_id=vid, start=start,
            video=video.relative_to(root).as_posix() if video is not None else None,
            transcript=read[0].relative_to(root).as_posix() if read else None,
            transcript_kind=read[1] if read else None, duration=duration,
            lines=read[2].lines if read else [],
        ))
    return {s: sorted(v, key=lambda x: (x.start, x.video_id)) for s, v in sorted(out.items())}


def _span_past_end(parsed: _Parsed, sessions: Mapping[int, Sequence[TimelineSession]]
                   ) -> tuple[str, str] | None:
    known = {s.video_id: s for s in sessions.get(parsed.subject, [])}
    for kind, spans in (("question_evidence.time_spans", parsed.spans),
                        ("answer_evidence.evidence_list", parsed.answer_spans)):
        for n, span in enumerate(spans):
            session = known.get(span.video_id)
            if session is not None and session.duration is not None and \
                    span.end > session.duration + SPAN_SLACK_S:
                reason = (f"ends at {span.end:g} s, past the end of video {span.video_id} "
                          f"({session.duration:g} s)")
                return f"{kind}[{n}].end_time", reason
    return None


def load_supermemory(data: str | Path) -> SuperMemorySet:
    """The questions of ``data`` (a folder holding ``data/json/all_qa.json``, the ``data``
    folder, or the JSON file alone) and, for a folder, each person's sessions with their
    transcripts read (once: a task's samples share them); every unusable record skipped and
    named. ``SuperMemoryError`` when the JSON cannot be read at all."""
    qa_file, root = find_qa_file(data)
    skipped: list[SkippedRecord] = []
    parsed: list[_Parsed] = []
    seen: set[str] = set()
    skipped_ids: list[str] = []
    starts: dict[tuple[int, str], float] = {}
    for n, raw in enumerate(_raw_records(qa_file)):
        name = _record_name(raw, n)
        try:
            record = _parse(raw)
            if record.qid in seen:
                raise RecordSkip("question_id", "given again: the first record is kept")
            for vid, start in record.starts.items():
                earlier = starts.setdefault((record.subject, vid), start)
                if earlier != start:
                    raise RecordSkip("metadata.primary_video_start_time",
                                      f"video {vid} starts at {start!r} here but at "
                                      f"{earlier!r} in an earlier record")
        except RecordSkip as skip:
            skipped.append(SkippedRecord.at(qa_file, name, skip.reason, skip.field or None))
            if skip.field != "question_id":
                skipped_ids.append(name)
            continue
        seen.add(record.qid)
        parsed.append(record)
    sessions = read_sessions(root, starts, skipped) if root is not None else {}
    questions = []
    for record in parsed:
        named = {s.video_id for s in [*record.spans, *record.answer_spans]} | {record.primary}
        video_starts = {v: starts[(record.subject, v)] for v in sorted(named)
                        if (record.subject, v) in starts}
        question = record.question.model_copy(update={
            "metadata": {**record.question.metadata, "video_starts": video_starts}})
        if root is not None:
            problem = _span_past_end(record, sessions)
            session = next((s for s in sessions.get(record.subject, [])
                            if s.video_id == record.primary), None)
            if session is None:
                problem = ("metadata.primary_video_id",
                           (f"person {record.subject} has no session {record.primary} (no "
                            "video nor transcript)"))
            if problem is not None:
                skipped.append(SkippedRecord.at(qa_file, record.qid, problem[1], problem[0]))
                skipped_ids.append(record.qid)
                continue
            if session is not None and session.video is not None:
                question = question.model_copy(update={
                    "media": [VideoRef(path=session.video, clock_start=session.start)]})
        questions.append(question)
    return SuperMemorySet(qa_file=qa_file, root=root, questions=questions, sessions=sessions,
                          skipped=skipped, skipped_question_ids=skipped_ids)
