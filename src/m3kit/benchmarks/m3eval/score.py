"""M3Eval's numbers from scored answers: the paper's Tables 1–3, the N-Back breakdown and fits.

``score_predictions`` scores a predictions file of any harness (JSON Lines of ``{"id",
"prediction"}``) against the released folder, ``score_outputs`` the same raw outputs already in
memory (``{id: text}``), with m3kit's strict parsing; ``scores_from_log`` reads the same numbers
from the samples of an m3kit eval log; ``score_text`` is the table ``m3kit score m3eval``
prints. Both return one ``M3EvalScores`` card (``model_dump()``: the JSON below), values in
percent at full float precision (the authors' aggregation script prints them rounded to 4
decimals; a table may round for display, the numbers do not), a cell with no question being
``None``::

    divided_attention:  no_swap / swap: {source_identification, order_understanding,
                                         content_retention}
                        delta: swap − no_swap per column          (extra)
                        spatial_source_grounding
    memory_interference: proactive / retroactive: {accuracy, intrusion_rate}
                        delta: proactive − retroactive
                        repeat_target / repeat_interferer: {accuracy, intrusion_rate}  (extra:
                        the repetition probes [V1, V1, V2] and [V1, V2, V2], Fig. 8)
    interleaved:        source_identification, order_understanding, content_retention,
                        false_memory_discrimination, temporal_source_grounding
    nback:              accuracy, by_attribute, by_n, by_k,
                        by_k_n: {"K=k,N=n": acc}                  (extra: Fig. 11's points)
                        fit_n / fit_k: {slope, intercept, residual_std, points}
    n_invalid, n_excluded, n_failed (model errors), n_missing (no prediction), n_scored

Rules (the authors' ``m3eval_utils.py`` unless noted): every scored question counts in its
accuracy, invalid answers as wrong; a sample whose video could not be read is *excluded* from
every denominator and counted in ``n_excluded``. Intrusion rate = share of scored answers whose
letter has the role ``intrusion`` (the loader folds ``intrusion_option_letter`` into the roles),
over the questions that have role annotations; none when no question has them. A question with
no prediction counts as wrong (``n_missing``). The fits are least-squares lines of the per-(K, N)
cell accuracies against N and against K, one point per cell (Fig. 11).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.logged import LoggedItem, Outcome, logged_items
from m3kit.benchmarks.m3eval import BENCHMARK
from m3kit.benchmarks.m3eval.item import (
    M3EvalItem,
    group_labels,
    is_excluded,
    sample_offers_intrusion,
)
from m3kit.benchmarks.m3eval.load import (
    data_files,
    data_media,
    load_m3eval,
    measure_of,
    memory_key,
    source_unit,
)
from m3kit.benchmarks.m3eval.predictions import read_predictions
from m3kit.benchmarks.protocol import BenchmarkScoring
from m3kit.metrics import ScoredAnswer, offers_intrusion, score_response, summarize
from m3kit.metrics import intrusion_rate as intrusion_rate_of
from m3kit.metrics.fits import least_squares_line
from m3kit.schema import (
    ChoiceRole,
    LoggedSample,
    PredictionsCard,
    Question,
    Usage,
    match_predictions,
)
from m3kit.schema.evallog import mean_cost
from m3kit.schema.report import PLAIN_NA, cost_cell, number_cell, percent_cell

__all__ = [
    "RANDOM_ACCURACY",
    "RANDOM_BINARY_ACCURACY",
    "RANDOM_INTRUSION_RATE",
    "SCORING",
    "STORYLINE",
    "VIDEO_READ_FAILURE",
    "M3EvalScores",
    "ResultRow",
    "SampleResult",
    "aggregate",
    "cluster_of",
    "excluded_cell",
    "excluded_lines",
    "headline",
    "item_correct",
    "items_from_log",
    "items_from_predictions",
    "m3eval_intrusion_rate",
    "result_rows",
    "sample_results",
    "score_outputs",
    "score_predictions",
    "score_text",
    "scores_from_log",
    "scoring_rules",
    "summary_rows",
]

# Chance levels (percent), as the paper prints them: 25 % accuracy for the four-option questions
# and 50 % intrusion rate (Tables 1-3); source memory (Video 1 / Video 2) and N-back (Yes / No)
# are two-way choices, 50 %.
RANDOM_ACCURACY = 25.0
RANDOM_INTRUSION_RATE = 50.0
RANDOM_BINARY_ACCURACY = 50.0
# What the authors' harness writes in place of an output when a video cannot be read; such a
# prediction is excluded, as there.
VIDEO_READ_FAILURE = "__VIDEO_INPUT_SKIPPED__"

# The storyline-reconstruction measures: the columns of Tables 1 and 3.
STORYLINE = ("source_identification", "order_understanding", "content_retention")
_DIRECTIONS = ("proactive", "retroactive", "repeat_target", "repeat_interferer")

Scored = tuple[Question, ScoredAnswer]


def _pct(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else value * 100.0


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _no_negative_zero(value: Any) -> Any:
    if isinstance(value, float):
        return value + 0.0  # -0.0 + 0.0 is 0.0; every other float is unchanged
    if isinstance(value, dict):
        return {k: _no_negative_zero(v) for k, v in value.items()}
    return value


def _mean(values: Sequence[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _accuracy(items: Iterable[Scored]) -> float | None:
    return _pct(_mean([a.correct for _, a in items]))


def _intrusion_rate(items: Iterable[Scored]) -> float | None:
    # Denominator: scored answers to questions that offer an intrusion option (the one
    # definition, `m3kit.metrics.offers_intrusion`); invalid and failed answers chose no option,
    # so they are not intrusions (see docs/metrics.md for the one case where the authors' script
    # drops them instead).
    return _pct(_mean([a.role == ChoiceRole.INTRUSION.value
                       for q, a in items if offers_intrusion(q)]))


def _meta(question: Question, key: str) -> Any:
    return question.metadata.get(key)


def _measure(question: Question) -> str | None:
    return measure_of(question.metadata, question.question_type)


def _dimension_ok(question: Question, expected: str) -> bool:
    # The released records name the dimension; the synthetic suite leaves it implied.
    dimension = _meta(question, "source_dimension")
    return dimension in (None, expected)


def _swap_column(condition: Any) -> str | None:
    """``no_swap`` for ``swap0``, ``swap`` for any other swap count (the release has only 10;
    the synthetic suite may choose others)."""
    match = re.fullmatch(r"swap(\d+)", str(condition or ""))
    if match is None:
        return None
    return "no_swap" if int(match.group(1)) == 0 else "swap"


def _divided(items: list[Scored]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("no_swap", "swap"):
        cell = [(q, a) for q, a in items if _swap_column(_meta(q, "condition")) == key]
        out[key] = {m: _accuracy(x for x in cell if _measure(x[0]) == m) for m in STORYLINE}
    out["delta"] = {m: _delta(out["swap"][m], out["no_swap"][m]) for m in STORYLINE}
    out["spatial_source_grounding"] = _accuracy(
        (q, a) for q, a in items
        if _measure(q) == "source_memory" and _dimension_ok(q, "spatial")
    )
    return out


def _interference(items: list[Scored]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for direction in _DIRECTIONS:
        cell = [(q, a) for q, a in items if _meta(q, "condition") == direction]
        if direction.startswith("repeat") and not cell:
            continue  # extra keys only when the repetition probes were run
        out[direction] = {"accuracy": _accuracy(cell), "intrusion_rate": _intrusion_rate(cell)}
    out["delta"] = {
        k: _delta(out["proactive"][k], out["retroactive"][k])
        for k in ("accuracy", "intrusion_rate")
    }
    return out


def _interleaved(items: list[Scored]) -> dict[str, Any]:
    out: dict[str, Any] = {
        m: _accuracy(x for x in items if _measure(x[0]) == m)
        for m in (*STORYLINE, "false_memory_discrimination")
    }
    out["temporal_source_grounding"] = _accuracy(
        (q, a) for q, a in items
        if _measure(q) == "source_memory" and _dimension_ok(q, "narrative")
    )
    return out


def _by(items: list[Scored], key: str) -> dict[str, float | None]:
    groups: dict[Any, list[Scored]] = {}
    for q, a in items:
        value = _meta(q, key)
        if value is not None:
            groups.setdefault(value, []).append((q, a))
    ordered = sorted(groups, key=lambda v: (not isinstance(v, int), v if isinstance(v, int)
                                            else str(v)))
    return {str(v): _accuracy(groups[v]) for v in ordered}


def _fit(points: list[tuple[int, float]]) -> dict[str, Any] | None:
    fit = least_squares_line([x for x, _ in points], [y for _, y in points])
    if fit is None:
        return None
    return {
        "slope": fit.slope,
        "intercept": fit.intercept,
        "residual_std": None if math.isnan(fit.residual_std) else fit.residual_std,
        "points": fit.n,
    }


def _nback(items: list[Scored]) -> dict[str, Any]:
    cells: dict[tuple[int, int], list[Scored]] = {}
    for q, a in items:
        n, k = _meta(q, "n"), _meta(q, "k")
        if n is not None and k is not None:
            cells.setdefault((int(k), int(n)), []).append((q, a))
    by_k_n = {f"K={k},N={n}": _accuracy(cells[(k, n)]) for k, n in sorted(cells)}
    points = [(k, n, _accuracy(cells[(k, n)])) for k, n in sorted(cells)]
    return {
        "accuracy": _accuracy(items),
        "by_attribute": _by(items, "attribute"),
        "by_n": _by(items, "n"),
        "by_k": _by(items, "k"),
        "by_k_n": by_k_n,
        "fit_n": _fit([(n, acc) for _, n, acc in points if acc is not None]),
        "fit_k": _fit([(k, acc) for k, _, acc in points if acc is not None]),
    }


def excluded_cell(labels: Mapping[str, Any]) -> str:
    """Where in the card an excluded question would have counted, from its group labels
    (``scorer.group_labels``), as the card's keys joined by `` · ``
    (``divided_attention · no_swap · order_understanding``,
    ``divided_attention · spatial_source_grounding``, ``memory_interference · proactive``,
    ``interleaved · content_retention``, ``nback``); its labels where they name no cell."""
    paradigm = labels.get("paradigm")
    condition = labels.get("condition")
    measure = measure_of(dict(labels), labels.get("question_type"))
    dimension = labels.get("source_dimension")
    if paradigm == "divided_attention":
        if measure == "source_memory" and dimension in (None, "spatial"):
            return "divided_attention · spatial_source_grounding"
        column = _swap_column(condition)
        if column is not None and measure in STORYLINE:
            return f"divided_attention · {column} · {measure}"
    elif paradigm == "interference" and condition in _DIRECTIONS:
        return f"memory_interference · {condition}"
    elif paradigm == "interleaved":
        if measure == "source_memory" and dimension in (None, "narrative"):
            return "interleaved · temporal_source_grounding"
        if measure in _INTERLEAVED_MEASURES:
            return f"interleaved · {measure}"
    elif paradigm == "nback":
        return "nback"
    parts = [str(p) for p in (paradigm, condition, measure) if p]
    return " · ".join(dict.fromkeys(parts)) or "?"


def _by_cell(excluded: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Excluded question ids by the cell they would have counted in (``excluded_cell``)."""
    cells: dict[str, list[str]] = {}
    for qid, labels in excluded:
        cells.setdefault(excluded_cell(labels), []).append(qid)
    return {cell: sorted(ids) for cell, ids in sorted(cells.items())}


