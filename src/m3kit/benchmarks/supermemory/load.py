"""SuperMemory-VQA's released files as m3kit ``Question``s and each person's sessions on one
absolute clock (seed 003 §3, appendix D.2; the dataset release).

Layout (``ROOT``, or ``ROOT/data`` given directly; the JSON alone is enough for scoring)::

    data/json/all_qa.json
    data/video/Person_<n>/<video_id>.mp4
    data/transcripts/person_<n>/<video_id lower-cased>_gemini_aligned_transcript.json
    data/transcripts/person_<n>/<video_id lower-cased>_whisper_transcript.json

A record of ``all_qa.json`` becomes one ``Question``: ``id`` the ``question_id``, four lettered
choices with their roles (``correct`` / ``vague`` / ``wrong`` by ``choice_types``, the abstain
option by its text), ``answer`` the letter of ``correct_option_index``, ``time`` the question's
moment in unix seconds: the question video's start plus the largest ``end_time`` of its
``question_evidence`` spans on that video (legacy records: one ``time_span`` of ``MM:SS``
strings). Its ``media`` is the question's session video placed on that clock (``clock_start``),
so ``m3kit.harness.frames.select_frames`` cuts it at the question time.

A session is one recording of a person: its video and/or its transcript, its start (unix s)
taken from the records that name it (``metadata.primary_video_start_time`` / ``start_time``
for the question video, ``video_start_time_unix`` of an evidence span for another; a
transcript's ``metadata.start_time_unix`` (or ``video_start_time_unix``) as the last resort). One session of the
release has no mp4: it is transcript-only, not an error. The aligned transcript is read when
it exists (its ``person`` labels are the questions'); the Whisper one only without it, with no
speaker (its diarisation labels are not the questions' people).

Each unusable record is skipped and named (file, record, field): not four choices or choice
types, an unknown choice type, no abstain option, a gold index out of range,
``is_answerable`` disagreeing with the gold, an unknown skill, a question id given again
(the first is kept), a start time that disagrees with another record's for the same video, a
span past its video's end, a question video the layout does not have. A session without a
known start is left off its person's timeline and named, never placed at a guessed time.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import M3kitError, SchemaError
from m3kit.paths import resolve_in_root
from m3kit.schema import Choice, ChoiceRole, Question, SkippedRecord, VideoRef
from m3kit.schema.supermemory import ABSTAIN_TEXT, SKILLS

__all__ = [
    "ABSTAIN_TEXT",
    "BENCHMARK",
    "CHOICE_TYPES",
    "SKILLS",
    "EvidenceSpan",
    "Session",
    "SpokenLine",
    "SuperMemoryError",
    "SuperMemorySet",
    "data_files",
    "find_qa_file",
    "is_abstain_text",
    "load_supermemory",
    "read_transcript",
]

BENCHMARK = "supermemory"
QA_FILE = Path("json") / "all_qa.json"
CHOICE_TYPES: tuple[str, ...] = ("correct", "vague", "incorrect")
N_CHOICES = 4
# The abstain option: the release's text (``ABSTAIN_TEXT``) and the spellings appendix D.1
# gives it ("N/A", "This question cannot be answered").
_ABSTAIN = re.compile(r"^\s*(this question (can ?not|cannot) be answered\.?|n/?a\.?)\s*$",
                      re.IGNORECASE)
_ROLES = {"correct": ChoiceRole.CORRECT, "vague": ChoiceRole.VAGUE,
          "incorrect": ChoiceRole.WRONG}
_MMSS = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")
_PERSON_DIR = re.compile(r"^person_(\d+)$", re.IGNORECASE)
ALIGNED_SUFFIX = "_gemini_aligned_transcript.json"
WHISPER_SUFFIX = "_whisper_transcript.json"
# A span may end this far past its video's last frame (the last frame's duration, rounding).
SPAN_SLACK_S = 1.0


class SuperMemoryError(SchemaError):
    """A SuperMemory-VQA file or record is unusable (names the file, record and field)."""


class EvidenceSpan(BaseModel):
    """A time span of evidence: seconds local to ``video_id``'s recording."""

    model_config = ConfigDict(frozen=True)

    video_id: str
    start: float
    end: float


class SpokenLine(BaseModel):
    """One transcript line: seconds from the recording's start, who spoke (``None``: not
    known), what (``kind`` ``speech`` or ``sound``)."""

    model_config = ConfigDict(frozen=True)

    start: float
    end: float
    text: str
    person: str | None = None
    kind: str = "speech"


