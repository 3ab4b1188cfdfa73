"""The records of SuperMemory-VQA's two-stage annotation pipeline (seed 003 §3.4, appendices C,
D, F; the release's ``src/pipeline/``): what stage 1 writes, what stage 2 reads and writes, and
what the review app reads. Field names follow the release's JSON where it has them
(``overall_summary``, ``segments``, ``description.activities``..., the planner's
``answer``/``question``/``metadata`` order, the verifier's four ``*_score`` criteria); times are
seconds (the release writes ``MM:SS`` strings; both are read, seconds are written).

Folder of an annotation run (``ANNOTATION_DIR`` under the benchmark root being built)::

    data/video/Person_<n>/<video_id>.mp4          the recordings (linked, never copied)
    data/transcripts/person_<n>/...               transcripts given, or made by faster-whisper
    annotations/captions/person_<n>/<video_id>_caption_narrations.json   ``SessionCaptions``
    annotations/captions/person_<n>/registry.json                      ``PersonRegistry``
    annotations/ledger/person_<n>.json / .md      ``SuperLedger`` and its text
    annotations/qa/person_<n>.json                ``PersonAnnotations`` (every pair, verdicts)
    annotations/cache/...                         finished model calls (resume)
    data/json/all_qa.json                         the accepted pairs, released layout
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.schema.supermemory import LocalSeconds, Skill

__all__ = [
    "ANNOTATION_DIR",
    "CAPTIONS_DIR",
    "CAPTIONS_SUFFIX",
    "CRITERIA",
    "MAX_REPLY_TOKENS",
    "AnnotatedQA",
    "CallCost",
    "CaptionedChunk",
    "CausalityCheck",
    "ChunkCaption",
    "CriterionScore",
    "DraftAnswer",
    "DraftChoice",
    "DraftEvidence",
    "DraftMeta",
    "DraftQuestion",
    "DraftSpan",
    "LedgerEvent",
    "LedgerSession",
    "PersonAnnotations",
    "PersonRegistry",
    "QADraft",
    "Rating",
    "SegmentDescription",
    "SessionCaptions",
    "SpokenText",
    "CaptionSegment",
    "SuperLedger",
    "TimeSpan",
    "captions_path",
    "person_captions_dir",
    "registry_path",
]

ANNOTATION_DIR = "annotations"
# Stage 1's files (the layout above): stage 1 writes them, stage 2 reads them.
CAPTIONS_DIR = f"{ANNOTATION_DIR}/captions"
CAPTIONS_SUFFIX = "_caption_narrations.json"
# A reply's token cap, for both stages: a chunk's caption, a QA pair or a verdict fits well
# inside it, and a weak model that does not stop is cut here instead of at the end of its
# context (SmolLM2-135M on llama.cpp ran minutes per call without it).
MAX_REPLY_TOKENS = 1536
Rating = Literal["low", "medium", "high"]
# The verifier's scored criteria (the release's ``get_stage2_verifier_schema``), each 0..1 with
# a rationale; the option roles and the abstain option are checked in code as well.
CRITERIA: tuple[str, ...] = ("factual_correctness", "objective_correctness",
                             "causal_answerability", "naturalness")

_READ = ConfigDict(extra="ignore")  # a model's reply: keys m3kit does not use are dropped


def person_captions_dir(subject: int) -> str:
    """A person's stage-1 folder, relative to the root."""
    return f"{CAPTIONS_DIR}/person_{subject}"


def captions_path(subject: int, video_id: str) -> str:
    """A session's captions (``SessionCaptions``), relative to the root."""
    return f"{person_captions_dir(subject)}/{video_id}{CAPTIONS_SUFFIX}"


def registry_path(subject: int) -> str:
    """A person's registry (``PersonRegistry``), relative to the root."""
    return f"{person_captions_dir(subject)}/registry.json"


# -- stage 1 ------------------------------------------------------------------------------------


class TimeSpan(BaseModel):
    """Seconds local to a recording (``MM:SS`` strings are read too)."""

    model_config = _READ

    start_time: LocalSeconds
    end_time: LocalSeconds


class SpokenText(BaseModel):
    model_config = _READ

    speaker: str | None = None  # "User", "A".."Z" (the registry's labels), or unknown
    transcript: str


class PersonSeen(BaseModel):
    model_config = _READ

    person: str  # a registry label
    description: str


class SegmentDescription(BaseModel):
    model_config = _READ

    activities: str = ""
    environment: str = ""
    visible_text: str = ""
    objects: list[str] = Field(default_factory=list)
    audio_transcript: list[SpokenText] = Field(default_factory=list)
    people: list[PersonSeen] = Field(default_factory=list)


class CaptionSegment(BaseModel):
    """One stretch of a chunk as the captioner describes it; times local to the recording."""

    model_config = _READ

    description: SegmentDescription
    time_span: TimeSpan
    importance: Rating = "medium"
    confidence: Rating = "medium"


class ChunkCaption(BaseModel):
    """The captioner's reply for one chunk (the release's stage 1 schema)."""

    model_config = _READ

    overall_summary: str
    segments: list[CaptionSegment] = Field(default_factory=list)


