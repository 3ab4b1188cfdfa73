"""The ``m3exam_answer`` scorer: per-item EM, F1 and BLEU-1 under M3Exam's type rules
(``m3kit.metrics.text_match``, the per-item function ``m3kit score m3exam`` uses), and LLM-J
when a judge model is given.

Each score's metadata is one ``M3ExamItem`` (``item.py``); the report and ``m3kit eval``'s table
read it back with ``model_validate``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

# Imported at run time, not only for type checking: inspect evaluates metric type hints.
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer

from m3kit.benchmarks.m3exam.item import M3ExamItem, score_item
from m3kit.benchmarks.once_per_scores import OncePerScores
from m3kit.metrics.text_match import FjRule
from m3kit.schema import Question, read_record, sample_question

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

    from m3kit.benchmarks.m3exam.judge import JudgeVerdict

__all__ = ["bleu1", "em", "f1", "failed", "llm_judge", "m3exam_answer"]


def _records(scores: list[SampleScore]) -> list[M3ExamItem]:
    items = (M3ExamItem.from_metadata(s.score.metadata) for s in scores if s.score is not None)
    return [i for i in items if i is not None]


# the scorer's metrics read the records once per list of scores (``OncePerScores``)
_items = OncePerScores(_records)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@metric
def em() -> Metric:
    """Graded EM over every item (fm and fj included), failed items as 0."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean([i.em for i in _items(scores)])

    return compute


@metric
def f1() -> Metric:
    """Token F1 over the items that enter the TOTAL (not fm, not fj)."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean([float(i.f1 or 0.0) for i in _items(scores) if i.in_total])

    return compute


@metric
def bleu1() -> Metric:
    """BLEU-1 over the items that enter the TOTAL (not fm, not fj)."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean([float(i.bleu1 or 0.0) for i in _items(scores) if i.in_total])

    return compute


@metric
def failed() -> Metric:
    """Items that got no answer (media, memory or model failure)."""

    def compute(scores: list[SampleScore]) -> int:
        return sum(i.status == "failed" for i in _items(scores))

    return compute


@metric
def llm_judge() -> Metric:
    """LLM-J over the judged items that enter the TOTAL (NaN when no judge ran)."""

    def compute(scores: list[SampleScore]) -> float:
        return _mean([i.llm_judge for i in _items(scores)
                      if i.in_total and i.llm_judge is not None])

    return compute


async def _judge(question: Question, prediction: str, judge_model: str) -> JudgeVerdict:
    """One item through the M3Exam judge (five-level rubric, robust parse, cached)."""
    from m3kit.benchmarks.m3exam.judge import JudgeRequest, judge_answers_async

    gold = str(question.metadata.get("label") or question.answer)
    (verdict,) = await judge_answers_async(
        [JudgeRequest(id=question.id, question=question.text, gold=gold,
                      prediction=prediction)], judge_model)
    return verdict


@scorer(metrics=[em(), f1(), bleu1(), llm_judge(), failed()])
def m3exam_answer(judge_model: str | None = None, fj_rule: FjRule = "exact") -> Scorer:
    """Per-item EM (value), F1 and BLEU-1 (metadata) under M3Exam's type rules (fj by
    ``fj_rule``); with ``judge_model`` (any inspect model name) also the LLM judge's score for
    the items it applies to (not fj, not image fm; a failed item scores 0 without a call)."""

    async def score(state: TaskState, target: Target) -> Score:
        question = sample_question(state.metadata)
        record = read_record(state.metadata)
        completion = state.output.completion if state.output is not None else ""
        failure = record.failure if record is not None else None
        item = score_item(question, completion, failure, fj_rule)
        if judge_model and item.judged:
            if failure is None:
                verdict = await _judge(question, completion, judge_model)
                item = item.model_copy(update={
                    "llm_judge": verdict.score,
                    "judge_reply": verdict.error or verdict.reply,
                    "judge_failure": None if verdict.parsed else verdict.failure(),
                })
            else:
                item = item.model_copy(update={"llm_judge": 0.0})
        elif judge_model and item.kind == "abstention":
            # LoCoMo's adversarial items are scored by rule, and that rule stands in for the
            # judge too, as in `m3kit score m3exam`
            item = item.model_copy(update={"llm_judge": item.em})
        return Score(value=item.em, answer=completion, explanation=failure,
                     metadata=item.to_metadata())

    return score
