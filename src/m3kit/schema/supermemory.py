"""SuperMemory-VQA's released layout as records (seed 003 §3, appendix D.2; the dataset release).

One definition serves the benchmark's loader (which reads it leniently, skipping and naming bad
records) and the synthetic egocentric suite (which writes it), so the two cannot drift.

    data/json/all_qa.json                                   list of ``QARecord``
    data/video/Person_<n>/<video_id>.mp4                    a session (absent: transcript-only)
    data/transcripts/person_<n>/<video_id lower>_gemini_aligned_transcript.json
                                                            ``AlignedTranscript``
    data/transcripts/person_<n>/<video_id lower>_whisper_transcript.json
                                                            ``WhisperTranscript`` (diarisation
                                                            labels, not the questions' persons)

Times: ``start_time`` / ``video_start_time_unix`` / ``primary_video_start_time`` are unix
seconds of a session's start; spans and transcript lines are seconds local to their session.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ABSTAIN_TEXT",
    "ALL_QA_PATH",
    "CLOCK_RANGE_UNIX",
    "MAX_SESSION_S",
    "SKILLS",
    "AlignedTranscript",
    "AnswerEvidence",
    "AnswerEvidenceItem",
    "ChoiceType",
    "LocalSpan",
    "QAMetadata",
    "QARecord",
    "QuestionEvidence",
    "QuestionSpan",
    "Skill",
    "TranscriptLine",
    "WhisperSegment",
    "WhisperTranscript",
    "aligned_transcript_path",
    "video_path",
    "whisper_transcript_path",
]

# The abstain option's text in the release (appendix D.1 calls it "N/A" or "This question
# cannot be answered"; readers also accept those).
ABSTAIN_TEXT = "This question can not be answered."
ALL_QA_PATH = "data/json/all_qa.json"
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
AlignmentConfidence = Literal["high", "medium", "low"]

_RECORD = ConfigDict(extra="forbid")


class QuestionSpan(BaseModel):
    """Where a question is asked: seconds local to ``video_id``, whose start is
    ``video_start_time_unix``."""

    model_config = _RECORD

    start_time: float
    end_time: float
    video_id: str
    video_start_time_unix: float


class QuestionEvidence(BaseModel):
    model_config = _RECORD

    time_spans: list[QuestionSpan]


class LocalSpan(BaseModel):
    """Seconds local to a session."""

    model_config = _RECORD

    start_time: float
    end_time: float


class AnswerEvidenceItem(BaseModel):
    model_config = _RECORD

    video_id: str
    time_span: LocalSpan


class AnswerEvidence(BaseModel):
    model_config = _RECORD

    evidence_list: list[AnswerEvidenceItem]
    text: str


class QAMetadata(BaseModel):
    """The release's metadata carries more keys (location, modalities...): they are kept."""

    model_config = ConfigDict(extra="allow")

    skill: Skill
    primary_video_id: str
    primary_video_start_time: float


class QARecord(BaseModel):
    """One question of ``all_qa.json``."""

    model_config = _RECORD

    question_id: int
    subject: int
    question: str
    choices: list[str]
    choice_types: list[ChoiceType]
    correct_answer: str
    correct_option_index: int
    is_answerable: bool
    metadata: QAMetadata
    video_ids: list[str]
    start_time: float
    question_evidence: QuestionEvidence
    answer_evidence: AnswerEvidence


class TranscriptLine(BaseModel):
    """A line of an aligned transcript: ``person`` is the label questions use ("User", "A",
    "B", ...) or None; ``kind`` says whether it is speech or a sound event."""

    model_config = _RECORD

    start: float
    end: float
    person: str | None
    text: str
    kind: Literal["speech", "sound"]
    timing_source: str
    alignment_confidence: AlignmentConfidence


class AlignedTranscript(BaseModel):
    """``<video_id lower>_gemini_aligned_transcript.json``."""

    model_config = _RECORD

    metadata: dict[str, str | int | float | None] = Field(default_factory=dict)
    transcript: list[TranscriptLine]


class WhisperSegment(BaseModel):
    """A WhisperX segment; ``speaker`` is a diarisation label (``SPEAKER_00``...)."""

    model_config = _RECORD

    start: float
    end: float
    text: str
    speaker: str | None = None


class WhisperTranscript(BaseModel):
    """``<video_id lower>_whisper_transcript.json`` (WhisperX's ``segments``)."""

    model_config = _RECORD

    segments: list[WhisperSegment]


def video_path(subject: int, video_id: str) -> str:
    """A session's mp4, relative to the dataset root."""
    return f"data/video/Person_{subject}/{video_id}.mp4"


def aligned_transcript_path(subject: int, video_id: str) -> str:
    """A session's aligned transcript, relative to the dataset root."""
    return f"data/transcripts/person_{subject}/{video_id.lower()}_gemini_aligned_transcript.json"


def whisper_transcript_path(subject: int, video_id: str) -> str:
    """A session's Whisper transcript, relative to the dataset root."""
    return f"data/transcripts/person_{subject}/{video_id.lower()}_whisper_transcript.json"
