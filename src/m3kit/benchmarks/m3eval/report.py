"""M3Eval's paper tables and figures from scores: Tables 1–3 and Figures 8–11 (the quickstart's
tables of answered questions are ``m3kit.benchmarks.m3eval.answer_tables``).

Input is one score dict per system in the shape of ``m3kit.benchmarks.m3eval.score``'s card
(``M3EvalScores.model_dump()``, what ``m3kit score m3eval --json`` prints; values in percent),
from runs read out of eval logs (``scores_from_runs``) or from score files. Beside the paper's
tables, the figures read the dict's extra keys: ``memory_interference.repeat_target`` /
``repeat_interferer`` (Figure 8, the accuracy on V1 questions for ``[V1, V1, V2]`` and ``[V1,
V2, V2]`` beside ``retroactive``, which is ``[V1, V2]`` with the same target),
``divided_attention.spatial_source_grounding`` and
``interleaved.temporal_source_grounding`` (Figure 9), ``nback.by_attribute`` (Figure 10), and
``nback.by_k_n`` (``{"K=k,N=n": accuracy}``, Figure 11's points; ``by_n`` / ``by_k`` where it is
absent) with ``nback.fit_n`` / ``fit_k`` (``slope``, ``intercept``, ``residual_std``; a
least-squares line over the points where they are absent).

Layout follows the paper: a Human row (from an optional file in the same shape), a Random row
(25 % for four-option questions, 50 % intrusion), then each system; a blind run (task metadata
``m3kit_blind``) is labelled ``<model> (blind)`` and sits right after its full run. Every figure's
plotted numbers are also written beside its PNG as JSON (``fig*.json``), and returned by the
``figure*_data`` functions.

A logged system's bars and points carry their 95 % intervals as error bars, the intervals of
the report's tables (``figure_intervals``: the headline numbers' from
``m3kit.benchmarks.intervals``, the N-back cells' over their own trials as the quickstart's
tables compute them), so one number has one interval on the page. Figure 11 draws a fitted
line only through ``MIN_FIT_VALUES`` distinct N (K) values, and keeps series with the same
points apart (offset, own marker and line style, named in the legend).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from m3kit.benchmarks.figures import error_bars, pyplot
from m3kit.benchmarks.m3eval.load import BENCHMARK_NAME
from m3kit.benchmarks.m3eval.score import (
    RANDOM_ACCURACY,
    RANDOM_BINARY_ACCURACY,
    RANDOM_INTRUSION_RATE,
    STORYLINE,
)
from m3kit.benchmarks.protocol import BenchmarkReporting, ReportContext
from m3kit.metrics.bootstrap import Interval
from m3kit.schema.evallog import BLIND_KEY, MEMORY_NAME_KEY, LoggedRun
from m3kit.schema.report import NA, DeltaCell, ReportSection, Table

__all__ = [
    "REPORTING",
    "FigureData",
    "Series",
    "draw_figure",
    "excluded_notes",
    "figure8_data",
    "figure9_data",
    "figure10_data",
    "figure11_data",
    "ordered_systems",
    "paper_sections",
    "run_system",
    "scores_from_runs",
    "sections",
    "system_label",
    "table1",
    "table2",
    "table3",
]

HUMAN = "Human"
RANDOM = "Random"
DECIMALS = 2
CHANCE_NOTE = ("Random rows are chance: 25 % for four-option questions, 50 % intrusion "
               "(Table 2); figures mark 50 % for the two-way source-memory and Yes/No N-back "
               "questions, 25 % for Figure 8.")

STORYLINE_NAMES = ("Source Identification", "Order Understanding", "Content Retention")
INTERLEAVED = (*STORYLINE, "false_memory_discrimination")
INTERLEAVED_NAMES = (*STORYLINE_NAMES, "False Memory Discrimination")
# Figure 8's bars: [V1, V2] is the retroactive condition (target first, as in the repeats).
REPETITION = ("retroactive", "repeat_target", "repeat_interferer")
REPETITION_NAMES = ("[V1, V2]", "[V1, V1, V2]", "[V1, V2, V2]")
ATTRIBUTES = ("scene", "action")
# Figure 11 draws a system's least-squares line only through this many distinct N (or K)
# values: through two, any line fits exactly and says nothing about a trend.
MIN_FIT_VALUES = 3
ERROR_NOTE = ("Error bars of Figures 8–11: the 95 % intervals shown in this report's tables "
              "(headline numbers: \"M3Eval · headline numbers with intervals\"; N-back by "
              "attribute and by (K, N): \"M3Eval · N-back figures with intervals\"); a system "
              "from a score file, and the human reference, have none.")
FIT_NOTE = (f"Figure 11 draws a system's least-squares line only through {MIN_FIT_VALUES} or "
            "more distinct values of N (or K); with fewer its legend says so. Each system has "
            "its own marker, line style and a small horizontal offset, so series with the same "
            "points stay visible; the legend names the series they coincide with.")


def _get(scores: Mapping[str, Any] | None, *keys: str) -> Any:
    """``scores[k1][k2]...`` or None where any level is missing."""
    value: Any = scores
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


# -- systems ----------------------------------------------------------------------------------


def system_label(model: str, memory: str | None = None, blind: bool = False) -> str:
    """How a run is named in tables and legends: the model, ``+ memory`` when it answered
    through one, `` (blind)`` for a blind run."""
    label = model if memory in (None, "", "none") else f"{model} + {memory}"
    return f"{label} (blind)" if blind else label


def ordered_systems(names: Sequence[str]) -> list[str]:
    """``names`` in first-seen order, each blind run moved right after its full run."""
    blind_suffix = " (blind)"
    bases: list[str] = []
    for name in names:
        base = name.removesuffix(blind_suffix)
        if base not in bases:
            bases.append(base)
    present = set(names)
    return [n for base in bases for n in (base, base + blind_suffix) if n in present]


def _rows(scores_by_system: Mapping[str, Mapping[str, Any]],
          humans: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any] | None]]:
    """(label, scores) in table order; Random's scores are None (filled per table)."""
    out: list[tuple[str, Mapping[str, Any] | None]] = []
    if humans is not None:
        out.append((HUMAN, humans))
    out.append((RANDOM, None))
    out += [(name, scores_by_system[name]) for name in ordered_systems(list(scores_by_system))]
    return out


