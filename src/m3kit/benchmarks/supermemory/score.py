"""SuperMemory-VQA's numbers (seed 003 §4.3, Tables 2-5, Fig. 8), from raw predictions of any
harness or from an eval log: ``score_predictions`` reads a predictions file, ``scores_from_log``
an eval run's samples; both build one ``SuperMemoryItem`` per question and ``aggregate`` them.

Every figure is on the 0-100 scale (docs/metrics.md, "SuperMemory-VQA", has every rule):

- ``qa_acc``: the first-ranked option is the gold; an invalid reply is wrong;
- ``ans_f1``: F1 of the answer/abstain decision, positive = answerable (a valid answer that is
  not the abstain option); ``abstain_f1``: positive = unanswerable; an invalid reply is the
  wrong decision in both;
- ``qa_mrr``: mean reciprocal rank of the gold, unranked options tied
  (``m3kit.metrics.ranking.reciprocal_rank``); invalid 0;
- ``vague_credit_acc``: the ``vague`` option of an answerable question earns ``vague_weight``;
  ``vague_gain`` = ``vague_credit_acc - qa_acc`` (Table 5's bracket);
- ``by_skill``, ``by_person`` / ``by_video`` with the mean and sample std of the groups' accuracy
  (Table 4), ``answerable`` / ``unanswerable`` breakdowns (Fig. 8).

A question with no prediction (``n_missing``) is scored exactly as an invalid reply. In an eval
log, a sample that failed for its model or memory is scored as invalid too (``n_failed``); one
whose media could not be read is excluded and counted (``n_excluded``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from m3kit.benchmarks.logged import Outcome, logged_items
from m3kit.benchmarks.protocol import BenchmarkScoring
from m3kit.benchmarks.supermemory import BENCHMARK
from m3kit.benchmarks.supermemory.item import ABSTAIN, SuperMemoryItem, item_of
from m3kit.benchmarks.supermemory.load import (
    SKILLS,
    SuperMemorySet,
    data_files,
    data_media,
    load_supermemory,
)
from m3kit.benchmarks.supermemory.predictions import PredictionRow, read_predictions
from m3kit.benchmarks.supermemory.stats import DatasetStats, dataset_stats, stats_tables
from m3kit.metrics.ranking import (
    binary_f1,
    choice_credit,
    mean_and_sample_std,
    reciprocal_rank,
)
from m3kit.schema import (
    LoggedSample,
    PredictionsCard,
    SkippedRecord,
    match_predictions,
)
from m3kit.schema.evallog import mean_cost
from m3kit.schema.report import PLAIN_NA, Table, cost_cell, number_cell

__all__ = [
    "ANSWERABLE_CORRECT",
    "DEFAULT_VAGUE_WEIGHT",
    "SCORING",
    "UNANSWERABLE_ABSTAINED",
    "AnswerableBreakdown",
    "GroupAccuracy",
    "SkillScore",
    "SuperMemoryScore",
    "UnanswerableBreakdown",
    "aggregate",
    "cluster_of",
    "figure_numbers",
    "headline",
    "item_correct",
    "items_from_log",
    "items_from_predictions",
    "score_predictions",
    "score_text",
    "scores_from_log",
    "scoring_rules",
    "skill_number",
    "summary_rows",
]

# Table 5 gives vague choices partial credit without stating the weight: half by default.
DEFAULT_VAGUE_WEIGHT = 0.5


# -- the score card ----------------------------------------------------------------------------


class SkillScore(BaseModel):
    """One skill's questions: how many, QA-Acc and QA-MRR (0-100)."""

    n: int
    qa_acc: float
    qa_mrr: float


class GroupAccuracy(BaseModel):
    """One person's (or one video's) questions: how many, and QA-Acc (0-100)."""

    n: int
    qa_acc: float


class AnswerableBreakdown(BaseModel):
    """What answerable questions got, in percent of them (Fig. 8): the gold, the vague
    option, a wrong option, the abstain option, or an invalid (or missing) reply."""

    correct: float | None = None
    vague: float | None = None
    wrong: float | None = None
    abstained: float | None = None
    invalid: float | None = None


class UnanswerableBreakdown(BaseModel):
    """What unanswerable questions got, in percent of them (Fig. 8): the abstain option (the
    gold), another option, or an invalid (or missing) reply."""

    abstained: float | None = None
    answered: float | None = None
    invalid: float | None = None


