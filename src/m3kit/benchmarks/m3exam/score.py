"""M3Exam scoring: per-item EM / F1 / BLEU-1 / LLM-judge under each type's rule, then the
per-type table and the TOTAL with the Overall Score (paper Appendix B.2).

TOTAL EM averages every scored item; TOTAL F1, BLEU-1 and LLM-J average the items that are
neither fm nor fj; ``overall = 0.5 * llm_judge + (em + f1 + bleu1) / 6``. Everything is on the
0-1 scale. Predictions come from any harness as JSONL ``{"id", "prediction", "judge"?}``:
``score_predictions`` scores such a file against a persona folder (or LoCoMo),
``score_outputs`` the same records already in memory; ``score_text`` is the table
``m3kit score m3exam`` prints.

fj items are scored by the paper's rule (the whole normalised prediction against the gold
letter) unless ``fj_rule="letter"`` (m3kit's addition: the letter the prediction states); the
score card's ``fj_rule`` says which.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ConfigDict

from m3kit.benchmarks.logged import logged_items
from m3kit.benchmarks.m3exam import BENCHMARK
from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.benchmarks.m3exam.load import (
    QUESTION_TYPES,
    M3ExamData,
    data_files,
    data_media,
    evidence_session,
    load_data,
)
from m3kit.benchmarks.m3exam.predictions import PredictionRecord, read_predictions
from m3kit.benchmarks.protocol import BenchmarkScoring
from m3kit.errors import M3kitError
from m3kit.metrics.text_match import FJ_RULES, AnswerScores, FjRule, score_text_answer
from m3kit.schema import (
    LoggedSample,
    PredictionsCard,
    Question,
    ScoreStatus,
    SkippedRecord,
    match_predictions,
)
from m3kit.schema.evallog import mean_cost
from m3kit.schema.report import PLAIN_NA, Table, cost_cell, number_cell

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = [
    "rule_judged",
    "SCORING",
    "ItemScore",
    "M3ExamScores",
    "aggregate_scores",
    "cluster_of",
    "headline",
    "is_partial",
    "item_correct",
    "items_from_log",
    "items_from_predictions",
    "judge_gap_note",
    "judged_count",
    "overall_score",
    "score_items",
    "score_outputs",
    "score_predictions",
    "score_text",
    "scores_from_log",
    "scoring_rules",
    "summary_rows",
]


class ItemScore(AnswerScores):
    """One item's lexical scores (``AnswerScores``) under its id and type, with the LLM
    judge's score where a judge applies and ran (``None`` otherwise)."""

    id: str
    question_type: str
    llm_judge: float | None = None


# M3Exam's numbers are on the 0-1 scale with four decimals, as the paper's tables print them
# (``m3kit eval``, ``m3kit score``, ``m3kit report`` alike).
SCALE_DIGITS = 4


def _gold(question: Question) -> str:
    return str(question.metadata.get("label") or question.answer)


def score_items(
    questions: Iterable[Question],
    predictions: Mapping[str, str],
    judge_scores: Mapping[str, float] | None = None,
    *,
    fj_rule: FjRule = "exact",
) -> list[ItemScore]:
    """Score each question; ``judge_scores`` by question id fills ``llm_judge`` where a judge
    applies; ``fj_rule`` is how fj predictions are read. A question without a prediction is
    counted wrong, as M3Eval's and Video-MME-v2's are: scored as the empty answer (EM, F1 and
    BLEU-1 0; its judge score 0 once a judge is in play, ``missing_judged``)."""
    judge_scores = judge_scores or {}
    out: list[ItemScore] = []
    for q in questions:
        answers = [q.answer, *q.alternatives]
        s = score_text_answer(predictions.get(q.id, ""), answers, _gold(q), q.question_type,
                              fj_rule)
        judge = judge_scores.get(q.id) if s.judged else None
        out.append(ItemScore(id=q.id, question_type=q.question_type or "unknown",
                             llm_judge=judge, **s.model_dump()))  # fmt: skip
    return out


def missing_judged(items: Sequence[ItemScore], missing: Collection[str]) -> list[ItemScore]:
    """``items`` with a judge score of 0 for each judged item of ``missing`` (no prediction:
    wrong, and no judge is asked about it) once any item has a judge score."""
    if not missing or not any(i.llm_judge is not None for i in items):
        return list(items)
    return [i.model_copy(update={"llm_judge": 0.0})
            if i.id in missing and i.judged and i.llm_judge is None else i for i in items]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def overall_score(em: float, f1: float, bleu1: float, llm_judge: float) -> float:
    """``0.5 * LLM-J + (EM + F1 + BLEU-1) / 6`` (paper Eq. 10)."""
    return 0.5 * llm_judge + (em + f1 + bleu1) / 6