# -- tables -----------------------------------------------------------------------------------


def table1(scores_by_system: Mapping[str, Mapping[str, Any]],
           humans: Mapping[str, Any] | None = None) -> Table:
    """Table 1, divided attention: accuracy per storyline metric without and with left/right
    swaps; each swap cell carries its change from no swapping (the scores' own ``delta`` where
    given)."""
    rows = []
    for name, scores in _rows(scores_by_system, humans):
        if scores is None:
            rows.append([name, *[RANDOM_ACCURACY] * 3,
                         *[DeltaCell(value=RANDOM_ACCURACY, delta=0.0)] * 3])
            continue
        plain = [_num(_get(scores, "divided_attention", "no_swap", m)) for m in STORYLINE]
        swapped = [_num(_get(scores, "divided_attention", "swap", m)) for m in STORYLINE]
        given = [_num(_get(scores, "divided_attention", "delta", m)) for m in STORYLINE]
        rows.append([name, *plain, *[DeltaCell(value=s, delta=d if d is not None else _minus(s, p))
                                     for s, p, d in zip(swapped, plain, given, strict=True)]])
    return Table(
        title="Table 1: Divided Attention",
        caption="Accuracy (%) on three divided attention metrics under the split-screen setting "
                "without swaps and with frequent left/right swaps (change from no swapping in "
                "parentheses).",
        columns=["Acc(%)", *STORYLINE_NAMES, *STORYLINE_NAMES],
        header_groups=[("", 1), ("No swapping", 3), ("Swapping", 3)],
        rows=rows, decimals=DECIMALS,
    )


