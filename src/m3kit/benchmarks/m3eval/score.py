"""M3Eval's numbers from scored answers: the paper's Tables 1–3, the N-Back breakdown and fits.

``score_predictions`` scores raw model outputs from any harness (``{id: text}``) with m3kit's
strict parsing; ``scores_from_log`` reads the same numbers from the samples of an m3kit eval
log. Both return one ``M3EvalScores`` card (``model_dump()``: the JSON below), values in percent at full float precision (the authors' aggregation script prints them
rounded to 4 decimals; a table may round for display, the numbers do not), a cell with no
question being ``None``::

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
from typing import Any

from pydantic import BaseModel, ConfigDict, model_serializer

from m3kit.benchmarks.m3eval.load import measure_of
from m3kit.benchmarks.m3eval.scorer import (
    M3EvalItem,
    group_labels,
    is_excluded,
    m3eval_intrusion_rate,
    sample_offers_intrusion,
)
from m3kit.metrics import ScoredAnswer, offers_intrusion, score_response, summarize
from m3kit.metrics.fits import least_squares_line
from m3kit.schema import ChoiceRole, LoggedSample, Question, Usage
from m3kit.schema.evallog import mean_cost
from m3kit.schema.report import cost_cell, percent_cell

__all__ = [
    "RANDOM_ACCURACY",
    "RANDOM_INTRUSION_RATE",
    "RANDOM_NBACK_ACCURACY",
    "VIDEO_READ_FAILURE",
    "M3EvalScores",
    "ResultRow",
    "SampleResult",
    "aggregate",
    "result_rows",
    "sample_results",
    "score_predictions",
    "scores_from_log",
    "summary_rows",
]

RANDOM_ACCURACY = 25.0  # four options
RANDOM_INTRUSION_RATE = 50.0  # two of the four options are intrusions
RANDOM_NBACK_ACCURACY = 50.0  # Yes / No
# What the authors' harness writes in place of an output when a video cannot be read; such a
# prediction is excluded, as there.
VIDEO_READ_FAILURE = "__VIDEO_INPUT_SKIPPED__"

_STORYLINE = ("source_identification", "order_understanding", "content_retention")
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
        out[key] = {m: _accuracy(x for x in cell if _measure(x[0]) == m) for m in _STORYLINE}
    out["delta"] = {m: _delta(out["swap"][m], out["no_swap"][m]) for m in _STORYLINE}
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
        for m in (*_STORYLINE, "false_memory_discrimination")
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


def aggregate(scored: Sequence[Scored], *, n_excluded: int = 0) -> dict[str, Any]:
    """The M3Eval result dict from ``(question, scored answer)`` pairs (excluded samples are
    not among them; ``n_excluded`` says how many there were)."""
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
    })


_MISSING = "no prediction for this question"


class M3EvalScores(BaseModel):
    """M3Eval's score card: the paper's Tables 1-3 and the N-Back breakdown (values in
    percent; the layout of each part is the module docstring's), and the counts.
    ``model_dump()`` is the JSON ``m3kit score m3eval --json`` prints."""

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
    # what ``m3kit score m3eval`` read but could not score; absent from logs' cards
    n_skipped_records: int | None = None
    n_unmatched_predictions: int | None = None

    @model_serializer(mode="wrap")
    def _drop_absent_counts(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for key in ("n_skipped_records", "n_unmatched_predictions"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


def score_predictions(
    questions: Sequence[Question],
    predictions: Mapping[str, str],
    *,
    excluded: Collection[str] = (),
) -> M3EvalScores:
    """Score raw outputs (``{question id: model text}``; N-Back ids are ``question_id``).

    ``excluded``: ids whose video could not be read (left out and counted); a prediction that is
    the authors' video-failure sentinel is excluded too.
    """
    skip = set(excluded)
    scored: list[Scored] = []
    n_excluded = 0
    for q in questions:
        text = predictions.get(q.id)
        if q.id in skip or (text is not None and text.startswith(VIDEO_READ_FAILURE)):
            n_excluded += 1
            continue
        if text is None:
            answer = ScoredAnswer(id=q.id, status="failed", reason=_MISSING)
        else:
            answer = score_response(q, text)
        scored.append((q, answer))
    return M3EvalScores.model_validate(aggregate(scored, n_excluded=n_excluded))


def scores_from_log(samples: Sequence[LoggedSample]) -> M3EvalScores:
    """The same card from the samples of an m3kit eval log of any ``m3eval_*`` / ``synth_*``
    task (``m3kit.report.logs.read_samples``). Samples inspect recorded as errored are failed
    (wrong); samples whose media could not be read are excluded."""
    scored: list[Scored] = []
    n_excluded = 0
    for result in sample_results(samples):
        if is_excluded(result.answer):
            n_excluded += 1
            continue
        if result.question is not None:
            scored.append((result.question, result.answer))
    return M3EvalScores.model_validate(aggregate(scored, n_excluded=n_excluded))


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


def _result(sample: LoggedSample) -> SampleResult:
    labels = group_labels(sample.question) if sample.question is not None else {}
    item = sample.item
    m3eval_item = item if isinstance(item, M3EvalItem) else None
    if sample.error is not None or item is None:
        answer = ScoredAnswer(id=sample.id, status="failed", reason=sample.reason,
                              groups=labels)
    else:
        # any benchmark's record has a status and groups; M3Eval's also the letter and role
        answer = ScoredAnswer(
            id=sample.id, status=item.status, reason=sample.explanation or "",
            answer=m3eval_item.letter if m3eval_item else sample.answer,
            role=m3eval_item.role if m3eval_item else None,
            groups=item.groups or labels,
        )
    return SampleResult(
        answer=answer, question=sample.question, usage=sample.usage, seconds=sample.seconds,
        total_seconds=sample.total_seconds,
        offers_intrusion=sample_offers_intrusion(m3eval_item, sample.question),
    )


def sample_results(samples: Sequence[LoggedSample]) -> list[SampleResult]:
    """Each logged sample as a ``ScoredAnswer`` with its cost, in log order."""
    return [_result(s) for s in samples]


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