def _type_order(types: Iterable[str]) -> list[str]:
    rank: dict[str, int] = {t: i for i, t in enumerate(QUESTION_TYPES)}
    return sorted(set(types), key=lambda t: (rank.get(t, len(rank)), t))


# the two records a rule-judged score is set on: a scored item, and an item read from a log
ScoredT = TypeVar("ScoredT", ItemScore, M3ExamItem)


def rule_judged(items: Sequence[ScoredT], force: bool = False) -> list[ScoredT]:
    """Abstention items (LoCoMo category 5) take their rule score as judge score once a judge
    is in play (``force``, or any item has a judge score): the released rule is the verdict
    there, and no judge is asked."""
    if not force and not any(i.llm_judge is not None for i in items):
        return list(items)
    return [
        i.model_copy(update={"llm_judge": i.em})
        if i.kind == "abstention" and i.llm_judge is None
        else i
        for i in items
    ]


def _judge_entry(soft: Sequence[ItemScore], in_play: bool) -> dict[str, Any]:
    """LLM-J of a row over ``soft``, the items it averages. Nothing while no judge is in play
    (no item of the table has a judge score); their mean as ``llm_judge`` when every one of
    them has a judge score; otherwise (a *partial* judge) ``llm_judge`` is ``None`` and the
    mean over the judged items is ``llm_judge_partial``, with ``judge_count`` of
    ``judgeable_count``: a mean over a subset the table does not name is never LLM-J."""
    if not in_play:
        return {}
    judged = [i.llm_judge for i in soft if i.llm_judge is not None]
    if len(judged) == len(soft):
        return {"llm_judge": _mean(judged)}
    return {"llm_judge": None, "llm_judge_partial": _mean(judged), "judge_count": len(judged),
            "judgeable_count": len(soft)}


def aggregate_scores(items: Sequence[ItemScore]) -> dict[str, Any]:
    """The per-type table and the TOTAL from item scores.

    Per type: ``count`` and ``em`` always; ``f1``/``bleu1``/``llm_judge`` for types whose
    items carry them (not fm, not fj). TOTAL: EM over all items; F1/BLEU-1/LLM-J over the
    non-fm, non-fj items; ``overall`` when all four exist. Abstention items (LoCoMo category
    5) count their rule score as LLM-J when any item has a judge score.

    LLM-J of a type (and of the TOTAL) is its items' mean only when every one of them has a
    judge score. When some item of the table has one and others lack it (a partial judge),
    the row's ``llm_judge`` and the TOTAL's ``overall`` are ``None``; ``llm_judge_partial``
    (the judged items' mean), ``judge_count`` and ``judgeable_count`` say what there is
    (``_judge_entry``), and the TOTAL's ``overall_missing`` says why Overall is missing.
    """
    items = rule_judged(items)
    in_play = any(i.llm_judge is not None for i in items)
    by_type: dict[str, list[ItemScore]] = defaultdict(list)
    for item in items:
        by_type[item.question_type].append(item)
    per_type: dict[str, dict[str, Any]] = {}
    for qtype in _type_order(by_type):
        group = by_type[qtype]
        row: dict[str, Any] = {"count": len(group), "em": _mean([i.em for i in group])}
        soft = [i for i in group if i.in_total]
        if soft:
            row["f1"] = _mean([i.f1 for i in soft if i.f1 is not None])
            row["bleu1"] = _mean([i.bleu1 for i in soft if i.bleu1 is not None])
            row.update(_judge_entry(soft, in_play))
        per_type[qtype] = row

    soft = [i for i in items if i.in_total]
    total: dict[str, Any] = {
        "count": len(items),
        "em": _mean([i.em for i in items]),
        "f1": _mean([i.f1 for i in soft if i.f1 is not None]),
        "bleu1": _mean([i.bleu1 for i in soft if i.bleu1 is not None]),
        "llm_judge": None,
        **_judge_entry(soft, in_play),
    }
    if not in_play and soft:
        total["judge_count"] = 0  # no judge: none of the TOTAL's items judged (as always)
    parts = (total["em"], total["f1"], total["bleu1"], total["llm_judge"])
    total["overall"] = overall_score(*parts) if all(p is not None for p in parts) else None
    if is_partial(total):
        total["overall_missing"] = (f"LLM-J partial: {total['judge_count']} of "
                                    f"{total['judgeable_count']} items judged")
    return {"per_type": per_type, "total": total}