def table2(scores_by_system: Mapping[str, Mapping[str, Any]],
           humans: Mapping[str, Any] | None = None) -> Table:
    """Table 2, memory interference: accuracy and intrusion rate, proactive, retroactive and
    Δ = proactive − retroactive (the scores' own Δ where given)."""
    rows = []
    for name, scores in _rows(scores_by_system, humans):
        if scores is None:
            rows.append([name, RANDOM_ACCURACY, RANDOM_ACCURACY, 0.0,
                         RANDOM_INTRUSION_RATE, RANDOM_INTRUSION_RATE, 0.0])
            continue
        row: list[Any] = [name]
        for metric in ("accuracy", "intrusion_rate"):
            pro = _num(_get(scores, "memory_interference", "proactive", metric))
            retro = _num(_get(scores, "memory_interference", "retroactive", metric))
            delta = _num(_get(scores, "memory_interference", "delta", metric))
            row += [pro, retro, delta if delta is not None else _minus(pro, retro)]
        rows.append(row)
    return Table(
        title="Table 2: Memory Interference",
        caption="Proactive: the first video disrupts recall of the second video. Retroactive: "
                "the second disrupts recall of the first. Δ denotes proactive minus "
                "retroactive.",
        columns=["", "Proactive", "Retroactive", "Δ", "Proactive", "Retroactive", "Δ"],
        header_groups=[("", 1), ("Accuracy (%, ↑)", 3), ("Intrusion Rate (%, ↓)", 3)],
        rows=rows, decimals=DECIMALS,
    )


def table3(scores_by_system: Mapping[str, Mapping[str, Any]],
           humans: Mapping[str, Any] | None = None) -> Table:
    """Table 3, interleaved events: accuracy on the four reconstruction metrics."""
    rows = []
    for name, scores in _rows(scores_by_system, humans):
        if scores is None:
            rows.append([name, *[RANDOM_ACCURACY] * len(INTERLEAVED)])
            continue
        rows.append([name, *[_num(_get(scores, "interleaved", m)) for m in INTERLEAVED]])
    return Table(
        title="Table 3: Interleaved Events",
        caption="Accuracy (%) on four interleaved reconstruction metrics.",
        columns=["Acc(%)", *INTERLEAVED_NAMES], rows=rows, decimals=DECIMALS,
    )


def counts_table(scores_by_system: Mapping[str, Mapping[str, Any]]) -> Table:
    """Per system: answers scored, answers not in the required form (counted wrong), samples
    that failed or had no prediction (counted wrong) and samples excluded because their media
    could not be read (left out)."""
    keys = ("n_scored", "n_invalid", "n_failed", "n_missing", "n_excluded")
    rows = [[name, *[_get(scores_by_system[name], k) for k in keys]]
            for name in ordered_systems(list(scores_by_system))]
    return Table(title="Answers counted",
                 columns=["system", "scored", "invalid (wrong)", "failed (wrong)",
                          "no prediction (wrong)", "excluded (unreadable media)"],
                 rows=rows)


def excluded_notes(scores_by_system: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Per system with excluded samples (media unreadable): the cells of Tables 1-3 (and
    N-back) they would have counted in, each then a rate over its other questions. A score
    file written before the breakdown existed gives the count only."""
    notes = []
    for name in ordered_systems(list(scores_by_system)):
        scores = scores_by_system[name]
        n = _get(scores, "n_excluded")
        if not n:
            continue
        cells = _get(scores, "excluded_by_cell") or {}
        where = "; ".join(f"{cell} ({', '.join(ids)})" for cell, ids in cells.items())
        notes.append(f"{name}: {n} question(s) excluded, their media unreadable, and left out "
                     f"of every rate" + (f": {where}." if where else "."))
    return notes


# -- figures: the data ------------------------------------------------------------------------


class Series(BaseModel):
    """One system's plotted values: bars at ``x`` categories, or points with a fitted line.

    ``lo`` / ``hi``: each value's 95 % interval, drawn as an error bar (empty, or ``None`` for
    a value, where there is none: a score file, the human reference); the intervals of the
    report's tables (``figure_intervals``). ``line``: whether the fitted line is drawn (it
    needs ``MIN_FIT_VALUES`` distinct x values: a line through two is no fit); ``same_as``:
    the label of an earlier series of the panel whose points (and intervals) are the same,
    which the legend names, since its markers would hide this one's."""

    label: str
    x: list[Any]
    y: list[float | None]
    lo: list[float | None] = Field(default_factory=list)
    hi: list[float | None] = Field(default_factory=list)
    slope: float | None = None
    intercept: float | None = None
    std: float | None = None
    fit_source: str = ""
    line: bool = True
    same_as: str = ""

    def legend(self, knob: str = "x") -> str:
        """The legend's label: the system, then what the reader cannot see in the markers
        (``knob``: what the x values are, ``N``)."""
        notes = []
        if self.same_as:
            notes.append(f"same points as {self.same_as}")
        if self.slope is not None and not self.line:
            values = len(set(self.x))
            notes.append(f"no line: {values} {knob} value{'' if values == 1 else 's'}")
        return f"{self.label} ({'; '.join(notes)})" if notes else self.label


