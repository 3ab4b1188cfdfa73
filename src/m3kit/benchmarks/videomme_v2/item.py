"""Video-MME-v2's per-item record, ``VideoMMEv2Item``, and how one reply becomes an outcome.

``videomme_v2_answer`` (``scorer.py``) writes one ``VideoMMEv2Item`` into each score's metadata:
the status, the extracted letter and the question's group fields (``GroupFields``), all the
group scores need; ``score.py`` reads it back from a log. ``outcome_of`` is the official
extraction applied to one reply (``QuestionOutcome``), the input of the group scores.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from m3kit.metrics.extraction import extract_answer
from m3kit.schema import MEDIA_FAILURE, Question, ScoreItem, ScoreStatus

__all__ = [
    "GROUP_META",
    "GroupFields",
    "QuestionOutcome",
    "VideoMMEv2Item",
    "group_fields",
    "outcome_of",
]

GROUP_META = "videomme_v2"  # the sample- and score-metadata entry holding the group fields


class GroupFields(BaseModel):
    """A question's place in its group and the group's labels."""

    model_config = ConfigDict(frozen=True)

    group: str | None = None
    position: int | None = None
    type: str | None = None
    structure: str | None = None
    level: int | str | None = None
    second_head: str | None = None
    third_head: str | None = None


class VideoMMEv2Item(ScoreItem):
    """One scored Video-MME-v2 answer, as ``videomme_v2_answer`` stores it."""

    letter: str | None = None
    role: str | None = None
    videomme_v2: GroupFields = GroupFields()

    def parsed_answer(self) -> str | None:
        """The option letter read from the reply (``None`` when none was stated)."""
        return self.letter


def group_fields(question: Question) -> GroupFields:
    """The group fields of a loaded question."""
    group = question.group
    return GroupFields(
        group=group.id if group else None,
        position=group.position if group else None,
        type=group.type if group else None,
        structure=group.structure if group else None,
        level=question.metadata.get("level"),
        second_head=question.metadata.get("second_head"),
        third_head=question.metadata.get("third_head"),
    )


class QuestionOutcome(BaseModel):
    """How one question went: ``correct`` / ``incorrect``; ``invalid`` (no letter could be
    extracted from the reply, or there was no reply); ``failed`` (the sample got no answer;
    ``reason`` says why, and a ``media: ...`` reason makes it *excluded*)."""

    model_config = ConfigDict(frozen=True)

    id: str
    status: ScoreStatus
    letter: str | None = None
    reason: str = ""

    @property
    def correct(self) -> bool:
        return self.status == "correct"

    @property
    def excluded(self) -> bool:
        """Its video or subtitles could not be read: left out, never scored wrong (as M3Eval
        excludes such a sample: status ``failed``, reason ``MEDIA_FAILURE``)."""
        return self.status == "failed" and self.reason.startswith(MEDIA_FAILURE)


def outcome_of(question: Question, reply: str | None) -> QuestionOutcome:
    """The official extraction applied to ``reply`` (``None``: no reply at all)."""
    letter = extract_answer(reply)
    if letter is None:
        return QuestionOutcome(id=question.id, status="invalid")
    status: ScoreStatus = "correct" if letter == question.answer else "incorrect"
    return QuestionOutcome(id=question.id, status=status, letter=letter)