def aggregate(scored: Sequence[Scored], *, n_excluded: int = 0,
              excluded_by_cell: Mapping[str, list[str]] | None = None) -> dict[str, Any]:
    """The M3Eval result dict from ``(question, scored answer)`` pairs (excluded samples are
    not among them; ``n_excluded`` says how many there were, ``excluded_by_cell`` which, by
    the table cell each would have counted in: those cells are means over the rest)."""
    by_paradigm: dict[str, list[Scored]] = {}
    for q, a in scored:
        by_paradigm.setdefault(str(_meta(q, "paradigm")), []).append((q, a))
    return _no_negative_zero({
        "divided_attention": _divided(by_paradigm.get("divided_attention", [])),
        "memory_interference": _interference(by_paradigm.get("interference", [])),
        "interleaved": _interleaved(by_paradigm.get("interleaved", [])),
        "nback": _nback(by_paradigm.get("nback", [])),
        "n_invalid": sum(a.status == "invalid" for _, a in scored),
        "n_excluded": n_excluded,
        "n_failed": sum(a.status == "failed" and a.reason != _MISSING for _, a in scored),
        "n_missing": sum(a.status == "failed" and a.reason == _MISSING for _, a in scored),
        "n_scored": len(scored),
        "excluded_by_cell": dict(excluded_by_cell or {}),
    })


