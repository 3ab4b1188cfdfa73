"""The ``videomme_v2_answer`` scorer: the official answer extraction per question, the grouped
non-linear score as the task's metrics.

Each score's metadata is one ``VideoMMEv2Item``: the status, the extracted letter, the group
labels and the question's group fields (``GroupFields``), which is all the group metrics and
``score.scores_from_log`` need.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, NamedTuple

# Imported at run time, not only for type checking: inspect evaluates metric type hints.
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer

from m3kit.benchmarks.once_per_scores import OncePerScores
from m3kit.benchmarks.videomme_v2.item import (
    GROUP_META,
    GroupFields,
    QuestionOutcome,
    VideoMMEv2Item,
    group_fields,
    outcome_of,
)
from m3kit.benchmarks.videomme_v2.load import BENCHMARK_NAME
from m3kit.benchmarks.videomme_v2.score import (
    VideoMMEv2Score,
    aggregate,
    groups_from_questions,
    score_groups,
)
from m3kit.schema import Question, QuestionGroup, read_record, sample_question

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

__all__ = [
    "videomme_v2_answer",
    "videomme_v2_avg_acc",
    "videomme_v2_excluded_groups",
    "videomme_v2_failed_extraction",
    "videomme_v2_incomplete_groups",
    "videomme_v2_nonlin_score",
]

logger = logging.getLogger(__name__)


def _outcomes(scores: list[SampleScore]) -> tuple[list[Question], dict[str, QuestionOutcome]]:
    """Rebuild just enough of each question (group and labels) to score groups in a metric."""
    questions, outcomes = [], {}
    for s in scores:
        item = VideoMMEv2Item.from_metadata(s.score.metadata)
        fields = item.videomme_v2 if item is not None else GroupFields()
        if not fields.group or fields.position is None:
            continue
        qid = str(s.sample_id)
        questions.append(Question(
            id=qid, benchmark=BENCHMARK_NAME, text="", answer="",
            group=QuestionGroup(id=fields.group, position=fields.position, size=4,
                                type=fields.type, structure=fields.structure),
            metadata={"level": fields.level, "second_head": fields.second_head,
                      "third_head": fields.third_head},
        ))
        outcomes[qid] = QuestionOutcome(id=qid, status=item.status if item else "failed",
                                        letter=item.letter if item else None,
                                        reason=s.score.explanation or "")
    return questions, outcomes


class _Card(NamedTuple):
    """The group scores of a list of sample scores, and how many groups are incomplete."""

    score: VideoMMEv2Score
    incomplete: int


def _card(scores: list[SampleScore]) -> _Card:
    questions, outcomes = _outcomes(scores)
    groups, incomplete = groups_from_questions(questions)
    if incomplete:
        # inspect also computes metrics over partial results while a run is going: not a warning
        logger.debug("%d incomplete group(s) left out of the group scores", len(incomplete))
    return _Card(aggregate(score_groups(groups, outcomes), outcomes.values()), len(incomplete))


# the scorer's metrics read one card per list of scores (``OncePerScores``)
_CARD = OncePerScores(_card)


def _leaderboard_metric(key: str) -> Metric:
    """One number of the aggregate (``total``, ``avg_acc``); NaN before any group is complete."""

    def compute(scores: list[SampleScore]) -> float:
        value = getattr(_CARD(scores).score, key)
        return float("nan") if value is None else float(value)

    return compute


@metric
def videomme_v2_nonlin_score() -> Metric:
    """Video-MME-v2's Non-Lin Score (0-100): the mean group score over complete groups."""
    return _leaderboard_metric("total")


@metric
def videomme_v2_avg_acc() -> Metric:
    """Per-question accuracy (0-100) over complete groups; failed extractions are wrong."""
    return _leaderboard_metric("avg_acc")


@metric
def videomme_v2_excluded_groups() -> Metric:
    """Groups left out of every score because their video or subtitles could not be read."""

    def compute(scores: list[SampleScore]) -> int:
        return _CARD(scores).score.n_excluded_groups

    return compute


@metric
def videomme_v2_incomplete_groups() -> Metric:
    """Groups left out of every score because not all four of their questions were run (a
    ``--limit`` run): the scores above are over the complete groups only."""

    def compute(scores: list[SampleScore]) -> int:
        return _CARD(scores).incomplete

    return compute


@metric
def videomme_v2_failed_extraction() -> Metric:
    """Replies from which no option letter could be extracted (scored wrong)."""

    def compute(scores: list[SampleScore]) -> int:
        return sum((s.score.metadata or {}).get("status") == "invalid" for s in scores)

    return compute


@scorer(metrics=[videomme_v2_nonlin_score(), videomme_v2_avg_acc(),
                 videomme_v2_failed_extraction(), videomme_v2_excluded_groups(),
                 videomme_v2_incomplete_groups()])
def videomme_v2_answer() -> Scorer:
    """The official extraction (``m3kit.metrics.extraction``); a failed sample or a failed
    extraction is wrong, except that unreadable media exclude the sample's group."""

    async def score(state: TaskState, target: Target) -> Score:
        question = sample_question(state.metadata)
        record = read_record(state.metadata)
        completion = state.output.completion if state.output is not None else ""
        if record is not None and record.failure is not None:
            outcome = QuestionOutcome(id=question.id, status="failed")
        else:
            outcome = outcome_of(question, completion)
        labels: dict[str, Any] = {k: state.metadata[k] for k in ("question_type", "condition")
                                  if state.metadata.get(k) is not None}
        fields = state.metadata.get(GROUP_META)
        item = VideoMMEv2Item(
            status=outcome.status, letter=outcome.letter, groups=labels,
            videomme_v2=GroupFields.model_validate(fields) if fields else group_fields(question),
        )
        return Score(
            value=1.0 if outcome.correct else 0.0,
            answer=outcome.letter,
            explanation=record.failure if record is not None and record.failure else None,
            metadata=item.to_metadata(),
        )

    return score