def is_partial(row: Mapping[str, Any]) -> bool:
    """Whether a row's LLM-J is partial: some of its items have a judge score, not all."""
    return "judgeable_count" in row


def judge_gap_note(total: Mapping[str, Any], remedy: str) -> str | None:
    """The warning for a partial judge (``None`` when LLM-J is whole or absent): how many
    items lack a judge score, what is not shown for it, and ``remedy``, how to score them."""
    if not is_partial(total):
        return None
    missing = total["judgeable_count"] - total["judge_count"]
    return (f"LLM-J partial: {missing} of {total['judgeable_count']} items LLM-J applies to "
            f"have no judge score, so LLM-J is shown as judged counts and Overall is not "
            f"computed; {remedy}")


def judged_count(row: Mapping[str, Any]) -> str | None:
    """What a row's LLM-J cell shows for a partial judge, ``k of n judged`` (``None`` when
    LLM-J is whole or absent: the cell shows its value)."""
    if not is_partial(row):
        return None
    return f"{row['judge_count']} of {row['judgeable_count']} judged"


class M3ExamScores(PredictionsCard):
    """M3Exam's score card: per question type and TOTAL (``count``, ``em``, ``f1``, ``bleu1``,
    ``llm_judge``, ``overall`` and the judge's counts, on the 0-1 scale); for external
    predictions also the fj rule, ``n_missing`` (questions without a prediction, counted wrong
    in every number), the judge's failures and what was skipped (``PredictionsCard``).
    ``model_dump()`` is the JSON ``m3kit score m3exam --json`` prints."""

    model_config = ConfigDict(frozen=True)
    optional_keys = ("fj_rule", "n_missing", "judge_failures")

    per_type: dict[str, dict[str, Any]]
    total: dict[str, Any]
    fj_rule: str | None = None
    n_missing: int | None = None
    judge_failures: list[str] | None = None


def score_outputs(
    data: M3ExamData,
    predictions: Sequence[PredictionRecord] | Mapping[str, str],
    *,
    judge_model: str | Model | None = None,
    judge_model_args: Mapping[str, Any] | None = None,
    cache: bool = True,
    fj_rule: FjRule = "exact",
    progress: Callable[[int, int], None] | None = None,
) -> M3ExamScores:
    """Score predictions for ``data``'s questions (``progress(done, total)`` as the judge's
    verdicts come in).

    fj items are scored by ``fj_rule`` (``"exact"``, the paper's: the whole prediction;
    ``"letter"``: the letter it states), recorded as the card's ``fj_rule``.

    A prediction's given ``judge`` value is used as is; a missing one is computed with
    ``judge_model`` (any inspect model name or ``Model``) when given, for the items a judge
    applies to, after ``m3kit.harness.preflight.check_model`` has checked the judge (a
    ``PreflightError`` when it cannot be used). ``skipped`` lists what loading ``data``
    skipped (``data.skipped``, each naming file, record and field), then repeated predictions
    (the first is kept); predictions for unknown ids are counted (``n_unmatched_predictions``);
    questions without a prediction are counted wrong (``score_items``) and in ``n_missing``.
    """
    judged = _judged_items(data, predictions, judge_model=judge_model,
                           judge_model_args=judge_model_args, cache=cache, fj_rule=fj_rule,
                           progress=progress)
    card = M3ExamScores.model_validate({
        **aggregate_scores(judged.items), "fj_rule": fj_rule, "n_missing": judged.missing,
        "judge_failures": judged.judge_failures or None,
    })
    return card.with_skips([*data.skipped, *judged.repeated], judged.unmatched)


@dataclass(frozen=True)
class _JudgedItems:
    """What ``score_outputs`` scores: the item scores (judged where a judge ran), and what it
    reports beside them."""

    items: list[ItemScore]
    judge_failures: list[str]
    missing: int
    repeated: list[SkippedRecord]
    unmatched: list[str]