_MISSING = "no prediction for this question"


class M3EvalScores(PredictionsCard):
    """M3Eval's score card: the paper's Tables 1-3 and the N-Back breakdown (values in
    percent; the layout of each part is the module docstring's), and the counts; for a
    predictions file also what was skipped (``PredictionsCard``). ``model_dump()`` is the JSON
    ``m3kit score m3eval --json`` prints."""

    model_config = ConfigDict(frozen=True)

    divided_attention: dict[str, Any]
    memory_interference: dict[str, Any]
    interleaved: dict[str, Any]
    nback: dict[str, Any]
    n_invalid: int
    n_excluded: int
    n_failed: int
    n_missing: int
    n_scored: int
    # the excluded question ids by the cell they would have counted in (``excluded_cell``)
    excluded_by_cell: dict[str, list[str]] = Field(default_factory=dict)


def score_predictions(
    data: Path,
    predictions: Path,
    *,
    review: Path | None = None,
    excluded: Collection[str] | None = None,
) -> M3EvalScores:
    """Score a predictions file (JSON Lines of ``{"id", "prediction"}``; N-Back ids are the
    records' ``question_id``) against the released folder ``data``.

    ``review``: a review file, only its accepted questions are scored; ``excluded``: ids whose
    video could not be read. Records the loader or the predictions reader skipped are listed in
    the card, data first; predictions for unknown ids are counted. Raises
    ``NothingToScoreError`` when no question loads or no prediction matches one.
    """
    loaded = load_m3eval(data, review=review)
    outputs, bad = read_predictions(predictions)
    skipped = [*loaded.skipped, *bad]
    unmatched = match_predictions({q.id for q in loaded.questions}, outputs, data=data,
                                  predictions=predictions, skipped=skipped,
                                  hint="; N-Back ids are question_id")
    card = score_outputs(loaded.questions, outputs, excluded=excluded or ())
    return card.with_skips(skipped, unmatched)


