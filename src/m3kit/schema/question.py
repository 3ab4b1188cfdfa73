"""Questions: multiple-choice with role-annotated choices, or free-form with alternatives.

One record covers every benchmark: M3Eval probes (choices with roles such as ``intrusion``),
Video-MME-v2 grouped questions (``group``), M3Exam free-form questions (``answer`` plus graded
``alternatives`` and supporting ``evidence`` rounds) and SuperMemory-VQA ordered choices
(correct / vague / wrong / N-A).
"""

from __future__ import annotations

import string
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from m3kit.schema.media import MediaRef

__all__ = ["Choice", "ChoiceRole", "Question", "QuestionGroup"]

_RECORD = ConfigDict(extra="forbid", frozen=True)


class ChoiceRole(StrEnum):
    """What a choice is for, as the benchmark annotates it.

    Metrics such as intrusion rate (M3Eval) and MRR over ordered choices (SuperMemory-VQA)
    read these roles; ``UNKNOWN`` marks a choice whose role the source does not say.
    """

    CORRECT = "correct"
    INTRUSION = "intrusion"  # M3Eval: detail taken from the interfering video
    IRRELEVANT_DISTRACTOR = "irrelevant_distractor"
    DISTRACTOR = "distractor"
    VAGUE = "vague"  # SuperMemory-VQA: related but imprecise
    WRONG = "wrong"
    ABSTAIN = "abstain"  # the "N/A" / "cannot be answered" option
    # M3Eval divided-attention error families (``option_role_by_letter`` in its prompts).
    SOURCE_CONFUSION = "source_confusion"
    ORDER_DISRUPTION = "order_disruption"
    CONTENT_FORGETTING = "content_forgetting"
    UNKNOWN = "unknown"


# Roles a gold answer may carry; any other role on the gold letter is an annotation error.
_ANSWER_ROLES = frozenset({ChoiceRole.CORRECT, ChoiceRole.ABSTAIN, ChoiceRole.UNKNOWN})


class Choice(BaseModel):
    """One lettered option of a multiple-choice question."""

    model_config = _RECORD

    letter: str = Field(pattern=r"^[A-Z]$")
    text: str
    role: ChoiceRole | None = None
    explanation: str | None = None  # why the annotator gave it this role, when released


class QuestionGroup(BaseModel):
    """Membership of a question in a group scored together (Video-MME-v2).

    ``position`` is 1-based within the group; ``type`` names the group kind (e.g.
    ``"relevance"`` for capability consistency, ``"logic"`` for reasoning coherence);
    ``structure`` keeps the released dependency layout verbatim, e.g. ``"[1, [2, 3], 4]"``.
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    position: int = Field(ge=1)
    size: int = Field(ge=1)
    type: str | None = None
    structure: str | None = None

    @field_validator("size")
    @classmethod
    def _position_in_group(cls, size: int, info: ValidationInfo) -> int:
        position = info.data.get("position")
        if position is not None and position > size:
            raise ValueError(f"position {position} is beyond the group size {size}")
        return size


class Question(BaseModel):
    """A benchmark question with its gold answer and the media it is asked about.

    With ``choices``, ``answer`` (and each of ``alternatives``) is a choice letter; without,
    it is free text and ``alternatives`` lists further acceptable answers in the order the
    benchmark gives them (M3Exam grades by that order). ``time`` is the moment, in seconds
    of the source video, at which the question is asked: nothing recorded after it may be
    shown. ``evidence`` holds the ids of the records that support the answer (M3Exam
    supporting-fact rounds such as ``"D12:4"``).
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    benchmark: str = Field(min_length=1)
    text: str
    choices: list[Choice] = Field(default_factory=list)
    answer: str
    alternatives: list[str] = Field(default_factory=list)
    question_type: str | None = None
    media: list[MediaRef] = Field(default_factory=list)
    group: QuestionGroup | None = None
    time: float | None = Field(default=None, ge=0)
    evidence: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    # Field validators rather than one model validator, so a failure names its field.
    @field_validator("choices")
    @classmethod
    def _letters_run_from_a(cls, choices: list[Choice]) -> list[Choice]:
        letters = [c.letter for c in choices]
        dupes = sorted({x for x in letters if letters.count(x) > 1})
        if dupes:
            raise ValueError(f"duplicate choice letters: {', '.join(dupes)}")
        if letters != list(string.ascii_uppercase[: len(letters)]):
            got = "".join(letters)
            raise ValueError(f"choice letters must run A, B, C, ... in order, got {got}")
        return choices

    @field_validator("answer")
    @classmethod
    def _answer_is_a_gold_choice(cls, answer: str, info: ValidationInfo) -> str:
        choices: list[Choice] = info.data.get("choices") or []
        if not choices:
            return answer
        by_letter = {c.letter: c for c in choices}
        if answer not in by_letter:
            letters = "".join(by_letter)
            raise ValueError(f"answer {answer!r} is not one of the choice letters {letters}")
        role = by_letter[answer].role
        if role is not None and role not in _ANSWER_ROLES:
            raise ValueError(f"answer {answer!r} has role {role.value!r}, not a gold role")
        return answer

    @field_validator("alternatives")
    @classmethod
    def _alternatives_are_letters(cls, alternatives: list[str], info: ValidationInfo) -> list[str]:
        letters = [c.letter for c in info.data.get("choices") or []]
        for alt in alternatives:
            if letters and alt not in letters:
                got = "".join(letters)
                raise ValueError(f"alternative {alt!r} is not one of the choice letters {got}")
        return alternatives

    @property
    def is_multiple_choice(self) -> bool:
        """Whether the question has lettered choices."""
        return bool(self.choices)

    @property
    def letters(self) -> list[str]:
        """The choice letters in order (empty for free-form questions)."""
        return [c.letter for c in self.choices]

    def choice(self, letter: str) -> Choice:
        """The choice with this letter; ``KeyError`` if there is none."""
        for c in self.choices:
            if c.letter == letter:
                return c
        raise KeyError(f"question {self.id!r} has no choice {letter!r}")

    def role_of(self, letter: str) -> ChoiceRole | None:
        """The role of the choice with this letter (``None`` when not annotated)."""
        return self.choice(letter).role