class FigureData(BaseModel):
    """What a figure shows, independent of its pixels."""

    name: str
    title: str
    kind: str  # "bars" (x = categories, one bar group per category) or "fit"
    xlabel: str
    ylabel: str = "Accuracy (%)"
    baseline: float | None = None
    baseline_label: str = RANDOM
    knob: str = ""  # a fit panel's x: N or K
    series: list[Series] = Field(default_factory=list)
    panels: list[FigureData] = Field(default_factory=list)

    def series_by_label(self) -> dict[str, Series]:
        return {s.label: s for s in self.series}


Intervals = Mapping[str, Mapping[str, Interval]]  # system -> number name -> its interval


def _systems_with_human(scores_by_system: Mapping[str, Mapping[str, Any]],
                        humans: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    out = [(HUMAN, humans)] if humans is not None else []
    return out + [(n, scores_by_system[n]) for n in ordered_systems(list(scores_by_system))]


def _bounds(label: str, names: Sequence[str], intervals: Intervals | None
            ) -> tuple[list[float | None], list[float | None]]:
    """The interval bounds of ``label``'s numbers ``names`` (empty lists: none at all)."""
    mine = (intervals or {}).get(label, {}) if label != HUMAN else {}
    found = [mine.get(name) for name in names]
    if not any(i is not None and i.lo is not None for i in found):
        return [], []
    return ([i.lo if i is not None else None for i in found],
            [i.hi if i is not None else None for i in found])


def _bars(name: str, title: str, xlabel: str, categories: Sequence[str], baseline: float,
          values: list[tuple[str, list[float | None]]], names: Sequence[str],
          intervals: Intervals | None) -> FigureData:
    series = []
    for label, y in values:
        if any(v is not None for v in y):
            lo, hi = _bounds(label, names, intervals)
            series.append(Series(label=label, x=list(categories), y=y, lo=lo, hi=hi))
    return FigureData(name=name, title=title, kind="bars", xlabel=xlabel, baseline=baseline,
                      series=series)


def figure8_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                 humans: Mapping[str, Any] | None = None,
                 intervals: Intervals | None = None) -> FigureData:
    """Figure 8: accuracy on V1 questions without repetition and repeating target or
    interferer; ``intervals``: each system's (``figure_intervals``), drawn as error bars."""
    values = [(label, [_num(_get(s, "memory_interference", c, "accuracy")) for c in REPETITION])
              for label, s in _systems_with_human(scores_by_system, humans)
              # only runs of a repetition probe: retroactive alone is Table 2's
              if any(_get(s, "memory_interference", c) is not None for c in REPETITION[1:])]
    return _bars("fig8_repetition", "Figure 8: Video repetition under interference",
                 "Video order (questions about V1)", REPETITION_NAMES, RANDOM_ACCURACY, values,
                 [f"{c}_accuracy" for c in REPETITION], intervals)


def figure9_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                 humans: Mapping[str, Any] | None = None,
                 intervals: Intervals | None = None) -> FigureData:
    """Figure 9: spatial (split screen with swaps) vs temporal (interleaved) source grounding."""
    values = [(label, [_num(_get(s, "divided_attention", "spatial_source_grounding")),
                       _num(_get(s, "interleaved", "temporal_source_grounding"))])
              for label, s in _systems_with_human(scores_by_system, humans)]
    return _bars("fig9_source_grounding", "Figure 9: Spatial vs temporal source grounding",
                 "Source dimension", ("Spatial", "Temporal"), RANDOM_BINARY_ACCURACY, values,
                 ("spatial_source_grounding", "temporal_source_grounding"), intervals)


def figure10_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                  humans: Mapping[str, Any] | None = None,
                  intervals: Intervals | None = None) -> FigureData:
    """Figure 10: N-back accuracy per attribute (scene, action), over all N and K."""
    values = [(label, [_num(_get(s, "nback", "by_attribute", a)) for a in ATTRIBUTES])
              for label, s in _systems_with_human(scores_by_system, humans)]
    return _bars("fig10_nback_attribute", "Figure 10: N-back accuracy by attribute",
                 "Attribute", ("Scene", "Action"), RANDOM_BINARY_ACCURACY, values,
                 [attribute_number(a) for a in ATTRIBUTES], intervals)