def score_outputs(
    questions: Sequence[Question],
    predictions: Mapping[str, str],
    *,
    excluded: Collection[str] = (),
) -> M3EvalScores:
    """Score raw outputs (``{question id: model text}``; N-Back ids are ``question_id``).

    ``excluded``: ids whose video could not be read (left out and counted); a prediction that is
    the authors' video-failure sentinel is excluded too.
    """
    scored, left_out = _scored_outputs(questions, predictions, excluded)
    return M3EvalScores.model_validate(aggregate(
        scored, n_excluded=len(left_out),
        excluded_by_cell=_by_cell((q.id, group_labels(q)) for q in left_out)))


def _scored_outputs(questions: Sequence[Question], predictions: Mapping[str, str],
                    excluded: Collection[str]) -> tuple[list[Scored], list[Question]]:
    """The scored questions of raw outputs and the excluded ones (``score_outputs``)."""
    skip = set(excluded)
    scored: list[Scored] = []
    left_out: list[Question] = []
    for q in questions:
        text = predictions.get(q.id)
        if q.id in skip or (text is not None and text.startswith(VIDEO_READ_FAILURE)):
            left_out.append(q)
            continue
        if text is None:
            answer = ScoredAnswer(id=q.id, status="failed", reason=_MISSING)
        else:
            answer = score_response(q, text)
        scored.append((q, answer))
    return scored, left_out