def _judged_items(
    data: M3ExamData,
    predictions: Sequence[PredictionRecord] | Mapping[str, str],
    *,
    judge_model: str | Model | None,
    judge_model_args: Mapping[str, Any] | None,
    cache: bool,
    fj_rule: FjRule,
    progress: Callable[[int, int], None] | None = None,
) -> _JudgedItems:
    if fj_rule not in FJ_RULES:
        raise M3kitError(f"fj rule {fj_rule!r} is not one of {', '.join(FJ_RULES)}",
                         field="fj_rule")
    records = (
        [PredictionRecord(id=k, prediction=v) for k, v in predictions.items()]
        if isinstance(predictions, Mapping)
        else list(predictions)
    )
    by_id = {q.id: q for q in data.questions}
    repeated: list[SkippedRecord] = []
    unmatched: list[str] = []
    texts: dict[str, str] = {}
    given: dict[str, float] = {}
    for rec in records:
        if rec.id not in by_id:
            unmatched.append(rec.id)
            continue
        if rec.id in texts:
            repeated.append(SkippedRecord.at("predictions", rec.id, "duplicate prediction "
                                             "(the first is kept)", field="id"))
            continue
        texts[rec.id] = rec.prediction
        if rec.judge is not None:
            given[rec.id] = rec.judge

    items = score_items(data.questions, texts, given, fj_rule=fj_rule)
    judge_failures: list[str] = []
    if judge_model is not None:
        from m3kit.benchmarks.m3exam.judge import JudgeRequest, judge_answers

        todo = [i for i in items if i.judged and i.llm_judge is None and i.id in texts]
        if todo:
            from m3kit.harness.preflight import check_model

            # An unreachable or misconfigured judge fails here, in one line, before any call
            # (inspect would otherwise retry each item for minutes).
            judge_model = check_model(judge_model, judge_model_args)
        requests = [
            JudgeRequest(
                id=i.id, question=by_id[i.id].text, gold=_gold(by_id[i.id]), prediction=texts[i.id]
            )
            for i in todo
        ]
        verdicts = judge_answers(requests, judge_model, model_args=judge_model_args, cache=cache,
                                 progress=progress)
        computed = {v.id: v.score for v in verdicts}
        judge_failures = [f"{v.id}: {v.failure()}" for v in verdicts if not v.parsed]
        items = [
            i.model_copy(update={"llm_judge": computed[i.id]}) if i.id in computed else i
            for i in items
        ]
        items = rule_judged(items, force=True)
    items = missing_judged(items, set(by_id) - set(texts))
    return _JudgedItems(items=items, judge_failures=judge_failures,
                        missing=len(by_id) - len(texts), repeated=repeated,
                        unmatched=sorted(set(unmatched)))


def _matched_predictions(
    data: Path, predictions: Path,
) -> tuple[M3ExamData, list[PredictionRecord], list[SkippedRecord]]:
    """``data`` loaded, ``predictions`` read (its bad lines as skips) and checked to match
    some question (``NothingToScoreError`` otherwise), before any judge is asked."""
    dataset = load_data(data)
    records, bad = read_predictions(predictions)
    match_predictions({q.id for q in dataset.questions}, [r.id for r in records], data=data,
                      predictions=predictions, skipped=[*dataset.skipped, *bad])
    return dataset, records, bad


def score_predictions(
    data: Path,
    predictions: Path,
    *,
    judge_model: str | Model | None = None,
    judge_model_args: Mapping[str, Any] | None = None,
    cache: bool = True,
    fj_rule: FjRule = "exact",
    progress: Callable[[int, int], None] | None = None,
) -> M3ExamScores:
    """Score a predictions file (JSONL of ``{"id", "prediction", "judge"?}``) against ``data``
    (a persona folder, a folder of them, or LoCoMo's ``locomo10.json``), as ``score_outputs``
    does. The card's ``skipped`` lists the data's skips, then the predictions file's (a line
    that is not UTF-8 or JSON, a bad record, a repeated id). Raises ``NothingToScoreError``
    when no question loads or no prediction matches one, before any judge is asked."""
    dataset, records, bad = _matched_predictions(data, predictions)
    card = score_outputs(dataset, records, judge_model=judge_model,
                         judge_model_args=judge_model_args, cache=cache, fj_rule=fj_rule,
                         progress=progress)
    notes = ([f"{card.n_missing} questions have no prediction: counted wrong"]
             if card.n_missing else [])
    gap = judge_gap_note(card.total, "give --judge-model MODEL to score them (the given "
                                     "scores are kept)")
    notes += [gap] if gap else []
    return card.with_skips([*(card.skipped or ()), *bad], card.unmatched_ids, notes)


def _cell(value: float | None) -> str:
    return number_cell(value, SCALE_DIGITS, PLAIN_NA)


