"""Pydantic records of the synthesis pipeline, from the persona spec to the question items.

The written files use the released M3Exam layout (``timeline_<name>.json``, ``sessions.json``,
``question.json``); the records here are what each stage validates the backend's output
against before anything is written.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.benchmarks.m3exam.load import QuestionType

__all__ = [
    "AuditFlag",
    "AuditReport",
    "EventDraft",
    "PersonaSpec",
    "QCEdit",
    "QuestionDraft",
    "QuestionItem",
    "RoundRecord",
    "SessionRecord",
    "TimelineEvent",
    "content_words",
]

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """The lowercase words of ``text`` longer than two characters: what an event is matched
    to an image or a document by."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


ROUND_ID = re.compile(r"^D(\d+):(\d+)$")

_STRICT = ConfigDict(extra="ignore", str_strip_whitespace=True)


class PersonaSpec(BaseModel):
    """The input triple's text part: who the user is and the storyline the timeline elaborates.

    ``name`` names the output folder and the timeline file (``Alex_Veterinarian``).
    """

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    persona: str = Field(min_length=1)
    core_event: str = Field(min_length=1)
    start_date: date
    n_core_events: int = Field(default=12, ge=2)
    n_distractor_events: int = Field(default=4, ge=0)


class EventDraft(BaseModel):
    """One event as the backend writes it (core line or distractor)."""

    model_config = _STRICT

    description: str = Field(min_length=1)
    query: str = Field(min_length=1)
    date: date
    keyword: str = Field(min_length=1)


class TimelineEvent(BaseModel):
    """A merged, renumbered timeline event. ``kind`` tells core from distractor events."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    description: str
    query: str
    date: date
    keyword: str
    kind: Literal["core", "distractor"]

    def released(self) -> dict[str, object]:
        """The released ``timeline_*.json`` record (plus ``Event_Type``, which the released
        file uses only for its persona record; here it keeps distractors recognisable)."""
        return {
            "Event_Index": self.index,
            "Event_Type": "Core" if self.kind == "core" else "Distractor",
            "Event_Description": self.description,
            "Query_Description": self.query,
            "Event_Time": self.date.isoformat(),
            "Keyword": self.keyword,
        }


class AuditFlag(BaseModel):
    """One problem an audit found. ``target`` is an event index (timeline) or a round id."""

    model_config = _STRICT

    target: str = Field(min_length=1)
    category: str = Field(min_length=1)
    problem: str = Field(min_length=1)

    @field_validator("target", mode="before")
    @classmethod
    def _target_text(cls, value: object) -> object:
        # backends write event indices as numbers; keep one type
        return str(value) if isinstance(value, int) else value


class AuditReport(BaseModel):
    model_config = _STRICT

    flags: list[AuditFlag] = Field(default_factory=list)


class QCEdit(BaseModel):
    """A documented quality-control edit (A.4: "these edits ... are documented")."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    target: str
    category: str
    problem: str
    before: str
    after: str


class RoundRecord(BaseModel):
    """One released round. Image fields are written only when the round has images, and
    ``pdf_file`` (entries ``name.pdf`` or ``name.pdf#<1-based page>``) only when it has a
    document."""

    model_config = ConfigDict(extra="forbid")

    round: str = Field(pattern=ROUND_ID.pattern)
    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)
    img_file: list[str] = Field(default_factory=list)
    img_id: list[int] = Field(default_factory=list)
    img_description: list[str] = Field(default_factory=list)
    pdf_file: list[str] = Field(default_factory=list)
    is_followup: bool = False
    followup_of: str | None = None
    event_index: int = Field(default=0, exclude=True)
    summary: str = Field(default="", exclude=True)

    def released(self) -> dict[str, object]:
        out: dict[str, object] = {"round": self.round, "user": self.user,
                                  "assistant": self.assistant}
        if self.img_file:
            out |= {"img_file": self.img_file, "img_id": self.img_id,
                    "img_description": self.img_description}
        if self.pdf_file:
            out["pdf_file"] = self.pdf_file
        if self.is_followup:
            out |= {"is_followup": True, "followup_of": self.followup_of}
        return out


class SessionRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    session_id: str = Field(pattern=r"^D\d+$")
    date: date
    dialogues: list[RoundRecord]

    def released(self) -> dict[str, object]:
        return {"session_id": self.session_id, "date": self.date.isoformat(),
                "dialogues": [r.released() for r in self.dialogues]}


class QuestionDraft(BaseModel):
    """One item as the backend writes it; ``supporting_facts`` as a list or "D1:2,D3:4"."""

    model_config = _STRICT

    question: str = Field(min_length=1)
    answer: list[str] = Field(min_length=1)
    supporting_facts: list[str] = Field(min_length=1)

    @field_validator("answer", mode="before")
    @classmethod
    def _answer_list(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value

    @field_validator("answer")
    @classmethod
    def _answers_non_empty(cls, value: list[str]) -> list[str]:
        cleaned = [a.strip() for a in value]
        if any(not a for a in cleaned):
            raise ValueError("an answer entry is empty")
        return cleaned

    @field_validator("supporting_facts", mode="before")
    @classmethod
    def _facts_list(cls, value: object) -> object:
        if isinstance(value, str):
            return [p for p in re.split(r"[,\s;]+", value) if p]
        return value

    @field_validator("supporting_facts")
    @classmethod
    def _facts_are_round_ids(cls, value: list[str]) -> list[str]:
        for fact in value:
            if not ROUND_ID.match(fact):
                raise ValueError(f"supporting fact {fact!r} is not a round id like D3:4")
        return list(dict.fromkeys(value))


class QuestionItem(BaseModel):
    """A retained question in the released ``question.json`` layout."""

    model_config = ConfigDict(extra="forbid")

    question: str
    answer: list[str]
    label: str
    supporting_facts: str
    type: QuestionType