def scores_from_log(samples: Sequence[LoggedSample]) -> M3EvalScores:
    """The same card from the samples of an m3kit eval log of any ``m3eval_*`` / ``synth_*``
    task (``m3kit.report.logs.read_samples``), read by the one loop
    (``m3kit.benchmarks.logged``, the declared ``FailurePolicy``): samples inspect recorded as
    errored are failed (wrong); samples whose media could not be read are excluded."""
    scored: list[Scored] = []
    left_out: list[tuple[str, Mapping[str, Any]]] = []
    for logged in _logged(samples):
        answer, question = _answer(logged), logged.sample.question
        if logged.outcome is Outcome.EXCLUDED:
            left_out.append((question.id if question is not None else answer.id,
                             answer.groups))
        elif logged.counted and question is not None:
            scored.append((question, answer))
    return M3EvalScores.model_validate(aggregate(
        scored, n_excluded=len(left_out), excluded_by_cell=_by_cell(left_out)))


# -- per-item records and the headline numbers (confidence intervals, paired comparisons) ---


def _item(question: Question | None, answer: ScoredAnswer, offered: bool,
          video: str | None, source: str | None) -> M3EvalItem:
    return M3EvalItem(
        id=answer.id, status=answer.status, letter=answer.answer, role=answer.role,
        groups=answer.groups or (group_labels(question) if question is not None else {}),
        offers_intrusion=offered, video=video, source=source,
    )


def items_from_predictions(data: Path, predictions: Path, *, review: Path | None = None,
                           excluded: Collection[str] | None = None) -> list[M3EvalItem]:
    """The per-item records of a predictions file, as ``score_predictions`` scores it (the same
    options; excluded questions left out, a question without a prediction failed)."""
    loaded = load_m3eval(data, review=review)
    outputs, bad = read_predictions(predictions)
    match_predictions({q.id for q in loaded.questions}, outputs, data=data,
                      predictions=predictions, skipped=[*loaded.skipped, *bad],
                      hint="; N-Back ids are question_id")
    scored, _ = _scored_outputs(loaded.questions, outputs, excluded or ())
    return [_item(q, a, offers_intrusion(q), memory_key(q), source_unit(q)) for q, a in scored]


def items_from_log(samples: Sequence[LoggedSample]) -> list[M3EvalItem]:
    """The per-item records of a run's samples, as ``scores_from_log`` and ``m3kit eval``'s
    table count them: excluded samples left out, errored ones failed; the probe video and its
    source videos from the record, else (a log scored before they were recorded) from the
    sample's memory key and question."""
    items = []
    for logged in _logged(samples):
        if not logged.counted:
            continue
        sample, record = logged.sample, logged.item
        video = (record.video if record is not None else None) or sample.memory_key
        if video is None and sample.question is not None:
            video = memory_key(sample.question)
        source = record.source if record is not None else None
        if source is None and sample.question is not None:
            source = source_unit(sample.question)
        items.append(_item(sample.question, _answer(logged),
                           sample_offers_intrusion(record, sample.question), video, source))
    return items


def cluster_of(item: M3EvalItem) -> str:
    """The unit M3Eval's intervals resample: the probe's source videos (``load.source_unit``:
    the probes of one source pair share them), else the probe video, else the question
    itself."""
    return item.source or item.video or item.id or ""


def item_correct(item: M3EvalItem) -> bool:
    """Whether the item was answered correctly (invalid and failed answers are wrong)."""
    return item.status == "correct"