class Session(BaseModel):
    """One recording of a person on the absolute clock: ``start`` in unix seconds; ``video``
    and ``transcript`` relative to the data folder (``None``: not released); ``duration`` of
    the video in seconds when there is one."""

    model_config = ConfigDict(frozen=True)

    subject: int
    video_id: str
    start: float
    video: str | None = None
    transcript: str | None = None
    transcript_kind: Literal["aligned", "whisper"] | None = None
    duration: float | None = None


class SuperMemorySet(BaseModel):
    """The loaded questions, each person's sessions in time order, and what was skipped.
    ``root`` is the data folder (``None`` when only the JSON was given)."""

    qa_file: Path
    root: Path | None = None
    questions: list[Question] = Field(default_factory=list)
    sessions: dict[int, list[Session]] = Field(default_factory=dict)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    skipped_question_ids: list[str] = Field(default_factory=list)

    def session(self, subject: int, video_id: str) -> Session | None:
        """The session ``video_id`` of person ``subject``, if loaded."""
        return next((s for s in self.sessions.get(subject, []) if s.video_id == video_id), None)


def is_abstain_text(text: str) -> bool:
    """Whether a choice is the abstain option ("This question can not be answered.", also
    "cannot" and "N/A")."""
    return _ABSTAIN.match(text) is not None


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
    """The question file (the data set's fingerprint is taken over it)."""
    return [find_qa_file(data)[0]]


# -- records -----------------------------------------------------------------------------------


class _RecordSkip(Exception):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field, self.reason = field, reason


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _RecordSkip(field, f"not a number: {value!r}")
    return float(value)


def _local_seconds(value: Any, field: str) -> float:
    """Seconds local to a video: a number, or a legacy ``MM:SS`` / ``HH:MM:SS`` string."""
    if isinstance(value, str):
        match = _MMSS.match(value)
        if not match:
            raise _RecordSkip(field, f"not a time (seconds or MM:SS): {value!r}")
        hours, minutes, seconds = match.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    seconds = _number(value, field)
    if seconds < 0:
        raise _RecordSkip(field, f"a negative time: {value!r}")
    return seconds


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _RecordSkip(field, "missing or not text")
    return value


def _question_spans(raw: Mapping[str, Any], primary: str) -> list[EvidenceSpan]:
    evidence = raw.get("question_evidence")
    if not isinstance(evidence, Mapping):
        raise _RecordSkip("question_evidence", "missing or not an object")
    if "time_spans" in evidence:
        spans = evidence["time_spans"]
        field = "question_evidence.time_spans"
    elif "time_span" in evidence:  # legacy records: one span of MM:SS strings
        spans = [evidence["time_span"]]
        field = "question_evidence.time_span"
    else:
        raise _RecordSkip("question_evidence.time_spans", "missing")
    if not isinstance(spans, list) or not spans:
        raise _RecordSkip(field, "not a non-empty list of spans")
    out = []
    for n, span in enumerate(spans):
        where = f"{field}[{n}]" if field.endswith("spans") else field
        if not isinstance(span, Mapping):
            raise _RecordSkip(where, "not an object")
        start = _local_seconds(span.get("start_time"), f"{where}.start_time")
        end = _local_seconds(span.get("end_time"), f"{where}.end_time")
        if end < start:
            raise _RecordSkip(f"{where}.end_time", f"ends ({end:g} s) before it starts "
                                                   f"({start:g} s)")
        out.append(EvidenceSpan(video_id=str(span.get("video_id") or primary), start=start,
                                end=end))
    return out


def _answer_spans(raw: Mapping[str, Any]) -> list[EvidenceSpan]:
    evidence = raw.get("answer_evidence")
    if not isinstance(evidence, Mapping):
        return []  # unanswerable questions may carry none
    items = evidence.get("evidence_list") or []
    if not isinstance(items, list):
        raise _RecordSkip("answer_evidence.evidence_list", "not a list")
    out = []
    for n, item in enumerate(items):
        where = f"answer_evidence.evidence_list[{n}]"
        span = item.get("time_span") if isinstance(item, Mapping) else None
        if not isinstance(span, Mapping) or not item.get("video_id"):
            raise _RecordSkip(where, "needs video_id and time_span{start_time, end_time}")
        start = _local_seconds(span.get("start_time"), f"{where}.time_span.start_time")
        end = _local_seconds(span.get("end_time"), f"{where}.time_span.end_time")
        out.append(EvidenceSpan(video_id=str(item["video_id"]), start=start, end=end))
    return out


