"""The M3Eval scorer: strict parsing, the chosen option's role, failures counted as wrong.

Each score's value is 1 (correct) or 0 (incorrect, invalid or failed); its metadata is one
``M3EvalItem`` (``item.py``), which is all a table needs: ``score.py`` reads it back from a log.
The metrics here are the inspect views of ``m3kit.metrics``: the same functions, over the same
``ScoredAnswer`` records, read once per list of scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

# Imported at run time, not only for type checking: inspect evaluates metric type hints.
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from pydantic import ValidationError

from m3kit.benchmarks.m3eval.item import (
    M3EvalItem,
    is_excluded,
    sample_offers_intrusion,
    score_answer,
)
from m3kit.benchmarks.m3eval.load import memory_key, source_unit
from m3kit.benchmarks.m3eval.score import m3eval_intrusion_rate
from m3kit.benchmarks.once_per_scores import OncePerScores
from m3kit.metrics import ScoredAnswer, offers_intrusion
from m3kit.metrics import accuracy as accuracy_of
from m3kit.schema import Question, read_record, sample_question
from m3kit.schema.evallog import QUESTION_KEY

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

__all__ = [
    "SCORER",
    "answer_accuracy",
    "excluded_count",
    "failed_count",
    "intrusion_rate",
    "invalid_count",
    "m3eval_answer",
    "scored_answer_from",
]

SCORER = "m3eval_answer"


def _to_score(answer: ScoredAnswer, completion: str, offered: bool, video: str,
              source: str) -> Score:
    item = M3EvalItem(status=answer.status, letter=answer.answer, role=answer.role,
                      groups=answer.groups, offers_intrusion=offered,
                      completion_chars=len(completion), video=video, source=source)
    return Score(
        value=1.0 if answer.correct else 0.0,
        answer=answer.answer,
        explanation=answer.reason or None,
        metadata=item.to_metadata(),
    )


def scored_answer_from(sample_id: Any, item: M3EvalItem | None,
                       explanation: str | None = None) -> ScoredAnswer:
    """The ``ScoredAnswer`` an ``m3eval_answer`` record stands for (``None``: failed)."""
    if item is None:
        return ScoredAnswer(id=str(sample_id), status="failed",
                            reason=explanation or "no m3eval_answer score")
    return ScoredAnswer(id=str(sample_id), status=item.status, answer=item.letter,
                        role=item.role, reason=explanation or "", groups=item.groups)


def _item(score: Score | None) -> M3EvalItem | None:
    return M3EvalItem.from_metadata(score.metadata) if score is not None else None


def _question(metadata: Mapping[str, Any] | None) -> Question | None:
    """The sample's m3kit question; ``None`` for a sample without one (no roles known)."""
    if not metadata or QUESTION_KEY not in metadata:
        return None
    try:
        return sample_question(metadata)
    except ValidationError:
        return None


class _Answer(NamedTuple):
    """One sample's outcome and whether its question offers an intrusion option."""

    answer: ScoredAnswer
    offers_intrusion: bool


def _read_answers(scores: list[SampleScore]) -> list[_Answer]:
    out = []
    for s in scores:
        item = _item(s.score)
        reason = s.score.explanation if s.score is not None else "no score"
        # the record says whether its question offers an intrusion option, except in a log
        # scored before it did: then the question does
        question = (_question(s.sample_metadata)
                    if item is None or item.offers_intrusion is None else None)
        out.append(_Answer(scored_answer_from(s.sample_id, item, reason),
                           sample_offers_intrusion(item, question)))
    return out


# the scorer's metrics read the answers once per list of scores (``OncePerScores``)
_all_answers = OncePerScores(_read_answers)


def _answers(scores: list[SampleScore]) -> list[ScoredAnswer]:
    """The answers that count: excluded samples (unreadable media) are left out."""
    return [a.answer for a in _all_answers(scores) if not is_excluded(a.answer)]


@metric(name="accuracy")
def answer_accuracy() -> Metric:
    """Share correct; invalid and failed answers count as wrong."""

    def compute(scores: list[SampleScore]) -> float:
        return float(accuracy_of(_answers(scores)))

    return compute


@metric
def intrusion_rate() -> Metric:
    """Share of answers that chose the option with the role ``intrusion``, among answers to
    questions that offer one (``score.m3eval_intrusion_rate``); NaN when no question offers
    one."""

    def compute(scores: list[SampleScore]) -> float:
        return float(m3eval_intrusion_rate(_all_answers(scores)))

    return compute


@metric
def invalid_count() -> Metric:
    """Answers not stated in the required form."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(a.status == "invalid" for a in _answers(scores))

    return compute


@metric
def failed_count() -> Metric:
    """Samples that got no answer (model error after retries, memory error); counted wrong."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(a.status == "failed" for a in _answers(scores))

    return compute


@metric
def excluded_count() -> Metric:
    """Samples left out of every rate because their video could not be read."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(is_excluded(a.answer) for a in _all_answers(scores))

    return compute


@scorer(metrics=[answer_accuracy(), intrusion_rate(), invalid_count(), failed_count(),
                 excluded_count()])
def m3eval_answer() -> Scorer:
    """Score the completion with M3Eval's strict parsing (see ``m3kit.metrics.answers``)."""

    async def score(state: TaskState, target: Target) -> Score:
        question = sample_question(state.metadata)
        record = read_record(state.metadata)
        completion = state.output.completion if state.output is not None else ""
        failure = record.failure if record is not None else None
        return _to_score(score_answer(question, completion, failure), completion,
                         offers_intrusion(question), memory_key(question),
                         source_unit(question))

    return score