_INTERLEAVED_MEASURES = (*STORYLINE, "false_memory_discrimination")


def headline(items: Sequence[M3EvalItem]) -> dict[str, float | None]:
    """The headline numbers of per-item records, in percent, each equal to the score card's
    (``aggregate``) or ``m3kit eval``'s overall row: ``accuracy`` and ``intrusion_rate`` over
    every item; divided attention ``no_swap_<measure>``, ``swap_<measure>``,
    ``delta_<measure>`` (swap - no swap) for the storyline measures and
    ``spatial_source_grounding``; memory interference ``<direction>_accuracy`` and
    ``<direction>_intrusion_rate`` (proactive, retroactive; the repetition probes only when
    run) and ``delta_accuracy``, ``delta_intrusion_rate`` (proactive - retroactive);
    interleaved ``interleaved_<measure>`` and ``temporal_source_grounding``;
    ``nback_accuracy``. One pass over the items: the bootstrap calls it for every resample."""
    cells: dict[str, list[bool]] = {}

    def add(name: str, value: bool) -> None:
        cells.setdefault(name, []).append(value)

    intrusion = ChoiceRole.INTRUSION.value
    for item in items:
        correct = item.status == "correct"
        intruded = bool(item.offers_intrusion) and item.role == intrusion
        add("accuracy", correct)
        if item.offers_intrusion:
            add("intrusion_rate", intruded)
        labels = item.groups
        paradigm = labels.get("paradigm")
        measure = measure_of(labels, labels.get("question_type"))
        dimension = labels.get("source_dimension")
        if paradigm == "divided_attention":
            column = _swap_column(labels.get("condition"))
            if column is not None and measure in STORYLINE:
                add(f"{column}_{measure}", correct)
            if measure == "source_memory" and dimension in (None, "spatial"):
                add("spatial_source_grounding", correct)
        elif paradigm == "interference":
            direction = labels.get("condition")
            if direction in _DIRECTIONS:
                add(f"{direction}_accuracy", correct)
                if item.offers_intrusion:
                    add(f"{direction}_intrusion_rate", intruded)
        elif paradigm == "interleaved":
            if measure in _INTERLEAVED_MEASURES:
                add(f"interleaved_{measure}", correct)
            if measure == "source_memory" and dimension in (None, "narrative"):
                add("temporal_source_grounding", correct)
        elif paradigm == "nback":
            add("nback_accuracy", correct)

    def pct(name: str) -> float | None:
        return _pct(_mean(cells.get(name, [])))

    out: dict[str, float | None] = {"accuracy": pct("accuracy"),
                                    "intrusion_rate": pct("intrusion_rate")}
    for column in ("no_swap", "swap"):
        out.update({f"{column}_{m}": pct(f"{column}_{m}") for m in STORYLINE})
    out.update({f"delta_{m}": _delta(out[f"swap_{m}"], out[f"no_swap_{m}"]) for m in STORYLINE})
    out["spatial_source_grounding"] = pct("spatial_source_grounding")
    for direction in _DIRECTIONS:
        if direction.startswith("repeat") and f"{direction}_accuracy" not in cells:
            continue  # as the card: the repetition probes only when they were run
        for rate in ("accuracy", "intrusion_rate"):
            out[f"{direction}_{rate}"] = pct(f"{direction}_{rate}")
    for rate in ("accuracy", "intrusion_rate"):
        out[f"delta_{rate}"] = _delta(out[f"proactive_{rate}"], out[f"retroactive_{rate}"])
    out.update({f"interleaved_{m}": pct(f"interleaved_{m}") for m in _INTERLEAVED_MEASURES})
    out["temporal_source_grounding"] = pct("temporal_source_grounding")
    out["nback_accuracy"] = pct("nback_accuracy")
    return _no_negative_zero(out)


# -- per-sample results and the table ``m3kit eval`` prints -----------------------------------