def attribute_number(attribute: str) -> str:
    """The name of Figure 10's number for ``attribute`` (``nback attribute=scene``)."""
    return f"nback attribute={attribute}"


def setting_number(key: str) -> str:
    """The name of Figure 11's number for a point's key (``K=3,N=1``, ``N=2``):
    ``nback K=3,N=1``."""
    return f"nback {key}"


def _points(nback: Mapping[str, Any], knob: str) -> tuple[list[float], list[float], list[str]]:
    """Points of one knob, with each point's key: one per (K, N) setting where ``by_k_n`` is
    given (as the paper plots), else one per value of the knob."""
    by_k_n = nback.get("by_k_n")
    xs: list[float] = []
    ys: list[float] = []
    keys: list[str] = []
    if isinstance(by_k_n, Mapping) and by_k_n:
        for key, acc in by_k_n.items():
            # "K=4,N=2"
            parts = dict(p.split("=", 1) for p in str(key).replace(" ", "").split(",") if "=" in p)
            if _num(acc) is not None and knob.upper() in parts:
                xs.append(float(parts[knob.upper()]))
                ys.append(float(acc))
                keys.append(",".join(f"{k}={v}" for k, v in parts.items()))
    else:
        for key, acc in (_get(nback, f"by_{knob}") or {}).items():
            if _num(acc) is not None:
                xs.append(float(key))
                ys.append(float(acc))
                keys.append(f"{knob.upper()}={key}")
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    return [xs[i] for i in order], [ys[i] for i in order], [keys[i] for i in order]


def _fit_series(label: str, nback: Mapping[str, Any], knob: str,
                intervals: Intervals | None) -> Series | None:
    from m3kit.metrics.fits import least_squares_line

    xs, ys, keys = _points(nback, knob)
    given = _get(nback, f"fit_{knob}")
    slope, intercept = _num(_get(given, "slope")), _num(_get(given, "intercept"))
    std, source = _num(_get(given, "residual_std")), "scores"
    if slope is None or intercept is None:
        fit = least_squares_line(xs, ys)
        if fit is None:
            slope = intercept = std = None
            source = ""
        else:
            slope, intercept, source = fit.slope, fit.intercept, "points"
            std = None if math.isnan(fit.residual_std) else fit.residual_std
    if not xs and slope is None:
        return None
    lo, hi = _bounds(label, [setting_number(k) for k in keys], intervals)
    return Series(label=label, x=xs, y=[*ys], lo=lo, hi=hi, slope=slope, intercept=intercept,
                  std=std, fit_source=source, line=len(set(xs)) >= MIN_FIT_VALUES)


def _mark_coinciding(series: list[Series]) -> list[Series]:
    """Each series whose points and intervals are an earlier one's, marked ``same_as`` it."""
    out: list[Series] = []
    for one in series:
        twin = next((o for o in out if (o.x, o.y, o.lo, o.hi) == (one.x, one.y, one.lo, one.hi)
                     and not o.same_as), None)
        out.append(one.model_copy(update={"same_as": twin.label}) if twin else one)
    return out


def figure11_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                  humans: Mapping[str, Any] | None = None,
                  intervals: Intervals | None = None) -> FigureData:
    """Figure 11: N-back accuracy against N and against K, each system's points (with their
    intervals) and its least-squares line with a ±1 std band (the residuals' standard
    deviation) around it, where it has ``MIN_FIT_VALUES`` distinct N (K) values."""
    panels = []
    for knob, xlabel in (("n", "N (lag)"), ("k", "K (sequence length)")):
        series = []
        for label, scores in _systems_with_human(scores_by_system, humans):
            nback = _get(scores, "nback")
            if isinstance(nback, Mapping):
                one = _fit_series(label, nback, knob, intervals)
                if one is not None:
                    series.append(one)
        panels.append(FigureData(name=f"fig11_{knob}", title=f"Accuracy vs {knob.upper()}",
                                 kind="fit", xlabel=xlabel, baseline=RANDOM_BINARY_ACCURACY,
                                 knob=knob.upper(), series=_mark_coinciding(series)))
    return FigureData(name="fig11_nback_n_k", title="Figure 11: Effects of N and K on accuracy",
                      kind="panels", xlabel="", panels=panels,
                      series=[s for p in panels for s in p.series])