class CallCost(BaseModel):
    """What producing one unit cost: model calls, tokens (where the backend reports them),
    images sent, seconds of wall clock."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    images: int = 0
    seconds: float = 0.0


class CaptionedChunk(BaseModel):
    chunk_index: int
    start_time: float  # local to the recording
    end_time: float
    caption: ChunkCaption
    captioner: str  # the model, or the surrogate captioner's name
    cost: CallCost = Field(default_factory=CallCost)


class SessionCaptions(BaseModel):
    """``<video_id>_caption_narrations.json``: one recording's chunks in order."""

    video_id: str
    subject: int
    video_path: str | None  # relative to the benchmark root; None: transcript-only session
    duration: float
    start_time: float  # unix seconds of the recording's start
    chunks: list[CaptionedChunk] = Field(default_factory=list)


class PersonRegistry(BaseModel):
    """Who is who across a person's days: label (``User``, ``A``..``Z``) → the longest
    description seen so far (as the release keeps it), and where each was first seen."""

    subject: int
    people: dict[str, str] = Field(default_factory=dict)
    first_seen: dict[str, str] = Field(default_factory=dict)  # label -> "<video_id>@<s>"


# -- stage 2: the Super Ledger -------------------------------------------------------------------


class LedgerSession(BaseModel):
    video_id: str
    start_unix: float
    duration: float
    has_video: bool


class LedgerEvent(BaseModel):
    """One row of the Super Ledger: one caption segment placed on the person's clock."""

    id: str  # "<video_id>#<chunk>.<segment>"
    video_id: str
    start: float  # local to the recording
    end: float
    start_unix: float
    end_unix: float
    summary: str  # the chunk's overall summary
    activities: str = ""
    environment: str = ""
    objects: list[str] = Field(default_factory=list)
    people: list[str] = Field(default_factory=list)  # "label: description"
    audio: list[str] = Field(default_factory=list)  # "speaker: text"
    visible_text: str = ""
    importance: Rating = "medium"


class SuperLedger(BaseModel):
    subject: int
    sessions: list[LedgerSession]
    events: list[LedgerEvent]  # in order of start_unix


# -- stage 2: drafts, verdicts --------------------------------------------------------------------


class DraftSpan(BaseModel):
    model_config = _READ

    video_id: str
    start_time: LocalSeconds
    end_time: LocalSeconds


class DraftEvidence(BaseModel):
    model_config = _READ

    reason: str = ""
    video_id: str
    time_span: TimeSpan


class DraftChoice(BaseModel):
    model_config = _READ

    explanation: str = ""
    choice_type: Literal["correct", "vague", "incorrect"]
    text: str


class DraftAnswer(BaseModel):
    """Rationale first (the release's field order): the evidence, whether it answers, the
    three choices (the abstain option is added in code), the answer text."""

    model_config = _READ

    evidence_list: list[DraftEvidence] = Field(default_factory=list)
    is_answerable: bool
    # exactly three, as the release's validator wants (the abstain option is added in code)
    answer_choices: list[DraftChoice] = Field(min_length=3, max_length=3)
    text: str


class DraftQuestion(BaseModel):
    model_config = _READ

    question_reasoning: str = ""
    text: str
    # at least one: a question without a span has no moment (the release drops such a pair)
    time_spans: list[DraftSpan] = Field(min_length=1)


class DraftMeta(BaseModel):
    model_config = _READ

    skill_reasoning: str = ""
    skill: Skill


class QADraft(BaseModel):
    """One QA pair as the planner (or the enhancer) writes it."""

    model_config = _READ

    answer: DraftAnswer
    question: DraftQuestion
    metadata: DraftMeta


class CriterionScore(BaseModel):
    name: str  # one of CRITERIA, or a check in code ("option_roles", "abstain_option")
    score: float  # 0..1
    rationale: str
    passed: bool


class CausalityCheck(BaseModel):
    """The deterministic check: every evidence span ends before the question's moment on the
    person's clock (unix s). ``late`` names the spans that do not."""

    question_unix: float
    latest_evidence_unix: float | None
    passed: bool
    late: list[str] = Field(default_factory=list)


class AnnotatedQA(BaseModel):
    """A pair's whole story: its drafts (first and after each enhancement), each loop's
    verdicts, the causality check, the outcome. ``question_id`` is its id in ``all_qa.json``
    when accepted."""

    qa_id: str
    subject: int
    skill: Skill
    scope: Literal["local", "global"]
    drafts: list[QADraft]
    verdicts: list[list[CriterionScore]] = Field(default_factory=list)
    suggestions: list[list[str]] = Field(default_factory=list)
    causality: CausalityCheck | None = None
    status: Literal["accepted", "rejected"]
    rejection_reason: str = ""
    question_id: int | None = None


class PersonAnnotations(BaseModel):
    """``annotations/qa/person_<n>.json``: every pair of one person and what it cost."""

    subject: int
    model: str
    pairs: list[AnnotatedQA]
    cost: CallCost = Field(default_factory=CallCost)