class SuperMemoryScore(PredictionsCard):
    """All of SuperMemory-VQA's numbers for one run or predictions file (0-100)."""

    n: int
    n_answerable: int
    n_unanswerable: int
    n_invalid: int  # replies that parse to no ranking
    n_missing: int  # questions without a prediction
    qa_acc: float | None
    ans_f1: float | None
    abstain_f1: float | None
    qa_mrr: float | None
    vague_credit_acc: float | None
    vague_gain: float | None  # vague_credit_acc - qa_acc
    vague_weight: float
    by_skill: dict[str, SkillScore] = Field(default_factory=dict)
    by_person: dict[str, GroupAccuracy] = Field(default_factory=dict)
    person_mean: float | None = None
    person_std: float | None = None
    by_video: dict[str, GroupAccuracy] = Field(default_factory=dict)
    video_mean: float | None = None
    video_std: float | None = None
    answerable: AnswerableBreakdown = Field(default_factory=AnswerableBreakdown)
    unanswerable: UnanswerableBreakdown = Field(default_factory=UnanswerableBreakdown)
    n_failed: int = 0  # eval logs: samples that got no answer (scored as invalid)
    n_excluded: int = 0  # eval logs: samples whose media could not be read (left out)
    data_stats: DatasetStats | None = None  # appendix E, when asked for (``--stats``)

    optional_keys: ClassVar[tuple[str, ...]] = ("data_stats",)