def _choices(raw: Mapping[str, Any]) -> tuple[list[Choice], list[str], int]:
    texts = raw.get("choices")
    if not isinstance(texts, list) or len(texts) != N_CHOICES:
        raise _RecordSkip("choices", f"needs {N_CHOICES} choices, got "
                          f"{len(texts) if isinstance(texts, list) else type(texts).__name__}")
    texts = [_text(t, f"choices[{n}]") for n, t in enumerate(texts)]
    types = raw.get("choice_types")
    if not isinstance(types, list) or len(types) != N_CHOICES:
        raise _RecordSkip("choice_types", f"needs {N_CHOICES} choice types")
    types = [str(t).strip().lower() for t in types]
    for n, kind in enumerate(types):
        if kind not in CHOICE_TYPES:
            raise _RecordSkip(f"choice_types[{n}]", f"unknown choice type {kind!r} "
                              f"(known: {', '.join(CHOICE_TYPES)})")
    abstain = [n for n, t in enumerate(texts) if is_abstain_text(t)]
    if len(abstain) != 1:
        raise _RecordSkip("choices", "no abstain option (\"This question can not be "
                          "answered.\")" if not abstain else "more than one abstain option")
    gold = raw.get("correct_option_index")
    if isinstance(gold, bool) or not isinstance(gold, int) or not 0 <= gold < N_CHOICES:
        raise _RecordSkip("correct_option_index", f"not an index 0-{N_CHOICES - 1}: {gold!r}")
    choices = [
        Choice(letter=chr(ord("A") + n), text=text,
               role=ChoiceRole.ABSTAIN if n == abstain[0] else _ROLES[types[n]])
        for n, text in enumerate(texts)
    ]
    return choices, types, gold


def _answerable(raw: Mapping[str, Any], gold_is_abstain: bool) -> bool:
    flag = raw.get("is_answerable")
    if not isinstance(flag, bool):
        raise _RecordSkip("is_answerable", f"not true or false: {flag!r}")
    if flag == gold_is_abstain:
        said = "answerable" if flag else "unanswerable"
        gold = "the abstain option" if gold_is_abstain else "an answer"
        raise _RecordSkip("is_answerable", f"says {said} but the gold is {gold}")
    return flag


class _Parsed(BaseModel):
    """A record read, before it is placed on the timeline."""

    model_config = ConfigDict(frozen=True)

    qid: str
    subject: int
    question: Question
    primary: str
    primary_start: float
    cut: float  # local seconds on the primary video
    spans: list[EvidenceSpan]
    answer_spans: list[EvidenceSpan]
    starts: dict[str, float]  # video id -> unix start, as this record states them


def _parse(raw: Mapping[str, Any]) -> _Parsed:
    qid = raw.get("question_id")
    if isinstance(qid, bool) or not isinstance(qid, int | str) or not str(qid).strip():
        raise _RecordSkip("question_id", f"not an id: {qid!r}")
    subject = raw.get("subject")
    if isinstance(subject, str) and subject.strip().isdigit():
        subject = int(subject)
    if isinstance(subject, bool) or not isinstance(subject, int):
        raise _RecordSkip("subject", f"not a person number: {subject!r}")
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        raise _RecordSkip("metadata", "missing or not an object")
    skill = meta.get("skill")
    if skill not in SKILLS:
        raise _RecordSkip("metadata.skill", f"unknown skill {skill!r}")
    primary = _text(meta.get("primary_video_id"), "metadata.primary_video_id")
    primary_start = _number(meta.get("primary_video_start_time", raw.get("start_time")),
                            "metadata.primary_video_start_time")
    if raw.get("start_time") is not None and \
            _number(raw["start_time"], "start_time") != primary_start:
        raise _RecordSkip("start_time", f"{raw['start_time']!r} disagrees with "
                          f"metadata.primary_video_start_time {primary_start!r}")
    choices, types, gold = _choices(raw)
    answerable = _answerable(raw, choices[gold].role is ChoiceRole.ABSTAIN)
    spans = _question_spans(raw, primary)
    on_primary = [s for s in spans if s.video_id == primary]
    if not on_primary:
        raise _RecordSkip("question_evidence.time_spans",
                          f"no span on the question's video {primary!r}")
    starts = {primary: primary_start}
    for n, span in enumerate(raw["question_evidence"].get("time_spans") or []):
        if isinstance(span, Mapping) and span.get("video_start_time_unix") is not None:
            vid = str(span.get("video_id") or primary)
            start = _number(span["video_start_time_unix"],
                            f"question_evidence.time_spans[{n}].video_start_time_unix")
            if starts.setdefault(vid, start) != start:
                raise _RecordSkip(f"question_evidence.time_spans[{n}].video_start_time_unix",
                                  f"{start!r} disagrees with {starts[vid]!r} for video {vid}")
    cut = max(s.end for s in on_primary)
    video_ids = raw.get("video_ids") or [primary]
    answer_spans = _answer_spans(raw)
    question = Question(
        id=str(qid).strip(), benchmark=BENCHMARK, text=_text(raw.get("question"), "question"),
        choices=choices, answer=chr(ord("A") + gold), question_type=str(skill),
        time=primary_start + cut,
        evidence=[f"{s.video_id}@{s.start:g}-{s.end:g}" for s in answer_spans],
        metadata={
            "skill": skill, "subject": subject, "primary_video_id": primary,
            "video_ids": [str(v) for v in video_ids] if isinstance(video_ids, list) else [primary],
            "is_answerable": answerable, "choice_types": types,
            "correct_answer": raw.get("correct_answer"),
            "question_cut_s": cut,
            "question_spans": [s.model_dump() for s in spans],
            "answer_spans": [s.model_dump() for s in answer_spans],
        },
    )
    return _Parsed(qid=question.id, subject=subject, question=question, primary=primary,
                   primary_start=primary_start, cut=cut, spans=spans,
                   answer_spans=answer_spans, starts=starts)