class SampleResult(BaseModel):
    """One sample of a log: its outcome, its cost and the harness's time on it."""

    model_config = ConfigDict(frozen=True)

    answer: ScoredAnswer
    question: Question | None = None
    usage: Usage
    seconds: dict[str, float]
    total_seconds: float | None
    # whether the question has an option with the ``intrusion`` role: M3Eval's intrusion rate
    # is defined over these answers only (ScoredAnswer carries only the chosen option's role)
    offers_intrusion: bool = False


class ResultRow(BaseModel):
    """One line of a results table."""

    model_config = ConfigDict(frozen=True)

    group: str
    n: int
    accuracy: float
    intrusion_rate: float
    invalid: int
    failed: int
    excluded: int = 0
    mean_prompt_tokens: float
    mean_images: float


def _logged(samples: Sequence[LoggedSample]) -> list[LoggedItem[M3EvalItem]]:
    """A run's samples as M3Eval's numbers take them (``m3kit.benchmarks.logged``, the
    declared ``FailurePolicy``)."""
    return logged_items(samples, M3EvalItem, BENCHMARK.failures)


def _answer(logged: LoggedItem[M3EvalItem]) -> ScoredAnswer:
    """The sample's outcome: its record's (the letter and its role, the group labels), failed
    without one (inspect's error, no score), excluded (failed, its ``media:`` reason) when its
    media could not be read."""
    sample, item = logged.sample, logged.item
    labels = group_labels(sample.question) if sample.question is not None else {}
    if logged.outcome is Outcome.EXCLUDED or item is None:
        return ScoredAnswer(id=sample.id, status="failed", reason=sample.reason,
                            groups=item.groups or labels if item is not None else labels)
    return ScoredAnswer(id=sample.id, status=item.status, reason=sample.explanation or "",
                        answer=item.letter, role=item.role, groups=item.groups or labels)


def _result(logged: LoggedItem[M3EvalItem]) -> SampleResult:
    sample = logged.sample
    return SampleResult(
        answer=_answer(logged), question=sample.question, usage=sample.usage,
        seconds=sample.seconds, total_seconds=sample.total_seconds,
        offers_intrusion=sample_offers_intrusion(logged.item, sample.question),
    )


def sample_results(samples: Sequence[LoggedSample]) -> list[SampleResult]:
    """Each logged sample as a ``ScoredAnswer`` with its cost, in log order."""
    return [_result(logged) for logged in _logged(samples)]


def m3eval_intrusion_rate(answers: Iterable[tuple[ScoredAnswer, bool]]) -> float:
    """M3Eval's intrusion rate over ``(answer, offers_intrusion)`` pairs: the share of answers
    that chose the intrusion option, among answers to questions that offer one (invalid and
    failed answers included, excluded samples left out); NaN when no question offers one. The
    one definition behind the ``intrusion_rate`` metric and ``results.result_rows``."""
    return intrusion_rate_of([a for a, offered in answers if offered and not is_excluded(a)])


def _row(group: str, results: Sequence[SampleResult],
         samples: Sequence[LoggedSample]) -> ResultRow:
    # Unreadable media excludes a sample from every rate; it is counted, not scored wrong.
    counted = [r.answer for r in results if not is_excluded(r.answer)]
    summary = summarize(counted)
    tokens, images = mean_cost(samples)
    return ResultRow(
        group=group,
        n=summary.n,
        accuracy=summary.accuracy,
        # only answers to questions with an intrusion option; NaN where the row has none
        intrusion_rate=m3eval_intrusion_rate((r.answer, r.offers_intrusion) for r in results),
        invalid=summary.invalid,
        failed=summary.failed,
        excluded=len(results) - len(counted),
        mean_prompt_tokens=tokens,
        mean_images=images,
    )


