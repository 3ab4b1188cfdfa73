"""SuperMemory-VQA's per-item record, ``SuperMemoryItem``, and how one ranking becomes one.

``supermemory_answer`` (``scorer.py``) writes one ``SuperMemoryItem`` into each score's
metadata (the ranking, the gold, the option types, the skill, person and video): all
``score.aggregate`` and ``score.scores_from_log`` need. ``item_of`` builds it for a question
from the ranking a reply or a predictions file gives.
"""

from __future__ import annotations

from pydantic import Field

from m3kit.schema import ChoiceRole, Question, ScoreItem, ScoreStatus

__all__ = ["ABSTAIN", "SuperMemoryItem", "item_of", "option_types"]

ABSTAIN = "abstain"  # the option type of the abstain option


class SuperMemoryItem(ScoreItem):
    """One scored question: the ranking read from the reply (0-based option indices, best
    first; ``None`` when invalid, missing or failed), the gold index, each option's type
    (``correct`` / ``vague`` / ``incorrect`` / ``abstain``), whether it is answerable, its skill,
    person and question video; ``missing``: no prediction was given; ``transcript_cut``: the
    transcript lines heard before the question that the direct prompt left out for its token
    budget (``-T transcript_tokens``; 0 for predictions files and other runs)."""

    ranking: list[int] | None = None
    gold: int = 0
    option_types: list[str] = Field(default_factory=list)
    answerable: bool = True
    skill: str = ""
    subject: str = ""
    video: str = ""
    missing: bool = False
    transcript_cut: int = 0

    @property
    def answer(self) -> int | None:
        """The first-ranked option, or ``None``."""
        return self.ranking[0] if self.ranking else None

    def parsed_answer(self) -> str | None:
        """The first-ranked option's letter (``None``: invalid, missing or failed)."""
        return None if self.answer is None else chr(ord("A") + self.answer)

    @property
    def answer_type(self) -> str | None:
        """The type of the option answered (``None``: invalid)."""
        answer = self.answer
        return self.option_types[answer] if answer is not None else None


def option_types(question: Question) -> list[str]:
    """Each option's type: ``abstain`` for the abstain option, else its released choice type."""
    released = list(question.metadata.get("choice_types") or [])
    out = []
    for n, choice in enumerate(question.choices):
        if choice.role is ChoiceRole.ABSTAIN:
            out.append(ABSTAIN)
        elif n < len(released):
            out.append(str(released[n]))
        else:
            out.append(choice.role.value if choice.role is not None else "incorrect")
    return out


def item_of(question: Question, ranking: list[int] | None, *, missing: bool = False,
            failed: bool = False) -> SuperMemoryItem:
    """The record of ``question`` answered with ``ranking`` (``None``: invalid); ``missing``:
    no prediction at all; ``failed``: the sample got no answer (both scored as invalid)."""
    gold = question.letters.index(question.answer)
    status: ScoreStatus
    if failed:
        status, ranking = "failed", None
    elif ranking is None:
        status = "invalid"
    else:
        status = "correct" if ranking[0] == gold else "incorrect"
    meta = question.metadata
    return SuperMemoryItem(
        id=question.id, status=status, ranking=ranking, gold=gold,
        option_types=option_types(question), answerable=bool(meta.get("is_answerable", True)),
        skill=str(meta.get("skill") or question.question_type or ""),
        subject=str(meta.get("subject", "")), video=str(meta.get("primary_video_id", "")),
        missing=missing, groups={"skill": meta.get("skill")},
    )