def _raw_records(qa_file: Path) -> list[Any]:
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


def _record_name(raw: Any, n: int) -> str:
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


def _videos(root: Path) -> dict[tuple[int, str], Path]:
    out = {}
    for subject, folder in _person_folders(root, "video").items():
        for file in sorted(folder.glob("*.mp4")):
            out[(subject, file.stem)] = file
    return out


def _transcripts(root: Path) -> dict[tuple[int, str], tuple[Path, Literal["aligned", "whisper"]]]:
    out: dict[tuple[int, str], tuple[Path, Literal["aligned", "whisper"]]] = {}
    for subject, folder in _person_folders(root, "transcripts").items():
        for file in sorted(folder.glob(f"*{WHISPER_SUFFIX}")):
            out.setdefault((subject, file.name[: -len(WHISPER_SUFFIX)]), (file, "whisper"))
        for file in sorted(folder.glob(f"*{ALIGNED_SUFFIX}")):
            out[(subject, file.name[: -len(ALIGNED_SUFFIX)])] = (file, "aligned")
    return out


def read_transcript(path: str | Path, kind: Literal["aligned", "whisper"] = "aligned",
                    ) -> tuple[list[SpokenLine], list[SkippedRecord], dict[str, Any]]:
    """The lines of a transcript file (seconds from the recording's start, in file order),
    the lines skipped (each named: no start/end, an end before its start, text that is not
    text; a line of blank text is no line), and the
    file's ``metadata`` object. The aligned file keeps ``person`` (``User``, ``A``...); a
    Whisper file's ``speaker`` is dropped (its diarisation labels are not the questions'
    people). ``SuperMemoryError`` when the file is not a transcript at all."""
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
                raise _RecordSkip("", "not an object")
            start = _local_seconds(entry.get("start"), "start")
            end = _local_seconds(entry.get("end"), "end")
            if end < start:
                raise _RecordSkip("end", f"ends ({end:g} s) before it starts ({start:g} s)")
            if isinstance(entry.get("text"), str) and not entry["text"].strip():
                continue  # nothing was heard: no line, and nothing wrong with the file
            text = _text(entry.get("text"), "text").strip()
        except _RecordSkip as skip:
            skipped.append(SkippedRecord.at(file, f"transcript[{n}]", skip.reason,
                                            skip.field or None))
            continue
        person = entry.get("person") if kind == "aligned" else None
        lines.append(SpokenLine(start=start, end=end, text=text,
                                person=str(person) if person not in (None, "") else None,
                                kind=str(entry.get("kind") or "speech")))
    return lines, skipped, meta


def _duration(video: Path) -> float:
    from m3kit.media.info import video_info

    return float(video_info(video).duration)


