"""SuperMemory-VQA's released layout as records (seed 003 §3, appendix D.2; the dataset release).

The one definition of the format: the benchmark's loader validates every record and transcript
line with these models (skipping and naming a bad one: ``release_problem``) and the synthetic
egocentric suite writes its files from them, so the two cannot drift.

    data/json/all_qa.json                                   list of ``QARecord``
    data/video/Person_<n>/<video_id>.mp4                    a session (absent: transcript-only)
    data/transcripts/person_<n>/<video_id lower>_gemini_aligned_transcript.json
                                                            ``AlignedTranscript``
    data/transcripts/person_<n>/<video_id lower>_whisper_transcript.json
                                                            ``WhisperTranscript`` (diarisation
                                                            labels, not the questions' persons)

Times: ``start_time`` / ``video_start_time_unix`` / ``primary_video_start_time`` are unix
seconds of a session's start (``UnixTime``: on ``CLOCK_RANGE_UNIX``); spans and transcript
lines are seconds local to their session (``LocalSeconds``: up to ``MAX_SESSION_S``, or a
legacy ``MM:SS`` string).

The models read what the release holds as leniently as the release needs: keys they do not
name are ignored, a question id may be text, a person number a digit string, a choice type
any case, a question's evidence a legacy ``time_span`` of ``MM:SS`` strings, a span's video
its question's by default, and the values no reader uses (``correct_answer``, an aligned line's
``timing_source``...) are kept as given. What a reader needs is checked: each violation names
its field (``choices[2]``, ``question_evidence.time_spans[0].end_time``) and why.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

__all__ = [
    "ABSTAIN_TEXT",
    "ALIGNED_SUFFIX",
    "ALL_QA_PATH",
    "CHOICE_TYPES",
    "CLOCK_RANGE_UNIX",
    "DATA_DIR",
    "MAX_SESSION_S",
    "N_CHOICES",
    "SKILLS",
    "AlignedTranscript",
    "AnswerEvidence",
    "AnswerEvidenceItem",
    "ChoiceType",
    "LocalSeconds",
    "LocalSpan",
    "QAMetadata",
    "QARecord",
    "QuestionEvidence",
    "QuestionSpan",
    "Skill",
    "TranscriptLine",
    "UnixTime",
    "WHISPER_SUFFIX",
    "WhisperSegment",
    "WhisperTranscript",
    "aligned_transcript_path",
    "is_abstain_text",
    "release_problem",
    "video_path",
    "whisper_transcript_path",
]

# The abstain option's text in the release (appendix D.1 calls it "N/A" or "This question
# cannot be answered"; readers also accept those: ``is_abstain_text``).
ABSTAIN_TEXT = "This question can not be answered."
_ABSTAIN = re.compile(r"^\s*(this question (can ?not|cannot) be answered\.?|n/?a\.?)\s*$",
                      re.IGNORECASE)
DATA_DIR = "data"
ALL_QA_PATH = f"{DATA_DIR}/json/all_qa.json"
ALIGNED_SUFFIX = "_gemini_aligned_transcript.json"
WHISPER_SUFFIX = "_whisper_transcript.json"
N_CHOICES = 4
# The clock a person's recordings lie on, in unix seconds: 1970-01-01 to 2100-01-01 (UTC). A
# start past it is no recording's (milliseconds for seconds, a fuzzed number).
CLOCK_RANGE_UNIX: tuple[float, float] = (0.0, 4_102_444_800.0)
# The longest a session (one recording, a person's day) may be: a time local to a session past
# it is no time in the recording. With ``CLOCK_RANGE_UNIX`` it keeps every moment a reader
# places on the clock a date (``datetime`` stops at year 9999).
MAX_SESSION_S = 86_400.0

Skill = Literal[
    "object_location_memory",
    "conversational_memory",
    "visual_recall",
    "in_context_retrieval",
    "timeline_reconstruction",
    "intent_recall",
]
# The six task categories (seed 003 §3, appendix A.1), in the paper's order.
SKILLS: tuple[str, ...] = get_args(Skill)
# Appendix D.2: correct, vague (technically plausible but underspecified), wrong. The release
# writes the wrong kind as "incorrect".
ChoiceType = Literal["correct", "vague", "incorrect"]
CHOICE_TYPES: tuple[str, ...] = get_args(ChoiceType)

# A pydantic error type of its own: its message is the reason as a reader names it, and its
# context may name the field a check of the whole record is about (``release_problem``).
_PROBLEM = "supermemory_release"
_MMSS = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")


def _bad(reason: str, field: str | None = None) -> PydanticCustomError:
    context = {"reason": reason} if field is None else {"reason": reason, "field": field}
    return PydanticCustomError(_PROBLEM, "{reason}", context)


def is_abstain_text(text: str) -> bool:
    """Whether a choice is the abstain option ("This question can not be answered.", also
    "cannot" and "N/A")."""
    return _ABSTAIN.match(text) is not None


# -- values ------------------------------------------------------------------------------------


def _number(value: Any) -> float:
    """A finite number (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _bad(f"not a number: {value!r}")
    return float(value)


def _unix_time(value: Any) -> float:
    seconds = _number(value)
    low, high = CLOCK_RANGE_UNIX
    if not low <= seconds <= high:
        raise _bad(f"{value!r} is not a unix time of a recording (seconds from 1970 to 2100: "
                   f"{low:.0f} to {high:.0f})")
    return seconds


def _optional_unix_time(value: Any) -> float | None:
    return None if value is None else _unix_time(value)


def _local_seconds(value: Any) -> float:
    if isinstance(value, str):
        match = _MMSS.match(value)
        if not match:
            raise _bad(f"not a time (seconds or MM:SS): {value!r}")
        hours, minutes, secs = match.groups()
        seconds = int(hours or 0) * 3600 + int(minutes) * 60 + float(secs)
    else:
        seconds = _number(value)
    if seconds < 0:
        raise _bad(f"a negative time: {value!r}")
    if seconds > MAX_SESSION_S:
        raise _bad(f"{value!r} s is past the longest recording a session may be "
                   f"({MAX_SESSION_S:.0f} s, a day)")
    return seconds


def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _bad("missing or not text")
    return value


def _line_text(value: Any) -> str:
    # blank text is a line where nothing was heard: a reader drops it, nothing is wrong
    if not isinstance(value, str):
        raise _bad("missing or not text")
    return value


def _question_id(value: Any) -> int | str:
    if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
        raise _bad(f"not an id: {value!r}")
    return value


def _person_number(value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _bad(f"not a person number: {value!r}")
    return value


def _skill(value: Any) -> Any:
    if value not in SKILLS:
        raise _bad(f"unknown skill {value!r}")
    return value


def _choice_type(value: Any) -> str:
    kind = str(value).strip().lower()
    if kind not in CHOICE_TYPES:
        raise _bad(f"unknown choice type {kind!r} (known: {', '.join(CHOICE_TYPES)})")
    return kind


def _four_choices(value: Any) -> Any:
    if not isinstance(value, list) or len(value) != N_CHOICES:
        got = len(value) if isinstance(value, list) else type(value).__name__
        raise _bad(f"needs {N_CHOICES} choices, got {got}")
    return value


def _one_abstain(choices: list[str]) -> list[str]:
    abstain = [text for text in choices if is_abstain_text(text)]
    if len(abstain) != 1:
        raise _bad("no abstain option (\"This question can not be answered.\")" if not abstain
                   else "more than one abstain option")
    return choices


def _four_choice_types(value: Any) -> Any:
    if not isinstance(value, list) or len(value) != N_CHOICES:
        raise _bad(f"needs {N_CHOICES} choice types")
    return value


def _option_index(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < N_CHOICES:
        raise _bad(f"not an index 0-{N_CHOICES - 1}: {value!r}")
    return value


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _bad(f"not true or false: {value!r}")
    return value


def _video_id_or_none(value: Any) -> str | None:
    # a span without its video is on the question's video
    return str(value) if value else None


def _video_ids(value: Any) -> list[str] | None:
    return [str(v) for v in value] if isinstance(value, list) else None


def _spans(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise _bad("not a non-empty list of spans")
    return value




def _list_or_empty(value: Any) -> Any:
    value = value or []
    if not isinstance(value, list):
        raise _bad("not a list")
    return value


def _speaker_label(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def _line_kind(value: Any) -> str:
    return str(value or "speech")


UnixTime = Annotated[float, BeforeValidator(_unix_time)]
# a start that may be left out (``None`` when it is), never given as null
StatedUnixTime = Annotated[float | None, BeforeValidator(_unix_time)]
# a start that may be left out or null (``None`` either way)
OptionalUnixTime = Annotated[float | None, BeforeValidator(_optional_unix_time)]
LocalSeconds = Annotated[float, BeforeValidator(_local_seconds)]
Text = Annotated[str, BeforeValidator(_text)]
# Where the release has values no reader uses, they are kept as given.
Kept = JsonValue



class _Released(BaseModel):
    """A record of the release as read: keys it does not name are ignored, and a key it
    requires that is left out reads as null, so its field's own check names what is wrong
    ("not a number: None") as for any other bad value."""

    model_config = ConfigDict(extra="ignore")

    @model_validator(mode="before")
    @classmethod
    def _absent_is_null(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            return value
        absent = {name: None for name, field in cls.model_fields.items()
                  if field.is_required() and name not in value}
        return {**value, **absent} if absent else value


# -- all_qa.json -------------------------------------------------------------------------------


class QuestionSpan(_Released):
    """Where a question is asked: seconds local to ``video_id`` (``None``: the question's
    video), whose start is ``video_start_time_unix`` when stated."""

    start_time: LocalSeconds
    end_time: LocalSeconds
    video_id: Annotated[str | None, BeforeValidator(_video_id_or_none)] = None
    video_start_time_unix: OptionalUnixTime = None

    @model_validator(mode="after")
    def _ordered(self) -> QuestionSpan:
        if self.end_time < self.start_time:
            raise _bad(f"ends ({self.end_time:g} s) before it starts ({self.start_time:g} s)",
                       "end_time")
        return self


class QuestionEvidence(_Released):
    """The question's spans: ``time_spans``, or a legacy record's one ``time_span`` of
    ``MM:SS`` strings (read, never written)."""

    time_spans: Annotated[list[QuestionSpan], BeforeValidator(_spans)] = Field(
        default_factory=list)
    time_span: QuestionSpan | None = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _legacy_only_alone(cls, value: Any) -> Any:
        # a record that has ``time_spans`` is read by them alone; a legacy span states no
        # video start (its record's is the question video's)
        if not isinstance(value, Mapping) or "time_span" not in value:
            return value
        if "time_spans" in value:
            return {k: v for k, v in value.items() if k != "time_span"}
        legacy = value["time_span"]
        if isinstance(legacy, Mapping):
            legacy = {k: v for k, v in legacy.items() if k != "video_start_time_unix"}
        return {**value, "time_span": legacy}

    @model_validator(mode="after")
    def _given(self) -> QuestionEvidence:
        if not self.time_spans and self.time_span is None:
            raise _bad("missing", "time_spans")
        return self

    @property
    def spans(self) -> list[QuestionSpan]:
        if self.time_spans or self.time_span is None:
            return self.time_spans
        return [self.time_span]


class LocalSpan(_Released):
    """Seconds local to a session."""

    start_time: LocalSeconds
    end_time: LocalSeconds


class AnswerEvidenceItem(_Released):
    """Where the answer was recorded: seconds local to ``video_id``, whose start is
    ``video_start_time_unix`` when stated (m3kit's annotation pipeline states it, so a session
    holding only evidence is placed on the clock even when its transcript does not say)."""

    video_id: str
    time_span: LocalSpan
    video_start_time_unix: OptionalUnixTime = None

    @model_serializer(mode="wrap")
    def _start_when_stated(self, handler: SerializerFunctionWrapHandler) -> Any:
        # a start not stated is no key at all, as in the release's records
        data = handler(self)
        if isinstance(data, dict) and data.get("video_start_time_unix") is None:
            data.pop("video_start_time_unix", None)
        return data

    @model_validator(mode="before")
    @classmethod
    def _shaped(cls, value: Any) -> Any:
        if isinstance(value, AnswerEvidenceItem):
            return value
        if not isinstance(value, Mapping) \
                or not isinstance(value.get("time_span"), Mapping | LocalSpan) \
                or not value.get("video_id"):
            raise _bad("needs video_id and time_span{start_time, end_time}")
        return {**value, "video_id": str(value["video_id"])}


class AnswerEvidence(_Released):
    evidence_list: Annotated[list[AnswerEvidenceItem], BeforeValidator(_list_or_empty)] = \
        Field(default_factory=list)
    text: Kept = None


def _answer_evidence(value: Any) -> Any:
    # an unanswerable question may carry no answer evidence at all
    return value if isinstance(value, Mapping | AnswerEvidence) else None


class QAMetadata(_Released):
    """The release's metadata carries more keys (location, modalities...): they are kept.
    ``primary_video_start_time`` absent: the record's ``start_time`` is the video's start."""

    model_config = ConfigDict(extra="allow")  # its further keys are kept, not ignored

    skill: Annotated[Skill, BeforeValidator(_skill)]
    primary_video_id: Text
    primary_video_start_time: StatedUnixTime = None


class QARecord(_Released):
    """One question of ``all_qa.json``: four choices (one the abstain option) typed by
    ``choice_types``, the gold ``correct_option_index``, ``is_answerable`` agreeing with it,
    at least one question span on the question's video, one start per video."""

    question_id: Annotated[int | str, BeforeValidator(_question_id)]
    subject: Annotated[int, BeforeValidator(_person_number)]
    question: Text
    choices: Annotated[list[Text], BeforeValidator(_four_choices), AfterValidator(_one_abstain)]
    choice_types: Annotated[list[Annotated[ChoiceType, BeforeValidator(_choice_type)]],
                            BeforeValidator(_four_choice_types)]
    correct_answer: Kept = None
    correct_option_index: Annotated[int, BeforeValidator(_option_index)]
    is_answerable: Annotated[bool, BeforeValidator(_flag)]
    metadata: QAMetadata
    video_ids: Annotated[list[str] | None, BeforeValidator(_video_ids)] = None
    start_time: OptionalUnixTime = None
    question_evidence: QuestionEvidence
    answer_evidence: Annotated[AnswerEvidence | None, BeforeValidator(_answer_evidence)] = None

    @model_validator(mode="after")
    def _consistent(self) -> QARecord:
        primary = self.metadata.primary_video_start_time
        if primary is None and self.start_time is None:
            raise _bad("not a number: None", "metadata.primary_video_start_time")
        if primary is not None and self.start_time is not None and self.start_time != primary:
            raise _bad(f"{self.start_time!r} disagrees with metadata.primary_video_start_time "
                       f"{primary!r}", "start_time")
        gold_is_abstain = is_abstain_text(self.choices[self.correct_option_index])
        if self.is_answerable == gold_is_abstain:
            said = "answerable" if self.is_answerable else "unanswerable"
            gold = "the abstain option" if gold_is_abstain else "an answer"
            raise _bad(f"says {said} but the gold is {gold}", "is_answerable")
        video = self.metadata.primary_video_id
        if not any((s.video_id or video) == video for s in self.question_evidence.spans):
            raise _bad(f"no span on the question's video {video!r}",
                       "question_evidence.time_spans")
        _stated_starts(self)
        return self

    @property
    def primary_start(self) -> float:
        """The question video's start (unix s)."""
        start = self.metadata.primary_video_start_time
        start = self.start_time if start is None else start
        if start is None:  # a validated record has one
            raise ValueError(f"question {self.question_id} states no start")
        return start

    @property
    def video_starts(self) -> dict[str, float]:
        """Each video's start (unix s) as this record states it: its question video's, and
        those its question spans state."""
        return _stated_starts(self)


def _stated_starts(record: QARecord) -> dict[str, float]:
    primary = record.metadata.primary_video_id
    starts = {primary: record.primary_start}
    for n, span in enumerate(record.question_evidence.time_spans):
        if span.video_start_time_unix is None:
            continue
        video = span.video_id or primary
        if starts.setdefault(video, span.video_start_time_unix) != span.video_start_time_unix:
            raise _bad(f"{span.video_start_time_unix!r} disagrees with {starts[video]!r} for "
                       f"video {video}",
                       f"question_evidence.time_spans[{n}].video_start_time_unix")
    evidence = record.answer_evidence.evidence_list if record.answer_evidence else []
    for n, item in enumerate(evidence):
        if item.video_start_time_unix is None:
            continue
        if starts.setdefault(item.video_id, item.video_start_time_unix) \
                != item.video_start_time_unix:
            raise _bad(f"{item.video_start_time_unix!r} disagrees with {starts[item.video_id]!r}"
                       f" for video {item.video_id}",
                       f"answer_evidence.evidence_list[{n}].video_start_time_unix")
    return starts


# -- transcripts -------------------------------------------------------------------------------


class _TimedLine(_Released):
    """A line of a transcript: seconds local to its session, ending no earlier than it
    starts."""

    start: LocalSeconds
    end: LocalSeconds

    @model_validator(mode="after")
    def _ordered(self) -> _TimedLine:
        if self.end < self.start:
            raise _bad(f"ends ({self.end:g} s) before it starts ({self.start:g} s)", "end")
        return self


class TranscriptLine(_TimedLine):
    """A line of an aligned transcript: ``person`` is the label questions use ("User", "A",
    "B", ...) or None; ``kind`` says whether it is speech or a sound event (the release writes
    ``speech`` and ``sound``; a line without one is speech). Blank ``text``: nothing was
    heard."""

    person: Annotated[str | None, BeforeValidator(_speaker_label)] = None
    text: Annotated[str, BeforeValidator(_line_text)]
    kind: Annotated[str, BeforeValidator(_line_kind)] = "speech"
    timing_source: Kept = None
    alignment_confidence: Kept = None  # "high", "medium" or "low" in the release


class AlignedTranscript(_Released):
    """``<video_id lower>_gemini_aligned_transcript.json``."""

    metadata: dict[str, str | int | float | None] = Field(default_factory=dict)
    transcript: list[TranscriptLine]


class WhisperSegment(_TimedLine):
    """A WhisperX segment; ``speaker`` is a diarisation label (``SPEAKER_00``...), not a
    person of the questions."""

    text: Annotated[str, BeforeValidator(_line_text)]
    speaker: Kept = None
    # WhisperX writes none (sounds are not transcribed); a segment that says one keeps it
    kind: Annotated[str, BeforeValidator(_line_kind)] = Field(default="speech", exclude=True)


class WhisperTranscript(_Released):
    """``<video_id lower>_whisper_transcript.json`` (WhisperX's ``segments``)."""

    segments: list[WhisperSegment]


# -- paths and problems --------------------------------------------------------------------------


def video_path(subject: int, video_id: str) -> str:
    """A session's mp4, relative to the dataset root."""
    return f"{DATA_DIR}/video/Person_{subject}/{video_id}.mp4"


def aligned_transcript_path(subject: int, video_id: str) -> str:
    """A session's aligned transcript, relative to the dataset root."""
    return f"{DATA_DIR}/transcripts/person_{subject}/{video_id.lower()}{ALIGNED_SUFFIX}"


def whisper_transcript_path(subject: int, video_id: str) -> str:
    """A session's Whisper transcript, relative to the dataset root."""
    return f"{DATA_DIR}/transcripts/person_{subject}/{video_id.lower()}{WHISPER_SUFFIX}"


_OBJECT_TYPES = ("model_type", "model_attributes_type", "dict_type")
# The order a reader checks a question's fields in, naming the first problem it meets: who the
# question is about and when first, then its options, its evidence, its text.
_READ_ORDER = ("question_id", "subject", "metadata", "start_time", "choices", "choice_types",
               "correct_option_index", "is_answerable", "question_evidence",
               "answer_evidence", "question")


def _read_rank(error: ErrorDetails) -> int:
    top = error["loc"][0] if error["loc"] else ""
    return _READ_ORDER.index(top) if top in _READ_ORDER else len(_READ_ORDER)


def release_problem(error: ValidationError) -> tuple[str, str]:
    """The field (``choices[2]``, ``question_evidence.time_spans[0].end_time``; empty: the
    record itself) and the reason of the first thing wrong with a record these models refused
    (in the order a reader checks a question's fields: ``_READ_ORDER``), as a reader names
    them when it skips the record."""
    first = min(error.errors(), key=_read_rank)
    parts = [*first["loc"]]
    context = first.get("ctx") or {}
    if first["type"] == _PROBLEM and "field" in context:
        parts.append(context["field"])
    field = ""
    for part in parts:
        field += f"[{part}]" if isinstance(part, int) else f".{part}" if field else str(part)
    if first["type"] == "missing":
        return field, "missing"
    if first["type"] in _OBJECT_TYPES:  # an item of a list is there, a field may be missing
        item = bool(parts) and isinstance(parts[-1], int)
        return field, "not an object" if item else "missing or not an object"
    if first["type"] == "list_type":
        return field, "not a list"
    return field, first["msg"]
