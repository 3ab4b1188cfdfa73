"""The ``supermemory_answer`` scorer: the reply's ranking per question (the text rule of
``m3kit.metrics.ranking.parse_ranking``), Table 2's numbers as the task's metrics.

Each score's metadata is one ``SuperMemoryItem`` (``item.py``: the ranking, the gold, the option
types, the skill, person and video): all ``score.aggregate`` and ``score.scores_from_log``
need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Imported at run time, not only for type checking: inspect evaluates metric type hints.
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer

from m3kit.benchmarks.once_per_scores import OncePerScores
from m3kit.benchmarks.supermemory.item import SuperMemoryItem, item_of
from m3kit.benchmarks.supermemory.prompt import TRANSCRIPT_META
from m3kit.benchmarks.supermemory.score import SuperMemoryScore, aggregate
from m3kit.metrics.ranking import parse_ranking
from m3kit.schema import MEDIA_FAILURE, read_record, sample_question

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

__all__ = ["supermemory_ans_f1", "supermemory_answer", "supermemory_invalid", "supermemory_mrr",
           "supermemory_qa_acc"]


def _card(scores: list[SampleScore]) -> SuperMemoryScore:
    """The numbers of the scored samples, those whose media could not be read left out (as
    ``score.scores_from_log`` leaves them out)."""
    items = [item for s in scores
             if (item := SuperMemoryItem.from_metadata(s.score.metadata)) is not None
             and not (item.status == "failed"
                      and (s.score.explanation or "").startswith(MEDIA_FAILURE))]
    return aggregate(items)


# the scorer's metrics read one card per list of scores (``OncePerScores``)
_CARD = OncePerScores(_card)


def _number(key: str) -> Metric:
    def compute(scores: list[SampleScore]) -> float:
        value = getattr(_CARD(scores), key)
        return float("nan") if value is None else float(value)

    return compute


@metric
def supermemory_ans_f1() -> Metric:
    """Ans-F1 (0-100): F1 of the answer/abstain decision, positive = answerable."""
    return _number("ans_f1")


@metric
def supermemory_qa_acc() -> Metric:
    """QA-Acc (0-100): the first-ranked option is the gold."""
    return _number("qa_acc")


@metric
def supermemory_mrr() -> Metric:
    """QA-MRR (0-100): mean reciprocal rank of the gold, unranked options tied."""
    return _number("qa_mrr")


@metric
def supermemory_invalid() -> Metric:
    """Replies from which no ranking could be read (scored wrong on every metric)."""

    def compute(scores: list[SampleScore]) -> int:
        return sum((s.score.metadata or {}).get("status") in ("invalid", "failed")
                   for s in scores)

    return compute


@scorer(metrics=[supermemory_ans_f1(), supermemory_qa_acc(), supermemory_mrr(),
                 supermemory_invalid()])
def supermemory_answer() -> Scorer:
    """The ranking the reply states; a failed sample scores as an invalid reply."""

    async def score(state: TaskState, target: Target) -> Score:
        question = sample_question(state.metadata)
        record = read_record(state.metadata)
        failed = record is not None and record.failure is not None
        completion = state.output.completion if state.output is not None else ""
        ranking = None if failed else parse_ranking(completion, len(question.choices))
        item = item_of(question, ranking, failed=failed)
        heard = state.metadata.get(TRANSCRIPT_META)
        if isinstance(heard, dict) and heard.get("cut"):
            item = item.model_copy(update={"transcript_cut": int(heard["cut"])})
        return Score(
            value=1.0 if item.status == "correct" else 0.0,
            answer=" > ".join(question.letters[i] for i in ranking) if ranking else None,
            explanation=record.failure if failed and record is not None else None,
            metadata=item.to_metadata(),
        )

    return score