SHOW_JUDGE_FAILURES = 3  # unparsed judge verdicts named under the table; --json has them all


def score_text(card: M3ExamScores, predictions: Path) -> list[Table | str]:
    """The per-type table and the TOTAL row of ``card``, rounded to 4 decimals for display;
    the judge's unusable verdicts (scored 0) counted in the title and the first ones named
    under the table."""
    failures = card.judge_failures or []
    judge_note = f"; judge: {len(failures)} unusable replies scored 0" if failures else ""
    table = Table(title=f"M3Exam scores: {predictions.name} (fj EM: {card.fj_rule}"
                        f"{judge_note})",
                  columns=["type", "count", "EM", "F1", "BLEU-1", "LLM-J", "Overall"], rows=[])
    for qtype, row in card.per_type.items():
        table.rows.append([qtype, str(row["count"]), _cell(row["em"]), _cell(row.get("f1")),
                           _cell(row.get("bleu1")),
                           judged_count(row) or _cell(row.get("llm_judge")), ""])
    total = card.total
    table.rows.append(["TOTAL", str(total["count"]), _cell(total["em"]), _cell(total["f1"]),
                       _cell(total["bleu1"]), judged_count(total) or _cell(total["llm_judge"]),
                       _cell(total["overall"])])
    blocks: list[Table | str] = [table]
    if total.get("overall_missing"):
        # stdout may go to a file: the reason travels with the table (the warning is on stderr)
        blocks.append(f"Overall: not computed, {total['overall_missing']} (the judged items' "
                      "mean is llm_judge_partial in --json; --judge-model scores the rest).")
    if not failures:
        return blocks
    lines = [f"LLM-J: {len(failures)} judged item(s) got no usable verdict and count 0:"]
    lines += [f"  {failure}" for failure in failures[:SHOW_JUDGE_FAILURES]]
    if len(failures) > SHOW_JUDGE_FAILURES:
        lines.append(f"  ... and {len(failures) - SHOW_JUDGE_FAILURES} more (--json: "
                     "judge_failures)")
    return [*blocks, "\n".join(lines)]


def _log_items(samples: Sequence[LoggedSample]) -> tuple[list[M3ExamItem], int]:
    """The records of a run's samples as its numbers count them (ids set; the session from the
    question where the record predates the field), and how many samples got no answer: those
    the declared ``FailurePolicy`` leaves out (inspect's own error, no score:
    ``m3kit.benchmarks.logged``) and the records that failed (scored 0)."""
    items: list[M3ExamItem] = []
    left_out = 0
    for logged in logged_items(samples, M3ExamItem, BENCHMARK.failures):
        item, question = logged.item, logged.sample.question
        if item is None or not logged.counted:
            left_out += 1
            continue
        session = item.session or (evidence_session(question) if question is not None
                                   else None)
        items.append(item.model_copy(update={"session": session}))
    return items, left_out + sum(i.status == "failed" for i in items)


def _item_scores(items: Sequence[M3ExamItem]) -> list[ItemScore]:
    """The records as ``aggregate_scores`` takes them."""
    return [ItemScore(id=item.id or "", question_type=str(item.question_type or "?"),
                      llm_judge=item.llm_judge,
                      **{name: getattr(item, name) for name in AnswerScores.model_fields})
            for item in items]


def scores_from_log(samples: Sequence[LoggedSample]) -> M3ExamScores:
    """The card of an eval run's samples (``m3kit.report.logs.read_samples``): the same
    aggregation as ``score_predictions``; samples inspect recorded as errored are left out
    (``summary_rows`` counts them as failed)."""
    items, _ = _log_items(samples)
    return M3ExamScores.model_validate(aggregate_scores(_item_scores(items)))


def summary_rows(samples: Sequence[LoggedSample]) -> tuple[list[str], list[list[str]]]:
    """What ``m3kit eval`` prints: EM / F1 / BLEU-1 (and LLM-J when judged) per question type
    and for all items, on the paper's 0-1 scale (four decimals, as its tables and ``m3kit
    score`` print them), with the failed count and the mean cost of answered samples."""
    items, failed = _log_items(samples)
    table = aggregate_scores(_item_scores(items))
    judged = table["total"].get("llm_judge") is not None or is_partial(table["total"])
    columns = ["type", "n", "EM", "F1", "BLEU-1", *(["LLM-J"] if judged else []), "failed",
               "tok in", "images"]
    tokens, images = mean_cost(samples)

    def line(name: str, row: dict[str, Any], fails: str) -> list[str]:
        cells = [name, str(row["count"]), *(number_cell(row.get(key), SCALE_DIGITS)
                                            for key in ("em", "f1", "bleu1"))]
        if judged:
            cells.append(judged_count(row) or number_cell(row.get("llm_judge"), SCALE_DIGITS))
        return [*cells, fails]

    rows = [[*line("all", table["total"], str(failed)), cost_cell(tokens), cost_cell(images)]]
    rows += [[*line(qtype, row, ""), "", ""] for qtype, row in table["per_type"].items()]
    return columns, rows