def result_rows(samples: Sequence[LoggedSample],
                by: Sequence[str] = ("paradigm", "condition")) -> list[ResultRow]:
    """The overall row, then one row per value of each label in ``by`` that varies."""
    results = sample_results(samples)
    rows = [_row("all", results, samples)]
    for key in by:
        groups: dict[Any, list[int]] = {}
        for i, result in enumerate(results):
            groups.setdefault(result.answer.groups.get(key), []).append(i)
        if len(groups) > 1:
            rows += [_row(f"{key}={value}", [results[i] for i in members],
                          [samples[i] for i in members])
                     for value, members in groups.items()]
    return rows


def summary_rows(samples: Sequence[LoggedSample]) -> tuple[list[str], list[list[str]]]:
    """What ``m3kit eval`` prints: group, n, acc%, intr%, invalid, failed, excluded, tok in,
    images (intrusion only over questions with an intrusion option, ``—`` where no question in
    the row has one; costs over answered samples)."""
    columns = ["group", "n", "acc%", "intr%", "invalid", "failed", "excluded", "tok in",
               "images"]
    rows = [[r.group, str(r.n), percent_cell(r.accuracy), percent_cell(r.intrusion_rate),
             str(r.invalid), str(r.failed), str(r.excluded), cost_cell(r.mean_prompt_tokens),
             cost_cell(r.mean_images)]
            for r in result_rows(samples)]
    return columns, rows


# -- the table ``m3kit score m3eval`` prints --------------------------------------------------


def _cell(value: float | None) -> str:
    return number_cell(value, 2, PLAIN_NA)


def score_text(card: M3EvalScores, predictions: Path) -> list[str]:
    """The paper's tables of ``card`` as text, rounded to 2 decimals for display."""
    da, mi, il, nb = (card.divided_attention, card.memory_interference, card.interleaved,
                      card.nback)
    lines = ["Divided attention (acc %)     source  order  content"]
    for key, label in (("no_swap", "no swap"), ("swap", "swap")):
        row = da[key]
        lines.append(f"  {label:<28}{_cell(row['source_identification']):>7}"
                     f"{_cell(row['order_understanding']):>7}{_cell(row['content_retention']):>9}")
    lines.append(f"  spatial source grounding    {_cell(da['spatial_source_grounding']):>7}")
    lines.append("Memory interference           acc %   intrusion %")
    for key in ("proactive", "retroactive", "delta", "repeat_target", "repeat_interferer"):
        if key in mi:
            lines.append(f"  {key:<28}{_cell(mi[key]['accuracy']):>7}"
                         f"{_cell(mi[key]['intrusion_rate']):>12}")
    lines.append("Interleaved events (acc %)")
    for key, value in il.items():
        lines.append(f"  {key:<28}{_cell(value):>7}")
    lines.append(f"N-Back (acc %)                {_cell(nb['accuracy']):>7}")
    for group in ("by_attribute", "by_n", "by_k"):
        cells = ", ".join(f"{k}: {_cell(v)}" for k, v in nb[group].items())
        lines.append(f"  {group:<28}{cells}")
    lines.append(f"invalid {card.n_invalid}, excluded {card.n_excluded}, "
                 f"missing {card.n_missing}, scored {card.n_scored}")
    lines += excluded_lines(card.excluded_by_cell)
    return ["\n".join(lines)]


def excluded_lines(excluded_by_cell: Mapping[str, Sequence[str]]) -> list[str]:
    """Where excluded questions would have counted (none: no line): each such cell above is
    a mean over its other questions."""
    if not excluded_by_cell:
        return []
    lines = ["excluded (video unreadable), left out of these cells' rates:"]
    lines += [f"  {cell}: {', '.join(ids)}" for cell, ids in excluded_by_cell.items()]
    return lines


def scoring_rules() -> dict[str, str]:
    """The scoring rules in force, for the reproducibility card (M3Eval has no variants)."""
    return {
        "answer": "strict final line (The final answer is X)",
        "invalid": "counted wrong",
        "unreadable video": "excluded from every rate",
        "intrusion rate": "over questions offering an intrusion option",
    }


SCORING = BenchmarkScoring(
    item=M3EvalItem,
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