def _sessions(root: Path, starts: Mapping[tuple[int, str], float],
              skipped: list[SkippedRecord]) -> dict[int, list[Session]]:
    """Every session of the layout placed on its person's clock."""
    videos = _videos(root)
    transcripts = _transcripts(root)
    # a session by its lower-cased id (transcript files are named so), under the id its mp4
    # or its records spell
    keys: dict[tuple[int, str], str] = {}
    for (subject, vid) in [*videos, *starts]:
        keys.setdefault((subject, vid.lower()), vid)
    for (subject, lower) in transcripts:
        keys.setdefault((subject, lower), lower)
    out: dict[int, list[Session]] = defaultdict(list)
    for (subject, lower), vid in sorted(keys.items()):
        video = videos.get((subject, vid))
        found = transcripts.get((subject, lower))
        if video is None and found is None:
            continue  # named by records only: no session (their questions are skipped)
        start = starts.get((subject, vid))
        if start is None and found is not None:
            try:
                meta = read_transcript(*found)[2]
            except SuperMemoryError:
                meta = {}
            value = meta.get("video_start_time_unix", meta.get("start_time_unix"))
            start = float(value) if isinstance(value, int | float) and not isinstance(
                value, bool) else None
        if start is None:
            skipped.append(SkippedRecord.at(
                video or (found[0] if found else root), None,
                f"session {vid} of person {subject}: no record gives its start time, so it "
                "is left off the person's timeline", "video_start_time_unix"))
            continue
        duration = None
        if video is not None:
            try:
                resolve_in_root(root, video.relative_to(root).as_posix(), path=video)
                duration = _duration(video)
            except M3kitError as exc:  # undecodable, or a link out of the data folder
                skipped.append(SkippedRecord.at(video, None, f"video unusable ({exc.reason}): "
                                                "the session is transcript-only", "video"))
                video = None
        transcript = None
        if found is not None:
            try:
                resolve_in_root(root, found[0].relative_to(root).as_posix(), path=found[0])
                skipped += read_transcript(*found)[1]
            except M3kitError as exc:  # unreadable, or a link out of the data folder
                skipped.append(SkippedRecord.from_error(exc))
                found = None
        if found is None and video is None:
            continue  # nothing usable is left of it (named above): its questions are skipped
        if found is None:
            skipped.append(SkippedRecord.at(
                root / "transcripts" / f"person_{subject}" / f"{lower}{ALIGNED_SUFFIX}", None,
                f"session {vid} of person {subject} has no transcript: video only",
                "transcript"))
        else:
            transcript = found[0].relative_to(root).as_posix()
        out[subject].append(Session(
            subject=subject, video_id=vid, start=start,
            video=video.relative_to(root).as_posix() if video is not None else None,
            transcript=transcript, transcript_kind=found[1] if found else None,
            duration=duration,
        ))
    return {s: sorted(v, key=lambda x: (x.start, x.video_id)) for s, v in sorted(out.items())}


def _span_past_end(parsed: _Parsed, sessions: Mapping[int, Sequence[Session]]
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
    folder, or the JSON file alone) and, for a folder, each person's sessions; every unusable
    record skipped and named. ``SuperMemoryError`` when the JSON cannot be read at all."""
    qa_file, root = find_qa_file(data)
    skipped: list[SkippedRecord] = []
    parsed: list[_Parsed] = []
    seen: set[str] = set()
    skipped_ids: list[str] = []
    starts: dict[tuple[int, str], float] = {}
    for n, raw in enumerate(_raw_records(qa_file)):
        name = _record_name(raw, n)
        try:
            if not isinstance(raw, Mapping):
                raise _RecordSkip("", "not a JSON object")
            record = _parse(raw)
            if record.qid in seen:
                raise _RecordSkip("question_id", "given again: the first record is kept")
            for vid, start in record.starts.items():
                known = starts.setdefault((record.subject, vid), start)
                if known != start:
                    raise _RecordSkip("metadata.primary_video_start_time",
                                      f"video {vid} starts at {start!r} here but at "
                                      f"{known!r} in an earlier record")
        except _RecordSkip as skip:
            skipped.append(SkippedRecord.at(qa_file, name, skip.reason, skip.field or None))
            if skip.field != "question_id":
                skipped_ids.append(name)
            continue
        seen.add(record.qid)
        parsed.append(record)
    sessions = _sessions(root, starts, skipped) if root is not None else {}
    questions = []
    for record in parsed:
        named = {s.video_id for s in [*record.spans, *record.answer_spans]} | {record.primary}
        known = {v: starts[(record.subject, v)] for v in sorted(named)
                 if (record.subject, v) in starts}
        record = record.model_copy(update={"question": record.question.model_copy(update={
            "metadata": {**record.question.metadata, "video_starts": known}})})
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
                record = record.model_copy(update={"question": record.question.model_copy(
                    update={"media": [VideoRef(path=session.video, clock_start=session.start)]}
                )})
        questions.append(record.question)
    return SuperMemorySet(qa_file=qa_file, root=root, questions=questions, sessions=sessions,
                          skipped=skipped, skipped_question_ids=skipped_ids)
