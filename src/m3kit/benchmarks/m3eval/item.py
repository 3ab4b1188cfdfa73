"""M3Eval's per-item record, ``M3EvalItem``, and how one answer becomes one.

``m3eval_answer`` (``scorer.py``) writes one ``M3EvalItem`` into each score's metadata (status,
the option letter chosen and that option's role, whether the question offers an intrusion
option, the group labels, the probe video and its source videos), which is all a table needs:
``score.py`` reads it back from a log. ``score_answer`` is M3Eval's strict parsing of one reply
(``m3kit.metrics.score_response``) with the question's group labels.
"""

from __future__ import annotations

from typing import Any

from m3kit.metrics import ScoredAnswer, offers_intrusion, score_response
from m3kit.schema import MEDIA_FAILURE, Question, ScoreItem

__all__ = [
    "GROUP_KEYS",
    "M3EvalItem",
    "group_labels",
    "is_excluded",
    "sample_offers_intrusion",
    "score_answer",
]

# Labels copied from a question's metadata to the top of the sample's and into each score, for
# group-wise tables.
GROUP_KEYS = (
    "paradigm", "question_type", "measure", "error_type", "condition", "source_dimension",
    "evidence", "n", "k", "attribute",
)


class M3EvalItem(ScoreItem):
    """One scored M3Eval answer, as ``m3eval_answer`` stores it in the score's metadata."""

    letter: str | None = None
    role: str | None = None
    offers_intrusion: bool | None = None  # None: a log scored before the flag was recorded
    completion_chars: int = 0
    # the probe video asked of (``load.memory_key``): the unit confidence intervals resample;
    # None in a log scored before it was recorded (the sample's memory key says it)
    video: str | None = None
    # the probe's source videos (``load.source_unit``): the unit confidence intervals
    # resample; None in a log scored before it was recorded (the sample's question says it)
    source: str | None = None

    def parsed_answer(self) -> str | None:
        """The option letter read from the reply (``None`` when none was stated)."""
        return self.letter


def group_labels(question: Question) -> dict[str, Any]:
    """The question's group labels (``GROUP_KEYS`` of its metadata, and its type)."""
    labels = {k: question.metadata[k] for k in GROUP_KEYS if k in question.metadata}
    if question.question_type is not None:
        labels.setdefault("question_type", question.question_type)
    return labels


def is_excluded(answer: ScoredAnswer) -> bool:
    """Whether ``answer`` is a sample left out because its media could not be read."""
    return answer.status == "failed" and answer.reason.startswith(MEDIA_FAILURE)


def sample_offers_intrusion(item: M3EvalItem | None, question: Question | None) -> bool:
    """Whether a scored sample's question offers an intrusion option: the score's own record
    (``offers_intrusion``, written by ``m3eval_answer``), else the question itself (logs scored
    before the flag existed, other scorers); False when neither says."""
    if item is not None and item.offers_intrusion is not None:
        return item.offers_intrusion
    return offers_intrusion(question) if question is not None else False


def score_answer(question: Question, completion: str, failure: str | None = None) -> ScoredAnswer:
    """The outcome of ``completion`` as an answer to ``question`` (``failure``: no answer was had,
    and why); ``m3kit.metrics.score_response`` with the question's group labels."""
    labels = {k: question.metadata[k] for k in GROUP_KEYS if k in question.metadata}
    return score_response(question, completion, failure=failure, groups=labels)