def scoring_rules(fj_rule: FjRule = "exact") -> dict[str, str]:
    """The scoring rules in force, for the reproducibility card: how fj items are scored
    (``exact``: the paper's rule, ``letter``: m3kit's) and the Overall Score's formula."""
    return {
        "fj": fj_rule,
        "overall": "0.5*LLM-J + (EM + F1 + BLEU-1)/6",
    }


# -- per-item records and the headline numbers (confidence intervals, paired comparisons) ---


def _status(em: float) -> ScoreStatus:
    return "correct" if em >= 1.0 else "incorrect"


def items_from_predictions(
    data: Path,
    predictions: Path,
    *,
    judge_model: str | Model | None = None,
    judge_model_args: Mapping[str, Any] | None = None,
    cache: bool = True,
    fj_rule: FjRule = "exact",
) -> list[M3ExamItem]:
    """The per-item records of a predictions file, as ``score_predictions`` scores it (the same
    options; questions without a prediction counted wrong; the judge asked where given)."""
    dataset, records, _ = _matched_predictions(data, predictions)
    judged = _judged_items(dataset, records, judge_model=judge_model,
                           judge_model_args=judge_model_args, cache=cache, fj_rule=fj_rule)
    by_id = {q.id: q for q in dataset.questions}
    return [
        M3ExamItem(id=i.id, status=_status(i.em), question_type=i.question_type,
                   llm_judge=i.llm_judge, session=evidence_session(by_id[i.id]),
                   **{name: getattr(i, name) for name in AnswerScores.model_fields})
        for i in judged.items
    ]


def items_from_log(samples: Sequence[LoggedSample]) -> list[M3ExamItem]:
    """The per-item records of a run, as ``scores_from_log`` counts them (samples inspect
    recorded as errored left out), with their ids and sessions (from the question where the
    record predates the field)."""
    return _log_items(samples)[0]


def cluster_of(item: M3ExamItem) -> str:
    """The unit M3Exam's intervals resample: the session holding the question's evidence
    (persona and session), the question itself where it names no round."""
    return item.session or item.id or ""


def item_correct(item: M3ExamItem) -> bool:
    """Full EM credit (EM is graded: 1/2**k for the k-th listed answer; only EM 1 is
    correct)."""
    return item.em == 1.0


def headline(items: Sequence[M3ExamItem]) -> dict[str, float | None]:
    """The TOTAL row of per-item records on the 0-1 scale, equal to the score card's
    (``aggregate_scores``): ``em``, ``f1``, ``bleu1``, ``llm_judge`` and ``overall``, the last
    two ``None`` for a partial judge. One pass over the items: the bootstrap calls it for every
    resample."""
    any_judge = any(i.llm_judge is not None for i in items)
    ems: list[float] = []
    f1s: list[float] = []
    bleus: list[float] = []
    judged: list[float] = []
    n_soft = 0
    for item in items:
        ems.append(item.em)
        if not item.in_total:
            continue
        n_soft += 1
        if item.f1 is not None:
            f1s.append(item.f1)
        if item.bleu1 is not None:
            bleus.append(item.bleu1)
        judge = item.llm_judge
        if judge is None and any_judge and item.kind == "abstention":
            judge = item.em  # as ``rule_judged``: the released rule is the verdict there
        if judge is not None:
            judged.append(judge)
    # as ``aggregate_scores``: LLM-J only when every item it averages has a judge score
    whole = len(judged) == n_soft
    em, f1, bleu1 = _mean(ems), _mean(f1s), _mean(bleus)
    llm_judge = _mean(judged) if whole else None
    overall = (overall_score(em, f1, bleu1, llm_judge)
               if em is not None and f1 is not None and bleu1 is not None
               and llm_judge is not None else None)
    return {"em": em, "f1": f1, "bleu1": bleu1, "llm_judge": llm_judge, "overall": overall}


SCORING = BenchmarkScoring(
    item=M3ExamItem,
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