# -- figures: the pixels ----------------------------------------------------------------------


MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINE_STYLES = ("-", "--", "-.", ":")


def _errors(series: Series, xs: Sequence[float], color: Any, ax: Any) -> None:
    """``series``' intervals as error bars at ``xs`` (nothing where it has none)."""
    if not series.lo:
        return
    bounds = [None if lo is None or hi is None else (lo, hi)
              for lo, hi in zip(series.lo, series.hi, strict=True)]
    error_bars(ax, xs, series.y, bounds, color=color)


def _draw_bars(ax: Any, data: FigureData, colors: list[str]) -> None:
    n = max(len(data.series), 1)
    width = 0.8 / n
    categories = data.series[0].x if data.series else []
    for i, series in enumerate(data.series):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(categories))]
        ys = [float("nan") if v is None else v for v in series.y]
        color = colors[i % len(colors)]
        ax.bar(xs, ys, width=width, label=series.label, color=color)
        _errors(series, xs, "black", ax)
    ax.set_xticks(range(len(categories)), categories)


def _draw_fit(ax: Any, data: FigureData, colors: list[str]) -> None:
    import numpy as np

    n = len(data.series)
    values = sorted({x for s in data.series for x in s.x})
    step = min((b - a for a, b in pairwise(values)), default=1.0)
    for i, series in enumerate(data.series):
        color = colors[i % len(colors)]
        # each system a little apart (within a tenth of the settings' spacing), so equal
        # points and their bars never hide each other
        shift = (i / (n - 1) - 0.5) * 0.2 * step if n > 1 else 0.0
        xs = [x + shift for x in series.x]
        style = LINE_STYLES[i % len(LINE_STYLES)]
        ax.scatter(xs, series.y, color=color, s=22, marker=MARKERS[i % len(MARKERS)],
                   label=series.legend(data.knob or "x"), zorder=3)
        _errors(series, xs, color, ax)
        if series.slope is None or series.intercept is None or not series.line:
            continue
        lo, hi = (min(series.x), max(series.x)) if series.x else (0.0, 1.0)
        grid = np.linspace(lo, hi, 20)
        line = series.slope * grid + series.intercept
        ax.plot(grid + shift, line, color=color, linewidth=1.5, linestyle=style)
        if series.std:
            ax.fill_between(grid + shift, line - series.std, line + series.std, color=color,
                            alpha=0.15)


def _integer_axis(ax: Any, panel: FigureData) -> None:
    """N and K are whole numbers: ticks at the settings that were run, whatever their count.
    (matplotlib's integer locator falls back to fractional ticks when the view holds fewer
    than two whole numbers, as it does around a single N or K.)"""
    values = sorted({round(x) for s in panel.series for x in s.x})
    if not values:
        return
    ax.set_xticks(values, [str(v) for v in values])
    ax.set_xlim(values[0] - 0.5, values[-1] + 0.5)


def draw_figure(data: FigureData) -> Any:
    """``data`` drawn as a matplotlib figure (one axes per panel); the caller closes it."""
    plt = pyplot()
    panels = data.panels or [data]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    colors = [c["color"] for c in plt.rcParams["axes.prop_cycle"]]
    for ax, panel in zip(axes[0], panels, strict=True):
        if panel.kind == "bars":
            _draw_bars(ax, panel, colors)
        else:
            _draw_fit(ax, panel, colors)
            _integer_axis(ax, panel)
        if panel.baseline is not None:
            ax.axhline(panel.baseline, color="grey", linestyle="--", linewidth=1,
                       label=f"{panel.baseline_label} ({panel.baseline:g} %)")
        ax.set_title(panel.title if data.panels else data.title, fontsize=10)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel)
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7, loc="best")
    if data.panels:
        fig.suptitle(data.title, fontsize=11)
    fig.tight_layout()
    return fig


def render_figure(data: FigureData, out_dir: Path) -> str:
    """Draw ``data`` into ``out_dir/<name>.png`` (and its numbers into ``<name>.json``);
    return the PNG's file name."""
    plt = pyplot()
    fig = draw_figure(data)
    name = f"{data.name}.png"
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    (out_dir / f"{data.name}.json").write_text(data.model_dump_json(indent=1), encoding="utf-8")
    return name


# -- sections ---------------------------------------------------------------------------------


