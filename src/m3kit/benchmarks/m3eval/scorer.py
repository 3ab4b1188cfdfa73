"""The M3Eval scorer: strict parsing, the chosen option's role, failures counted as wrong.

Each score's value is 1 (correct) or 0 (incorrect, invalid or failed); its metadata is one
``M3EvalItem`` (status, the option letter chosen and that option's role, whether the question
offers an intrusion option, the group labels), which is all a table needs: ``score.py`` reads it
back from a log with ``model_validate``. The metrics here are the inspect views of
``m3kit.metrics``: the same functions, over the same ``ScoredAnswer`` records.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

# Imported at run time, not only for type checking: inspect evaluates metric type hints.
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer

from m3kit.benchmarks.m3eval.load import memory_key, source_unit
from m3kit.metrics import ScoredAnswer, offers_intrusion, score_response
from m3kit.metrics import accuracy as accuracy_of
from m3kit.metrics import intrusion_rate as intrusion_rate_of
from m3kit.schema import MEDIA_FAILURE, Question, ScoreItem, read_record, sample_question

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

__all__ = [
    "GROUP_KEYS",
    "SCORER",
    "M3EvalItem",
    "answer_accuracy",
    "excluded_count",
    "failed_count",
    "group_labels",
    "intrusion_rate",
    "invalid_count",
    "is_excluded",
    "m3eval_answer",
    "m3eval_intrusion_rate",
    "sample_offers_intrusion",
    "score_answer",
    "scored_answer_from",
]

SCORER = "m3eval_answer"
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


def m3eval_intrusion_rate(answers: Iterable[tuple[ScoredAnswer, bool]]) -> float:
    """M3Eval's intrusion rate over ``(answer, offers_intrusion)`` pairs: the share of answers
    that chose the intrusion option, among answers to questions that offer one (invalid and
    failed answers included, excluded samples left out); NaN when no question offers one. The
    one definition behind the ``intrusion_rate`` metric and ``results.result_rows``."""
    return intrusion_rate_of([a for a, offered in answers if offered and not is_excluded(a)])


def score_answer(question: Question, completion: str, failure: str | None = None) -> ScoredAnswer:
    """The outcome of ``completion`` as an answer to ``question`` (``failure``: no answer was had,
    and why); ``m3kit.metrics.score_response`` with the question's group labels."""
    labels = {k: question.metadata[k] for k in GROUP_KEYS if k in question.metadata}
    return score_response(question, completion, failure=failure, groups=labels)


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


def _scored(s: SampleScore) -> ScoredAnswer:
    reason = s.score.explanation if s.score is not None else "no score"
    return scored_answer_from(s.sample_id, _item(s.score), reason)


def _all_answers(scores: list[SampleScore]) -> list[ScoredAnswer]:
    return [_scored(s) for s in scores]


def _answers(scores: list[SampleScore]) -> list[ScoredAnswer]:
    """The answers that count: excluded samples (unreadable media) are left out."""
    return [a for a in _all_answers(scores) if not is_excluded(a)]


@metric(name="accuracy")
def answer_accuracy() -> Metric:
    """Share correct; invalid and failed answers count as wrong."""

    def compute(scores: list[SampleScore]) -> float:
        return float(accuracy_of(_answers(scores)))

    return compute


@metric
def intrusion_rate() -> Metric:
    """Share of answers that chose the option with the role ``intrusion``, among answers to
    questions that offer one (``m3eval_intrusion_rate``); NaN when no question offers one."""

    def compute(scores: list[SampleScore]) -> float:
        return float(m3eval_intrusion_rate(
            (_scored(s), sample_offers_intrusion(_item(s.score), _question(s.sample_metadata)))
            for s in scores))

    return compute


def _question(metadata: Mapping[str, Any] | None) -> Question | None:
    try:
        return sample_question(metadata or {})
    except Exception:  # noqa: BLE001 (a sample without an m3kit question: no roles known)
        return None


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
        return sum(is_excluded(a) for a in _all_answers(scores))

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
