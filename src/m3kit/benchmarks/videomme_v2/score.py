"""Video-MME-v2's numbers: group scores from ``m3kit.metrics.groups``, aggregated as the
benchmark's released evaluation does, from raw predictions of any harness or from an eval log:
``score_predictions`` reads a predictions file, ``score_outputs`` takes replies already in
memory, ``scores_from_log`` an eval run's samples; ``score_text`` is the tables
``m3kit score videomme-v2`` prints.

Every figure is on the 0-100 scale. ``total`` (the leaderboard's Non-Lin Score) is the mean over
groups; ``level_k``, ``relevance_score`` (capability consistency), ``relevance_linear_score``,
``logic_score`` (reasoning coherence) and the head tables are means over the groups they name;
``avg_acc`` is per-question accuracy. An empty category is ``None`` (the released script prints
0.0 there). A failed extraction is a wrong answer and is counted (``n_failed_extraction``).

A sample whose video or subtitle file could not be read is *excluded*, as M3Eval excludes it
(status ``failed``, reason ``media: ...``, ``m3kit.schema.MEDIA_FAILURE``). The four questions
of a group share one video, so the whole group is left out of every group score and of
``avg_acc``, and is counted and named (``n_excluded_groups``, ``excluded_groups``): the task's
metrics, ``scores_from_log`` (the report) and ``m3kit eval``'s table score the same questions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.logged import Outcome, logged_items
from m3kit.benchmarks.protocol import BenchmarkScoring
from m3kit.benchmarks.videomme_v2 import BENCHMARK
from m3kit.benchmarks.videomme_v2.item import (
    GroupFields,
    QuestionOutcome,
    VideoMMEv2Item,
    group_fields,
    outcome_of,
)
from m3kit.benchmarks.videomme_v2.load import (
    GroupInfo,
    VideoMMEv2Set,
    data_files,
    data_media,
    load_videomme_v2,
)
from m3kit.benchmarks.videomme_v2.predictions import read_predictions
from m3kit.metrics.groups import (
    GROUP_SIZE,
    GroupStructure,
    GroupType,
    group_score,
    mean_and_variance,
    relevance_linear_score,
)
from m3kit.schema import (
    LoggedSample,
    PredictionsCard,
    Question,
    SkippedRecord,
    match_predictions,
)
from m3kit.schema.evallog import mean_cost
from m3kit.schema.report import PLAIN_NA, Table, cost_cell, number_cell

__all__ = [
    "LEADERBOARD_KEYS",
    "SCORING",
    "GroupOutcome",
    "VideoMMEv2Score",
    "aggregate",
    "cluster_of",
    "groups_from_questions",
    "headline",
    "incomplete_note",
    "item_correct",
    "items_from_log",
    "items_from_predictions",
    "score_groups",
    "score_outputs",
    "score_predictions",
    "score_text",
    "scores_from_log",
    "scoring_rules",
    "summary_rows",
]

# The leaderboard's numbers: the keys of ``m3kit score videomme-v2 --json``, in order, before
# what was skipped (``PredictionsCard``).
LEADERBOARD_KEYS = (
    "total", "level_1", "level_2", "level_3", "relevance_score", "relevance_linear_score",
    "logic_score", "avg_acc", "non_lin_over_avg_acc", "n_failed_extraction", "second_head",
    "third_head",
)


class GroupOutcome(BaseModel):
    """One scored group."""

    model_config = ConfigDict(frozen=True)

    group: GroupInfo
    correct: tuple[bool, ...]
    score: float
    linear_score: float | None = None  # relevance groups only


class VideoMMEv2Score(PredictionsCard):
    """All of Video-MME-v2's numbers for one run (``leaderboard()``: the numbers of
    ``m3kit score videomme-v2 --json``, ``score_json()``: that JSON, with what was skipped)."""

    total: float | None
    level_1: float | None
    level_2: float | None
    level_3: float | None
    relevance_score: float | None
    relevance_linear_score: float | None
    logic_score: float | None
    avg_acc: float | None
    non_lin_over_avg_acc: float | None  # 100 * total / avg_acc
    n_failed_extraction: int
    second_head: dict[str, float] = Field(default_factory=dict)
    third_head: dict[str, float] = Field(default_factory=dict)
    # beyond the leaderboard
    n_groups: int = 0
    n_questions: int = 0
    n_failed: int = 0  # samples that got no answer at all (eval logs)
    n_missing: int = 0  # questions without a prediction (external predictions)
    n_excluded_groups: int = 0  # groups left out: their video or subtitles could not be read
    excluded_groups: list[str] = Field(default_factory=list)
    position_accuracy: dict[str, list[float | None]] = Field(default_factory=dict)
    relevance_accuracy_mean: float | None = None
    relevance_accuracy_variance: float | None = None
    # groups left out because not all four of their questions were run (a ``--limit`` run),
    # and how many answered questions they hold (out of ``avg_acc`` too)
    incomplete_groups: list[str] = Field(default_factory=list)
    n_incomplete_questions: int = 0

    def leaderboard(self) -> dict[str, Any]:
        """Exactly the leaderboard keys."""
        data = self.model_dump()
        return {key: data[key] for key in LEADERBOARD_KEYS}

    def score_json(self) -> dict[str, Any]:
        """The leaderboard keys, then what was skipped (a predictions file's card)."""
        data = self.model_dump(mode="json")
        return {**self.leaderboard(), **{key: data[key] for key in
                                         ("n_skipped_records", "n_unmatched_predictions",
                                          "skipped") if key in data}}


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def score_groups(
    groups: Iterable[GroupInfo], outcomes: Mapping[str, QuestionOutcome]
) -> list[GroupOutcome]:
    """Score each group from the outcomes of its questions (a question without an outcome is
    wrong)."""
    out = []
    for group in groups:
        correct = tuple(
            bool(outcomes.get(qid) and outcomes[qid].correct) for qid in group.question_ids
        )
        linear = relevance_linear_score(correct) if group.type is GroupType.RELEVANCE else None
        out.append(GroupOutcome(group=group, correct=correct,
                                score=group_score(correct, group.type, group.structure),
                                linear_score=linear))
    return out


def _position_accuracy(groups: Sequence[GroupOutcome]) -> list[float | None]:
    if not groups:
        return [None] * GROUP_SIZE
    return [100.0 * fmean(g.correct[i] for g in groups) for i in range(GROUP_SIZE)]


def aggregate(
    groups: Sequence[GroupOutcome], outcomes: Iterable[QuestionOutcome]
) -> VideoMMEv2Score:
    """The benchmark's numbers over scored ``groups``; ``outcomes`` (the same questions) give
    per-question accuracy and the extraction failures. A group with an excluded question (its
    shared video or subtitles unreadable) is left out of every number and named instead."""
    outcomes = list(outcomes)
    unreadable = {o.id for o in outcomes if o.excluded}
    excluded = [g.group.id for g in groups if unreadable & set(g.group.question_ids)]
    groups = [g for g in groups if g.group.id not in excluded]
    in_groups = {qid for g in groups for qid in g.group.question_ids}
    answered = [o for o in outcomes if o.id in in_groups]
    by_level: dict[int, list[float]] = defaultdict(list)
    second: dict[str, list[float]] = defaultdict(list)
    third: dict[str, list[float]] = defaultdict(list)
    for g in groups:
        if g.group.level is not None:
            by_level[g.group.level].append(g.score)
        if g.group.second_head is not None:
            second[g.group.second_head].append(g.score)
        if g.group.third_head is not None:
            third[g.group.third_head].append(g.score)
    relevance = [g for g in groups if g.group.type is GroupType.RELEVANCE]
    logic = [g for g in groups if g.group.type is GroupType.LOGIC]
    n_questions = len(groups) * GROUP_SIZE
    n_correct = sum(sum(g.correct) for g in groups)
    total = _mean([g.score for g in groups])
    avg_acc = 100.0 * n_correct / n_questions if n_questions else None
    relevance_positions = _position_accuracy(relevance)
    mean, variance = (
        mean_and_variance([x for x in relevance_positions if x is not None])
        if relevance else (None, None)
    )
    return VideoMMEv2Score(
        total=total,
        level_1=_mean(by_level[1]),
        level_2=_mean(by_level[2]),
        level_3=_mean(by_level[3]),
        relevance_score=_mean([g.score for g in relevance]),
        relevance_linear_score=_mean([g.linear_score or 0.0 for g in relevance]),
        logic_score=_mean([g.score for g in logic]),
        avg_acc=avg_acc,
        non_lin_over_avg_acc=(100.0 * total / avg_acc) if total is not None and avg_acc else None,
        n_failed_extraction=sum(o.status == "invalid" for o in answered),
        second_head={k: fmean(v) for k, v in sorted(second.items())},
        third_head={k: fmean(v) for k, v in sorted(third.items())},
        n_groups=len(groups),
        n_questions=n_questions,
        n_failed=sum(o.status == "failed" for o in answered),
        n_excluded_groups=len(excluded),
        excluded_groups=excluded,
        position_accuracy={"relevance": relevance_positions,
                           "logic": _position_accuracy(logic)},
        relevance_accuracy_mean=mean,
        relevance_accuracy_variance=variance,
    )


def score_outputs(data: VideoMMEv2Set, predictions: Mapping[str, str]) -> VideoMMEv2Score:
    """Score raw replies (``question_id -> text``, from any harness) against ``data``.

    A prediction for a question the table does not have is counted and named
    (``n_unmatched_predictions``, ``unmatched_ids``), never scored; one for a question of a
    skipped group is ignored (the group is in ``skipped``, from loading). A question without a
    prediction is a failed extraction (``n_missing`` counts them too).
    """
    known = {q.id for q in data.questions}
    unmatched = sorted(set(predictions) - known - set(data.skipped_question_ids))
    outcomes = {q.id: outcome_of(q, predictions.get(q.id)) for q in data.questions}
    result = aggregate(score_groups(data.groups, outcomes), outcomes.values())
    result = result.model_copy(update={"n_missing": len(known - set(predictions))})
    return result.with_skips([SkippedRecord.from_error(e) for e in data.skipped], unmatched)


def score_predictions(data: Path, predictions: Path) -> VideoMMEv2Score:
    """Score a predictions file (``load.read_predictions``: JSONL, JSON, TSV or ``.xlsx`` with
    ``question_id`` and ``prediction``; lmms-eval's samples file) against the Video-MME-v2
    folder or table ``data``, as ``score_outputs`` does. The card's ``skipped`` lists the
    table's skips, then the predictions file's. Raises ``NothingToScoreError`` when no question
    loads or no prediction matches one."""
    loaded = load_videomme_v2(data)
    replies, bad = read_predictions(predictions)
    skipped = [*(SkippedRecord.from_error(e) for e in loaded.skipped), *bad]
    match_predictions({q.id for q in loaded.questions}, replies, data=data,
                      predictions=predictions, skipped=skipped,
                      ignored=loaded.skipped_question_ids)
    card = score_outputs(loaded, replies)
    notes = ([f"{card.n_missing} question(s) have no prediction: scored as failed extractions"]
             if card.n_missing else [])
    return card.with_skips(skipped, card.unmatched_ids, notes)


def _cell(value: float | None) -> str:
    return number_cell(value, 2, PLAIN_NA)


def score_text(card: VideoMMEv2Score, predictions: Path) -> list[Table]:
    """The leaderboard's numbers of ``card`` and its head tables, rounded to 2 decimals for
    display."""
    main = Table(title=f"Video-MME-v2 · {card.n_groups} groups · {predictions.name}",
                 columns=["metric", "score"], rows=[])
    for key in ("total", "level_1", "level_2", "level_3", "relevance_score",
                "relevance_linear_score", "logic_score", "avg_acc", "non_lin_over_avg_acc"):
        main.rows.append([key, _cell(getattr(card, key))])
    main.rows.append(["n_failed_extraction", str(card.n_failed_extraction)])
    tables = [main]
    for title, heads in (("second head", card.second_head), ("third head", card.third_head)):
        if heads:
            tables.append(Table(title=title, columns=["name", "score"],
                                rows=[[name, _cell(value)] for name, value in heads.items()]))
    return tables


def groups_from_questions(questions: Iterable[Question]) -> tuple[list[GroupInfo], list[str]]:
    """The groups of ``questions`` (as loaded, carrying ``group`` and the group's labels in
    metadata) and the ids of groups that are incomplete here (a ``--limit`` run): those are
    left out, never scored as shifted groups."""
    members: dict[str, dict[int, Question]] = defaultdict(dict)
    for q in questions:
        if q.group is None:
            continue
        members[q.group.id][q.group.position] = q
    groups, incomplete = [], []
    for gid in sorted(members):
        by_pos = members[gid]
        if sorted(by_pos) != list(range(1, GROUP_SIZE + 1)):
            incomplete.append(gid)
            continue
        last = by_pos[GROUP_SIZE]
        gtype, structure = _group_kind(group_fields(last))
        groups.append(GroupInfo(
            id=gid, type=gtype, structure=structure,
            level=last.metadata.get("level"), second_head=last.metadata.get("second_head"),
            third_head=last.metadata.get("third_head"),
            question_ids=tuple(by_pos[p].id for p in range(1, GROUP_SIZE + 1)),
        ))
    return groups, incomplete


def _group_kind(fields: GroupFields) -> tuple[GroupType, GroupStructure | None]:
    """A group's type, and its structure where it is a logic group (from its last question's
    fields)."""
    gtype = GroupType(fields.type or "")  # no type: ValueError, as for an unknown one
    return gtype, GroupStructure(fields.structure or "") if gtype is GroupType.LOGIC else None


def _logged_outcomes(
    samples: Sequence[LoggedSample],
) -> tuple[list[Question], dict[str, QuestionOutcome]]:
    """The questions of a run's samples (those that carry one) and each one's outcome
    (``m3kit.benchmarks.logged``): a sample whose media could not be read is excluded (its
    group left out); inspect's own error, or no score, is a failure, never an exclusion."""
    questions: list[Question] = []
    outcomes: dict[str, QuestionOutcome] = {}
    for logged in logged_items([s for s in samples if s.question is not None], VideoMMEv2Item,
                               BENCHMARK.failures):
        question = logged.sample.question
        assert question is not None  # only samples that carry their question are read
        questions.append(question)
        item = logged.item
        if logged.outcome is Outcome.EXCLUDED:
            outcome = QuestionOutcome(id=question.id, status="failed",
                                      reason=logged.sample.reason)
        elif item is None:
            outcome = QuestionOutcome(id=question.id, status="failed", reason="error")
        else:
            outcome = QuestionOutcome(id=question.id, status=item.status, letter=item.letter,
                                      reason=logged.sample.explanation or "")
        outcomes[question.id] = outcome
    return questions, outcomes


def scores_from_log(samples: Sequence[LoggedSample]) -> VideoMMEv2Score:
    """The numbers of one ``videomme_v2`` run from its samples
    (``m3kit.report.logs.read_samples``), the ids of groups left out as incomplete in
    ``incomplete_groups``. A run spread over several logs (a killed run and its ``--resume``,
    shards) is pooled into one first (``m3kit.report.pooling.pool_logs``)."""
    questions, outcomes = _logged_outcomes(samples)
    groups, incomplete = groups_from_questions(questions)
    score = aggregate(score_groups(groups, outcomes), outcomes.values())
    cut = set(incomplete)
    return score.model_copy(update={
        "incomplete_groups": incomplete,
        "n_incomplete_questions": sum(q.group is not None and q.group.id in cut
                                      for q in questions)})


def incomplete_note(score: VideoMMEv2Score, name: str) -> str | None:
    """What a run's numbers leave out because its groups were cut (a ``--limit`` run): how
    many groups were scored of how many were run, and which were not (``None`` when every
    run group is complete)."""
    cut = score.incomplete_groups
    if not cut:
        return None
    shown = ", ".join(cut[:SHOW_GROUPS]) + (" ..." if len(cut) > SHOW_GROUPS else "")
    run = score.n_groups + len(cut) + score.n_excluded_groups
    return (f"{name}: {score.n_groups} of {run} groups scored; "
            f"{len(cut)} incomplete (fewer than four of their questions run, a --limit run) "
            f"left out of every number, Avg Acc included, with their "
            f"{score.n_incomplete_questions} answered question(s): {shown}")


SHOW_GROUPS = 10  # incomplete groups named in a note; the JSON's incomplete_groups has all


def summary_rows(samples: Sequence[LoggedSample]) -> tuple[list[str], list[list[str]]]:
    """What ``m3kit eval`` prints: Video-MME-v2's leaderboard numbers (already 0-100) for the
    whole run, with the groups left out (``excl grp``: video or subtitles unreadable;
    ``incompl``: not all four questions run) and the mean cost of answered samples."""
    score = scores_from_log(samples)
    tokens, images = mean_cost(samples)
    columns = ["group", "groups", "Non-Lin", "Avg Acc", "failed", "excl grp", "incompl",
               "tok in", "images"]
    rows = [["all", str(score.n_groups), number_cell(score.total), number_cell(score.avg_acc),
             str(score.n_failed), str(score.n_excluded_groups),
             str(len(score.incomplete_groups)), cost_cell(tokens), cost_cell(images)]]
    return columns, rows


def scoring_rules() -> dict[str, str]:
    """The scoring rules in force, for the reproducibility card (the released script's; no
    variants)."""
    return {
        "answer": "letter extraction as the released script",
        "failed extraction": "counted wrong",
        "relevance": "capability consistency 100*(k/4)^2 (linear 25*k reported beside)",
        "logic": "first-error truncation",
        "unreadable media": "whole group excluded",
    }


# -- per-item records and the headline numbers (confidence intervals, paired comparisons) ---

def _items(questions: Sequence[Question], groups: Iterable[GroupInfo],
           outcomes: Mapping[str, QuestionOutcome]) -> list[VideoMMEv2Item]:
    by_id = {q.id: q for q in questions}
    return [
        VideoMMEv2Item(id=qid, status=outcomes[qid].status, letter=outcomes[qid].letter,
                       videomme_v2=group_fields(by_id[qid]))
        for group in groups for qid in group.question_ids
    ]


def items_from_predictions(data: Path, predictions: Path) -> list[VideoMMEv2Item]:
    """The per-item records of a predictions file, as ``score_predictions`` scores it: the four
    questions of every loaded group, a question without a prediction a failed extraction."""
    loaded = load_videomme_v2(data)
    replies, bad = read_predictions(predictions)
    match_predictions({q.id for q in loaded.questions}, replies, data=data,
                      predictions=predictions,
                      skipped=[*(SkippedRecord.from_error(e) for e in loaded.skipped), *bad],
                      ignored=loaded.skipped_question_ids)
    outcomes = {q.id: outcome_of(q, replies.get(q.id)) for q in loaded.questions}
    return _items(loaded.questions, loaded.groups, outcomes)


def items_from_log(samples: Sequence[LoggedSample]) -> list[VideoMMEv2Item]:
    """The per-item records of a run, as ``scores_from_log`` counts them: the questions of its
    complete groups, groups with an unreadable video or subtitles left out, errored samples
    failed."""
    questions, outcomes = _logged_outcomes(samples)
    groups, _ = groups_from_questions(questions)
    kept = [g for g in groups if not any(outcomes[q].excluded for q in g.question_ids)]
    return _items(questions, kept, outcomes)


def cluster_of(item: VideoMMEv2Item) -> str:
    """The unit Video-MME-v2's intervals resample: the group of 4 questions on one video."""
    return item.videomme_v2.group or item.id or ""


def item_correct(item: VideoMMEv2Item) -> bool:
    """Whether the item was answered correctly (a failed extraction is wrong)."""
    return item.status == "correct"


def _level(value: int | str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def headline(items: Sequence[VideoMMEv2Item]) -> dict[str, float | None]:
    """The leaderboard's headline numbers of per-item records, 0-100, equal to the score
    card's: ``non_lin`` (the card's ``total``), ``level_1``..``level_3`` and ``avg_acc``.

    Items are gathered by group and position; a group whose four positions appear k times
    each (a bootstrap resample that drew it k times) counts k times; a group missing a
    position is left out, as an incomplete group is."""
    by_group: dict[str, dict[int, list[VideoMMEv2Item]]] = defaultdict(dict)
    for item in items:
        fields = item.videomme_v2
        if fields.group is None or fields.position is None:
            continue
        by_group[fields.group].setdefault(fields.position, []).append(item)
    scores: list[float] = []
    by_level: dict[int, list[float]] = defaultdict(list)
    n_correct = 0
    for positions in by_group.values():
        if sorted(positions) != list(range(1, GROUP_SIZE + 1)):
            continue
        copies = len(positions[1])
        if any(len(members) != copies for members in positions.values()):
            continue
        last = positions[GROUP_SIZE][0].videomme_v2
        gtype, structure = _group_kind(last)
        level = _level(last.level)
        for copy in range(copies):
            correct = tuple(positions[p][copy].status == "correct"
                            for p in range(1, GROUP_SIZE + 1))
            score = group_score(correct, gtype, structure)
            scores.append(score)
            if level is not None:
                by_level[level].append(score)
            n_correct += sum(correct)
    n_questions = len(scores) * GROUP_SIZE
    return {
        "non_lin": _mean(scores),
        "level_1": _mean(by_level[1]),
        "level_2": _mean(by_level[2]),
        "level_3": _mean(by_level[3]),
        "avg_acc": 100.0 * n_correct / n_questions if n_questions else None,
    }


SCORING = BenchmarkScoring(
    item=VideoMMEv2Item,
    score_predictions=score_predictions,
    scores_from_log=scores_from_log,
    score_text=score_text,
    summary_rows=summary_rows,
    headline=headline,
    cluster_of=cluster_of,
    item_correct=item_correct,
    items_from_log=items_from_log,
    items_from_predictions=items_from_predictions,
    data_files=data_files,
    data_media=data_media,
    scoring_rules=scoring_rules,
)