def _percent(part: float, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


def _f1(value: float | None) -> float | None:
    return 100.0 * value if value is not None else None


def _acc(items: Sequence[SuperMemoryItem]) -> float | None:
    return _percent(sum(i.status == "correct" for i in items), len(items))


def _mrr(items: Sequence[SuperMemoryItem]) -> float | None:
    if not items:
        return None
    return 100.0 * fmean(reciprocal_rank(i.ranking, i.gold, len(i.option_types) or 4)
                         for i in items)


def _decisions(items: Sequence[SuperMemoryItem]) -> list[bool | None]:
    """Per item: whether it answered (not the abstain option); ``None`` when invalid."""
    return [None if i.answer is None else i.answer_type != ABSTAIN for i in items]


def _groups(items: Iterable[SuperMemoryItem], key: str) -> dict[str, GroupAccuracy]:
    members: dict[str, list[SuperMemoryItem]] = defaultdict(list)
    for item in items:
        members[getattr(item, key)].append(item)
    return {name: GroupAccuracy(n=len(group), qa_acc=_acc(group) or 0.0)
            for name, group in sorted(members.items(), key=lambda kv: _natural(kv[0]))}


def _natural(name: str) -> tuple[int, str]:
    return (int(name), "") if name.isdigit() else (1 << 62, name)


def _breakdowns(items: Sequence[SuperMemoryItem]
                ) -> tuple[AnswerableBreakdown, UnanswerableBreakdown]:
    answerable = [i for i in items if i.answerable]
    unanswerable = [i for i in items if not i.answerable]
    counts: dict[str, int] = defaultdict(int)
    for item in answerable:
        kind = item.answer_type
        counts[{None: "invalid", "correct": "correct", "vague": "vague",
                ABSTAIN: "abstained"}.get(kind, "wrong")] += 1
    n = len(answerable)
    a = AnswerableBreakdown(**{k: _percent(counts[k], n) for k in
                               ("correct", "vague", "wrong", "abstained", "invalid")})
    m = len(unanswerable)
    u = UnanswerableBreakdown(
        abstained=_percent(sum(i.answer_type == ABSTAIN for i in unanswerable), m),
        answered=_percent(sum(i.answer is not None and i.answer_type != ABSTAIN
                              for i in unanswerable), m),
        invalid=_percent(sum(i.answer is None for i in unanswerable), m),
    )
    return a, u


def aggregate(items: Sequence[SuperMemoryItem], *,
              vague_weight: float = DEFAULT_VAGUE_WEIGHT) -> SuperMemoryScore:
    """The benchmark's numbers over per-question records (every rule: module doc); Table 2's
    numbers are ``headline``'s."""
    answerable = [i.answerable for i in items]
    abstentions = [None if d is None else not d for d in _decisions(items)]
    credit = [choice_credit("correct" if i.status == "correct" else i.answer_type,
                            answerable=i.answerable, vague_weight=vague_weight) for i in items]
    numbers = headline(items)
    qa_acc = numbers["qa_acc"]
    vague = 100.0 * fmean(credit) if items else None
    by_skill: dict[str, list[SuperMemoryItem]] = defaultdict(list)
    for item in items:
        by_skill[item.skill].append(item)
    order = {s: n for n, s in enumerate(SKILLS)}
    by_person = _groups(items, "subject")
    by_video = _groups(items, "video")
    person_mean, person_std = mean_and_sample_std([g.qa_acc for g in by_person.values()])
    video_mean, video_std = mean_and_sample_std([g.qa_acc for g in by_video.values()])
    answerable_breakdown, unanswerable_breakdown = _breakdowns(items)
    return SuperMemoryScore(
        n=len(items),
        n_answerable=sum(answerable),
        n_unanswerable=len(items) - sum(answerable),
        n_invalid=sum(i.status == "invalid" and not i.missing for i in items),
        n_missing=sum(i.missing for i in items),
        n_failed=sum(i.status == "failed" for i in items),
        qa_acc=qa_acc,
        ans_f1=numbers["ans_f1"],
        abstain_f1=_f1(binary_f1([not a for a in answerable], abstentions)),
        qa_mrr=numbers["qa_mrr"],
        vague_credit_acc=vague,
        vague_gain=vague - qa_acc if vague is not None and qa_acc is not None else None,
        vague_weight=vague_weight,
        by_skill={s: SkillScore(n=len(g), qa_acc=_acc(g) or 0.0, qa_mrr=_mrr(g) or 0.0)
                  for s, g in sorted(by_skill.items(), key=lambda kv: order.get(kv[0], 99))},
        by_person=by_person, person_mean=person_mean, person_std=person_std,
        by_video=by_video, video_mean=video_mean, video_std=video_std,
        answerable=answerable_breakdown, unanswerable=unanswerable_breakdown,
    )


# -- external predictions ----------------------------------------------------------------------


def _predicted_items(loaded: SuperMemorySet, rows: Mapping[str, PredictionRow]
                     ) -> list[SuperMemoryItem]:
    items = []
    for question in loaded.questions:
        row = rows.get(question.id)
        n = len(question.choices)
        items.append(item_of(question, row.parsed(n) if row is not None else None,
                             missing=row is None))
    return items


def _loaded_predictions(data: Path, predictions: Path
                        ) -> tuple[SuperMemorySet, list[SuperMemoryItem], list[SkippedRecord]]:
    from m3kit.errors import SchemaError

    loaded = load_supermemory(data)
    if not Path(predictions).is_file():
        raise SchemaError("no such predictions file", path=predictions)
    rows, bad = read_predictions(predictions)
    skipped = [*loaded.skipped, *bad]
    unmatched = match_predictions({q.id for q in loaded.questions}, rows, data=data,
                                  predictions=predictions, skipped=skipped,
                                  ignored=loaded.skipped_question_ids)
    skipped += [SkippedRecord.at(predictions, qid, "no question has this id", "question_id")
                for qid in unmatched]
    return loaded, _predicted_items(loaded, rows), skipped


def score_predictions(data: Path, predictions: Path, *,
                      vague_weight: float = DEFAULT_VAGUE_WEIGHT,
                      stats: bool = False) -> SuperMemoryScore:
    """Score a predictions file against ``data`` (a SuperMemory-VQA folder or its
    ``all_qa.json``). The card's ``skipped`` lists the data's skips, the predictions file's,
    then the predictions whose id matches no question; ``stats``: the card carries the data
    set's statistics too (``data_stats``). ``NothingToScoreError`` when no question loads or
    no prediction matches one."""
    loaded, items, skipped = _loaded_predictions(data, predictions)
    card = aggregate(items, vague_weight=vague_weight)
    if stats:
        card = card.model_copy(update={"data_stats": dataset_stats(loaded.questions)})
    unmatched = [s.record or "" for s in skipped
                 if s.file == str(predictions) and s.reason == "no question has this id"]
    notes = ([f"{card.n_missing} question(s) have no prediction: scored as invalid replies"]
             if card.n_missing else [])
    return card.with_skips(skipped, unmatched, notes)


def items_from_predictions(data: Path, predictions: Path, **_options: Any
                           ) -> list[SuperMemoryItem]:
    """The per-item records of a predictions file, as ``score_predictions`` scores them (its
    options change no record)."""
    return _loaded_predictions(data, predictions)[1]


# -- eval logs ---------------------------------------------------------------------------------


def _log_items(samples: Sequence[LoggedSample]) -> tuple[list[SuperMemoryItem], int]:
    """The records of a run's samples that carry their question (ids set), and how many were
    excluded (media unreadable); a sample inspect errored on, or without a record, is failed
    (``m3kit.benchmarks.logged``, the declared ``FailurePolicy``)."""
    items: list[SuperMemoryItem] = []
    excluded = 0
    for logged in logged_items([s for s in samples if s.question is not None], SuperMemoryItem,
                               BENCHMARK.failures):
        question = logged.sample.question
        assert question is not None  # only samples that carry their question are read
        if logged.outcome is Outcome.EXCLUDED:
            excluded += 1
        else:
            items.append(logged.item or item_of(question, None, failed=True))
    return items, excluded


def scores_from_log(samples: Sequence[LoggedSample], *,
                    vague_weight: float = DEFAULT_VAGUE_WEIGHT) -> SuperMemoryScore:
    """The numbers of one ``supermemory`` run from its samples
    (``m3kit.report.logs.read_samples``)."""
    items, excluded = _log_items(samples)
    card = aggregate(items, vague_weight=vague_weight)
    return card.model_copy(update={"n_excluded": excluded})


def items_from_log(samples: Sequence[LoggedSample]) -> list[SuperMemoryItem]:
    """The per-item records of a run, as ``scores_from_log`` counts them."""
    return _log_items(samples)[0]


def summary_rows(samples: Sequence[LoggedSample]) -> tuple[list[str], list[list[str]]]:
    """What ``m3kit eval`` prints: Ans-F1, QA-Acc, QA-MRR (Table 2's columns) for the run and
    per skill, with the invalid, failed and excluded counts and the mean cost."""
    card = scores_from_log(samples)
    tokens, images = mean_cost(samples)
    columns = ["skill", "n", "Ans-F1", "Acc", "MRR", "invalid", "failed", "excluded",
               "tok in", "images"]
    rows = [["all", str(card.n), number_cell(card.ans_f1), number_cell(card.qa_acc),
             number_cell(card.qa_mrr), str(card.n_invalid), str(card.n_failed),
             str(card.n_excluded), cost_cell(tokens), cost_cell(images)]]
    # each skill's excluded samples beside its n, so a skill's accuracy over fewer questions
    # (or a skill with every question excluded) is never shown as the whole skill
    excluded = excluded_by_skill(samples)
    order = {s: n for n, s in enumerate(SKILLS)}
    skills = sorted({*card.by_skill, *excluded}, key=lambda k: (order.get(k, 99), k))
    for skill in skills:
        scored = card.by_skill.get(skill)
        # words, not identifiers: a narrow first column then wraps between words, not mid-word
        rows.append([skill.replace("_", " "), str(scored.n if scored else 0), "",
                     number_cell(scored.qa_acc if scored else None),
                     number_cell(scored.qa_mrr if scored else None), "", "",
                     str(excluded[skill]) if skill in excluded else "", "", ""])
    return columns, rows


def excluded_by_skill(samples: Sequence[LoggedSample]) -> dict[str, int]:
    """How many of a run's samples were excluded (media unreadable), by skill."""
    counts: dict[str, int] = defaultdict(int)
    for sample in samples:
        if sample.excluded and sample.question is not None:
            meta = sample.question.metadata
            counts[str(meta.get("skill") or sample.question.question_type or "")] += 1
    return dict(counts)


# -- printing, intervals, the card -------------------------------------------------------------


def _cell(value: float | None) -> str:
    return number_cell(value, 2, PLAIN_NA)


def score_text(card: SuperMemoryScore, predictions: Path) -> list[Table]:
    """What ``m3kit score supermemory`` prints: the headline numbers with their counts, then
    accuracy by skill, by person and the answerability breakdown (2 decimals; ``--json`` is
    never rounded)."""
    main = Table(title=f"SuperMemory-VQA · {card.n} questions · {predictions.name}",
                 columns=["metric", "score"], rows=[])
    for key in ("ans_f1", "abstain_f1", "qa_acc", "qa_mrr", "vague_credit_acc", "vague_gain",
                "person_mean", "person_std", "video_mean", "video_std"):
        main.rows.append([key, _cell(getattr(card, key))])
    for key in ("n", "n_answerable", "n_unanswerable", "n_invalid", "n_missing"):
        main.rows.append([key, str(getattr(card, key))])
    main.rows.append(["vague_weight", f"{card.vague_weight:g}"])
    skills = Table(title="by skill", columns=["skill", "n", "qa_acc", "qa_mrr"],
                   rows=[[k, str(v.n), _cell(v.qa_acc), _cell(v.qa_mrr)]
                         for k, v in card.by_skill.items()])
    persons = Table(title="by person", columns=["person", "n", "qa_acc"],
                    rows=[[k, str(v.n), _cell(v.qa_acc)] for k, v in card.by_person.items()])
    a, u = card.answerable, card.unanswerable
    breakdown = Table(
        title=f"answerability ({card.n_answerable} answerable, {card.n_unanswerable} not), %",
        columns=["questions", "correct", "vague", "wrong", "abstained", "answered", "invalid"],
        rows=[["answerable", _cell(a.correct), _cell(a.vague), _cell(a.wrong),
               _cell(a.abstained), "", _cell(a.invalid)],
              ["unanswerable", "", "", "", _cell(u.abstained), _cell(u.answered),
               _cell(u.invalid)]])
    tables = [main, skills, persons, breakdown]
    return tables + (stats_tables(card.data_stats) if card.data_stats is not None else [])


def headline(items: Sequence[SuperMemoryItem]) -> dict[str, float | None]:
    """Table 2's numbers of per-item records (0-100): ``ans_f1``, ``qa_acc`` and ``qa_mrr``,
    the one computation of them (``aggregate`` takes its card's from here; the bootstrap calls
    this once a resample)."""
    return {"ans_f1": _f1(binary_f1([i.answerable for i in items], _decisions(items))),
            "qa_acc": _acc(items), "qa_mrr": _mrr(items)}


def skill_number(skill: str) -> str:
    """The name of a skill's accuracy among ``figure_numbers`` (``Acc · <skill>``)."""
    return f"Acc · {skill}"


ANSWERABLE_CORRECT = "answerable: correct"
UNANSWERABLE_ABSTAINED = "unanswerable: abstained"


def figure_numbers(items: Sequence[SuperMemoryItem]) -> dict[str, float | None]:
    """The numbers the report's figures draw error bars for (0-100), each equal to the score
    card's: each skill's accuracy (Fig. 7/9, ``skill_number``), the share of answerable
    questions answered with the gold (``ANSWERABLE_CORRECT``) and of unanswerable ones
    abstained on (``UNANSWERABLE_ABSTAINED``), the first segments of Fig. 8's bars."""
    skills: dict[str, list[SuperMemoryItem]] = defaultdict(list)
    for item in items:
        skills[item.skill].append(item)
    answerable = [i for i in items if i.answerable]
    unanswerable = [i for i in items if not i.answerable]
    out = {skill_number(skill): _acc(group) for skill, group in skills.items()}
    out[ANSWERABLE_CORRECT] = _percent(sum(i.answer_type == "correct" for i in answerable),
                                       len(answerable))
    out[UNANSWERABLE_ABSTAINED] = _percent(sum(i.answer_type == ABSTAIN for i in unanswerable),
                                           len(unanswerable))
    return out


def cluster_of(item: SuperMemoryItem) -> str:
    """The unit SuperMemory-VQA's intervals resample: the person (all questions about one
    person's recordings share their days, places and people; videos nest in persons)."""
    return item.subject or item.id or ""


def item_correct(item: SuperMemoryItem) -> bool:
    """Whether the first-ranked option is the gold."""
    return item.status == "correct"


def scoring_rules(vague_weight: float = DEFAULT_VAGUE_WEIGHT) -> dict[str, str]:
    """The scoring rules in force, for the reproducibility card."""
    return {
        "reply": "ranking after the last 'Ranking:'/'Answer:', letters joined by '>' or ','; "
                 "a lone letter is a one-item ranking; else invalid",
        "qa_acc": "first-ranked option = gold; invalid and missing wrong",
        "ans_f1": "positive = answerable; invalid is the wrong decision",
        "qa_mrr": "unranked options tied (mean of their reciprocal ranks); invalid 0",
        "vague_weight": f"{vague_weight:g}",
        "std": "sample (n-1) over persons / videos",
    }


SCORING = BenchmarkScoring(
    item=SuperMemoryItem,
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