def paper_sections(scores_by_system: Mapping[str, Mapping[str, Any]], out_dir: str | Path,
                   humans: Mapping[str, Any] | None = None,
                   intervals: Intervals | None = None) -> list[ReportSection]:
    """The paper's Tables 1–3 and Figures 8–11 for ``scores_by_system`` (system label → score
    dict), figures written into ``out_dir``, with error bars where ``intervals`` has a
    system's (``figure_intervals``); a figure with nothing to plot is left out with a note
    saying what it needs."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, FigureData, str]] = [
        ("Memory Interference", figure8_data(scores_by_system, humans, intervals),
         "Figure 8 needs runs of the repetition variants ([V1, V1, V2] and [V1, V2, V2])."),
        ("Interleaved Events", figure9_data(scores_by_system, humans, intervals),
         "Figure 9 needs split-screen and interleaved source-memory questions."),
        ("N-Back", figure10_data(scores_by_system, humans, intervals),
         "Figure 10 needs N-back answers with their attribute."),
        ("N-Back", figure11_data(scores_by_system, humans, intervals),
         "Figure 11 needs N-back accuracy by N and K."),
    ]
    sections = {
        "Divided Attention": ReportSection(benchmark=BENCHMARK_NAME,
                                           title="M3Eval · Divided Attention",
                                           tables=[table1(scores_by_system, humans)]),
        "Memory Interference": ReportSection(benchmark=BENCHMARK_NAME,
                                             title="M3Eval · Memory Interference",
                                             tables=[table2(scores_by_system, humans)]),
        "Interleaved Events": ReportSection(benchmark=BENCHMARK_NAME,
                                            title="M3Eval · Interleaved Events",
                                            tables=[table3(scores_by_system, humans)]),
        "N-Back": ReportSection(benchmark=BENCHMARK_NAME, title="M3Eval · N-Back"),
    }
    for key, data, missing in figures:
        if data.series:
            sections[key].figures.append(render_figure(data, out))
        else:
            sections[key].notes.append(missing)
    drawn = [data for _, data, _ in figures if data.series]
    if any(s.lo for data in drawn for s in data.series):
        sections["N-Back"].notes.append(ERROR_NOTE)
    if any(s.slope is not None for data in drawn if data.kind == "panels"
           for s in data.series):
        sections["N-Back"].notes.append(FIT_NOTE)
    counts = ReportSection(benchmark=BENCHMARK_NAME, title="M3Eval · Answers counted",
                           tables=[counts_table(scores_by_system)],
                           notes=[CHANCE_NOTE, *excluded_notes(scores_by_system)])
    return [*sections.values(), counts]


# -- from eval logs ---------------------------------------------------------------------------


def run_system(run: LoggedRun) -> str:
    """The system a run belongs to (``system_label`` of its model, memory and blind flag, then
    the settings that set it apart from runs beside it: ``LoggedRun.labelled``); runs of one
    system are pooled into one (``m3kit.report.pooling``)."""
    memory = run.metadata.get(MEMORY_NAME_KEY) or run.task_args.get("memory")
    return run.labelled(system_label(run.model, str(memory) if memory else None,
                                     bool(run.metadata.get(BLIND_KEY))))


def scores_from_runs(runs: Sequence[LoggedRun]) -> dict[str, dict[str, Any]]:
    """One score dict per system (``run_system``; the runs arrive pooled, one per system),
    scored by ``m3kit.benchmarks.m3eval.score.scores_from_log``."""
    from m3kit.benchmarks.m3eval.score import scores_from_log

    return {run_system(run): scores_from_log(run.samples).model_dump() for run in runs}


def nback_intervals(runs: Sequence[LoggedRun]) -> dict[str, dict[str, Interval]]:
    """Per system (``run_system``), the intervals of the N-back numbers Figures 10 and 11 plot
    (by attribute, by (K, N), and by N and by K alone), each over its own units: the cells of
    the quickstart's tables (``answer_tables.accuracy_interval``), so a number both show has
    one interval."""
    from m3kit.benchmarks.m3eval.answer_tables import SampleRow, accuracy_interval, rows_from_run

    cells: dict[str, dict[str, list[SampleRow]]] = {}
    for run in runs:
        mine = cells.setdefault(run_system(run), {})
        for row in rows_from_run(run):
            if row.label("paradigm") != "nback":
                continue
            attribute, n, k = row.label("attribute"), row.label("n"), row.label("k")
            names = [attribute_number(str(attribute))] if attribute is not None else []
            if n is not None and k is not None:
                names.append(setting_number(f"K={k},N={n}"))
            names += [setting_number(f"{knob}={value}")
                      for knob, value in (("N", n), ("K", k)) if value is not None]
            for name in names:
                mine.setdefault(name, []).append(row)
    return {system: {name: accuracy_interval(rows) for name, rows in sorted(
                its.items(), key=lambda kv: _number_order(kv[0]))}
            for system, its in cells.items()}


def _number_order(name: str) -> tuple[int, str]:
    """Attributes, then (K, N) settings, then N alone, then K alone."""
    rank = (0 if "attribute=" in name else 1 if "," in name else 2 if " N=" in name else 3)
    return rank, name


def figure_intervals(headline: Mapping[str, Any], cells: Mapping[str, Mapping[str, Interval]]
                     ) -> dict[str, dict[str, Interval]]:
    """Per system, the interval of every number a figure plots: the headline numbers' from
    ``headline`` (system -> ``HeadlineIntervals``, the table of the report's headline numbers)
    and the N-back cells' (``cells``: ``nback_intervals``)."""
    out: dict[str, dict[str, Interval]] = {system: dict(i.ci) for system, i in headline.items()}
    for system, its in cells.items():
        out.setdefault(system, {}).update(its)
    return out


def sections(context: ReportContext) -> list[ReportSection]:
    """The report contract: M3Eval's tables and figures from pooled runs and score files
    (``context.cards``: system -> the JSON of ``m3kit score m3eval --json``), with the human
    reference row when ``context.humans`` is given; the figures' error bars from the headline
    intervals ``m3kit.report.build`` computed (``context.headline``; it appends their table to
    the ``M3Eval · Confidence intervals`` section, which holds the N-back figures' too) and the
    N-back cells' (``figure_intervals``)."""
    from m3kit.errors import M3kitError

    scores = scores_from_runs(context.runs)
    for name, data in context.cards.items():
        if name in scores:
            raise M3kitError(f"a score file and an eval log both name the system {name!r}",
                             field="system")
        scores[name] = dict(data)
    cells = nback_intervals(context.runs)
    return [*paper_sections(scores, context.out_dir, humans=context.humans,
                            intervals=figure_intervals(context.headline, cells)),
            *interval_sections(cells, context.benchmark.interval_spec)]


def interval_sections(cells: Mapping[str, Mapping[str, Interval]],
                      spec: str) -> list[ReportSection]:
    """The N-back numbers Figures 10 and 11 plot as ``value [lo, hi] (n units)`` in ``spec``
    (``cells``: ``nback_intervals``), in ``M3Eval · Confidence intervals`` (where
    ``m3kit.report.build`` puts the headline numbers' first); score files carry no items to
    resample."""
    table = nback_interval_table(cells, spec)
    if table is None:
        return []
    return [ReportSection(benchmark=BENCHMARK_NAME, title="M3Eval · Confidence intervals",
                          tables=[table])]


def nback_interval_table(cells: Mapping[str, Mapping[str, Interval]],
                         spec: str) -> Table | None:
    """The N-back numbers Figures 10 and 11 plot, one column per system, as ``value [lo, hi]
    (n units)`` in ``spec`` (each over its own units); None without N-back answers."""
    from m3kit.metrics.bootstrap import few_units_note

    names = sorted({name for its in cells.values() for name in its}, key=_number_order)
    if not names:
        return None
    rows = [[name, *(its[name].text(spec, units=True) if name in its
                     else NA for its in cells.values())] for name in names]
    few = any(i.few_units for its in cells.values() for i in its.values())
    caption = ("Accuracy (%) of the N-back questions of each attribute, (K, N) setting, N and "
               "K: Figure 10 plots the attributes, Figure 11 the (K, N) settings (N and K "
               "where a score gives none). 95 % intervals over each number's own trials, 2000 "
               "resamples, seed 0" + (f". {few_units_note()}" if few else "") + ".")
    return Table(title="M3Eval · N-back figures with intervals", columns=["number", *cells],
                 rows=rows, caption=caption)


REPORTING = BenchmarkReporting(sections=sections, system_label=run_system)
