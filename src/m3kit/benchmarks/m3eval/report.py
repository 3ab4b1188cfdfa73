"""M3Eval's paper tables and figures from scores: Tables 1–3 and Figures 8–11 (the quickstart's
tables of answered questions are ``m3kit.benchmarks.m3eval.answer_tables``).

Input is one score dict per system in the shape of ``m3kit.benchmarks.m3eval.score``'s card
(``M3EvalScores.model_dump()``, what ``m3kit score m3eval --json`` prints; values in percent),
from runs read out of eval logs (``scores_from_runs``) or from score files. Beside the paper's tables, the figures read the dict's extra keys:
``memory_interference.repeat_target`` / ``repeat_interferer`` (Figure 8, the accuracy on V1
questions for ``[V1, V1, V2]`` and ``[V1, V2, V2]`` beside ``retroactive``, which is ``[V1, V2]``
with the same target), ``divided_attention.spatial_source_grounding`` and
``interleaved.temporal_source_grounding`` (Figure 9), ``nback.by_attribute`` (Figure 10), and
``nback.by_k_n`` (``{"K=k,N=n": accuracy}``, Figure 11's points; ``by_n`` / ``by_k`` where it is
absent) with ``nback.fit_n`` / ``fit_k`` (``slope``, ``intercept``, ``residual_std``; a
least-squares line over the points where they are absent).

Layout follows the paper: a Human row (from an optional file in the same shape), a Random row
(25 % for four-option questions, 50 % intrusion), then each system; a blind run (task metadata
``m3kit_blind``) is labelled ``<model> (blind)`` and sits right after its full run. Every figure's
plotted numbers are also written beside its PNG as JSON (``fig*.json``), and returned by the
``figure*_data`` functions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from m3kit.benchmarks.m3eval.score import (
    RANDOM_ACCURACY,
    RANDOM_BINARY_ACCURACY,
    RANDOM_INTRUSION_RATE,
    STORYLINE,
)
from m3kit.schema.evallog import BLIND_KEY, MEMORY_NAME_KEY, LoggedRun
from m3kit.schema.report import DeltaCell, ReportSection, Table

__all__ = [
    "BENCHMARK",
    "FigureData",
    "Series",
    "draw_figure",
    "figure8_data",
    "figure9_data",
    "figure10_data",
    "figure11_data",
    "m3eval_sections",
    "ordered_systems",
    "run_system",
    "scores_from_runs",
    "sections",
    "system_label",
    "table1",
    "table2",
    "table3",
]

BENCHMARK = "m3eval"
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
                                     for s, p, d in zip(swapped, plain, given)]])
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


# -- figures: the data ------------------------------------------------------------------------


class Series(BaseModel):
    """One system's plotted values: bars at ``x`` categories, or points with a fitted line."""

    label: str
    x: list[Any]
    y: list[float | None]
    slope: float | None = None
    intercept: float | None = None
    std: float | None = None
    fit_source: str = ""


class FigureData(BaseModel):
    """What a figure shows, independent of its pixels."""

    name: str
    title: str
    kind: str  # "bars" (x = categories, one bar group per category) or "fit"
    xlabel: str
    ylabel: str = "Accuracy (%)"
    baseline: float | None = None
    baseline_label: str = RANDOM
    series: list[Series] = Field(default_factory=list)
    panels: list[FigureData] = Field(default_factory=list)

    def series_by_label(self) -> dict[str, Series]:
        return {s.label: s for s in self.series}


def _systems_with_human(scores_by_system: Mapping[str, Mapping[str, Any]],
                        humans: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    out = [(HUMAN, humans)] if humans is not None else []
    return out + [(n, scores_by_system[n]) for n in ordered_systems(list(scores_by_system))]


def _bars(name: str, title: str, xlabel: str, categories: Sequence[str], baseline: float,
          values: list[tuple[str, list[float | None]]]) -> FigureData:
    series = [Series(label=label, x=list(categories), y=y) for label, y in values
              if any(v is not None for v in y)]
    return FigureData(name=name, title=title, kind="bars", xlabel=xlabel, baseline=baseline,
                      series=series)


def figure8_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                 humans: Mapping[str, Any] | None = None) -> FigureData:
    """Figure 8: accuracy on V1 questions without repetition and repeating target or
    interferer."""
    values = [(label, [_num(_get(s, "memory_interference", c, "accuracy")) for c in REPETITION])
              for label, s in _systems_with_human(scores_by_system, humans)
              # only runs of a repetition probe: retroactive alone is Table 2's
              if any(_get(s, "memory_interference", c) is not None for c in REPETITION[1:])]
    return _bars("fig8_repetition", "Figure 8: Video repetition under interference",
                 "Video order (questions about V1)", REPETITION_NAMES, RANDOM_ACCURACY, values)


def figure9_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                 humans: Mapping[str, Any] | None = None) -> FigureData:
    """Figure 9: spatial (split screen with swaps) vs temporal (interleaved) source grounding."""
    values = [(label, [_num(_get(s, "divided_attention", "spatial_source_grounding")),
                       _num(_get(s, "interleaved", "temporal_source_grounding"))])
              for label, s in _systems_with_human(scores_by_system, humans)]
    return _bars("fig9_source_grounding", "Figure 9: Spatial vs temporal source grounding",
                 "Source dimension", ("Spatial", "Temporal"), RANDOM_BINARY_ACCURACY, values)


def figure10_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                  humans: Mapping[str, Any] | None = None) -> FigureData:
    """Figure 10: N-back accuracy per attribute (scene, action), over all N and K."""
    values = [(label, [_num(_get(s, "nback", "by_attribute", a)) for a in ATTRIBUTES])
              for label, s in _systems_with_human(scores_by_system, humans)]
    return _bars("fig10_nback_attribute", "Figure 10: N-back accuracy by attribute",
                 "Attribute", ("Scene", "Action"), RANDOM_BINARY_ACCURACY, values)


def _points(nback: Mapping[str, Any], knob: str) -> tuple[list[float], list[float]]:
    """Points of one knob: one per (K, N) setting where ``by_k_n`` is given (as the paper
    plots), else one per value of the knob."""
    by_k_n = nback.get("by_k_n")
    xs: list[float] = []
    ys: list[float] = []
    if isinstance(by_k_n, Mapping) and by_k_n:
        for key, acc in by_k_n.items():
            # "K=4,N=2"
            parts = dict(p.split("=", 1) for p in str(key).replace(" ", "").split(",") if "=" in p)
            if _num(acc) is not None and knob.upper() in parts:
                xs.append(float(parts[knob.upper()]))
                ys.append(float(acc))
    else:
        for key, acc in (_get(nback, f"by_{knob}") or {}).items():
            if _num(acc) is not None:
                xs.append(float(key))
                ys.append(float(acc))
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    return [xs[i] for i in order], [ys[i] for i in order]


def _fit_series(label: str, nback: Mapping[str, Any], knob: str) -> Series | None:
    from m3kit.metrics.fits import least_squares_line

    xs, ys = _points(nback, knob)
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
    return Series(label=label, x=xs, y=ys, slope=slope, intercept=intercept, std=std,
                  fit_source=source)


def figure11_data(scores_by_system: Mapping[str, Mapping[str, Any]],
                  humans: Mapping[str, Any] | None = None) -> FigureData:
    """Figure 11: N-back accuracy against N and against K, each system's points with its
    least-squares line and a ±1 std band (the residuals' standard deviation) around it."""
    panels = []
    for knob, xlabel in (("n", "N (lag)"), ("k", "K (sequence length)")):
        series = []
        for label, scores in _systems_with_human(scores_by_system, humans):
            nback = _get(scores, "nback")
            if isinstance(nback, Mapping):
                one = _fit_series(label, nback, knob)
                if one is not None:
                    series.append(one)
        panels.append(FigureData(name=f"fig11_{knob}", title=f"Accuracy vs {knob.upper()}",
                                 kind="fit", xlabel=xlabel, baseline=RANDOM_BINARY_ACCURACY,
                                 series=series))
    return FigureData(name="fig11_nback_n_k", title="Figure 11: Effects of N and K on accuracy",
                      kind="panels", xlabel="", panels=panels,
                      series=[s for p in panels for s in p.series])


# -- figures: the pixels ----------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: never a display, whatever the user's default backend
    import matplotlib.pyplot as plt

    return plt


def _draw_bars(ax: Any, data: FigureData) -> None:
    n = max(len(data.series), 1)
    width = 0.8 / n
    categories = data.series[0].x if data.series else []
    for i, series in enumerate(data.series):
        xs = [j + (i - (n - 1) / 2) * width for j in range(len(categories))]
        ys = [float("nan") if v is None else v for v in series.y]
        ax.bar(xs, ys, width=width, label=series.label)
    ax.set_xticks(range(len(categories)), categories)


def _draw_fit(ax: Any, data: FigureData, colors: list[str]) -> None:
    import numpy as np

    for i, series in enumerate(data.series):
        color = colors[i % len(colors)]
        ax.scatter(series.x, series.y, color=color, s=18, label=series.label)
        if series.slope is None or series.intercept is None:
            continue
        lo, hi = (min(series.x), max(series.x)) if series.x else (0.0, 1.0)
        grid = np.linspace(lo, hi, 20)
        line = series.slope * grid + series.intercept
        ax.plot(grid, line, color=color, linewidth=1.5)
        if series.std:
            ax.fill_between(grid, line - series.std, line + series.std, color=color,
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
    plt = _pyplot()
    panels = data.panels or [data]
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.2), squeeze=False)
    colors = [c["color"] for c in plt.rcParams["axes.prop_cycle"]]
    for ax, panel in zip(axes[0], panels):
        if panel.kind == "bars":
            _draw_bars(ax, panel)
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
    plt = _pyplot()
    fig = draw_figure(data)
    name = f"{data.name}.png"
    fig.savefig(out_dir / name, dpi=110)
    plt.close(fig)
    (out_dir / f"{data.name}.json").write_text(data.model_dump_json(indent=1), encoding="utf-8")
    return name


# -- sections ---------------------------------------------------------------------------------


def m3eval_sections(scores_by_system: Mapping[str, Mapping[str, Any]], out_dir: str | Path,
                    humans: Mapping[str, Any] | None = None) -> list[ReportSection]:
    """The paper's Tables 1–3 and Figures 8–11 for ``scores_by_system`` (system label → score
    dict), figures written into ``out_dir``; a figure with nothing to plot is left out with a
    note saying what it needs."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figures: list[tuple[str, FigureData, str]] = [
        ("Memory Interference", figure8_data(scores_by_system, humans),
         "Figure 8 needs runs of the repetition variants ([V1, V1, V2] and [V1, V2, V2])."),
        ("Interleaved Events", figure9_data(scores_by_system, humans),
         "Figure 9 needs split-screen and interleaved source-memory questions."),
        ("N-Back", figure10_data(scores_by_system, humans),
         "Figure 10 needs N-back answers with their attribute."),
        ("N-Back", figure11_data(scores_by_system, humans),
         "Figure 11 needs N-back accuracy by N and K."),
    ]
    sections = {
        "Divided Attention": ReportSection(benchmark=BENCHMARK,
                                           title="M3Eval · Divided Attention",
                                           tables=[table1(scores_by_system, humans)]),
        "Memory Interference": ReportSection(benchmark=BENCHMARK,
                                             title="M3Eval · Memory Interference",
                                             tables=[table2(scores_by_system, humans)]),
        "Interleaved Events": ReportSection(benchmark=BENCHMARK,
                                            title="M3Eval · Interleaved Events",
                                            tables=[table3(scores_by_system, humans)]),
        "N-Back": ReportSection(benchmark=BENCHMARK, title="M3Eval · N-Back"),
    }
    for key, data, missing in figures:
        if data.series:
            sections[key].figures.append(render_figure(data, out))
        else:
            sections[key].notes.append(missing)
    counts = ReportSection(benchmark=BENCHMARK, title="M3Eval · Answers counted",
                           tables=[counts_table(scores_by_system)],
                           notes=[CHANCE_NOTE])
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


def sections(runs: Sequence[LoggedRun], out_dir: Path, *,
             cards: Mapping[str, Mapping[str, Any]] | None = None,
             humans: Mapping[str, Any] | None = None) -> list[ReportSection]:
    """The report contract: M3Eval's tables and figures from pooled runs and score files
    (``cards``: system -> the JSON of ``m3kit score m3eval --json``), with the human reference
    row when ``humans`` is given."""
    from m3kit.errors import M3kitError

    scores = scores_from_runs(runs)
    for name, data in (cards or {}).items():
        if name in scores:
            raise M3kitError(f"a score file and an eval log both name the system {name!r}",
                             field="system")
        scores[name] = dict(data)
    return [*m3eval_sections(scores, out_dir, humans=humans), *interval_sections(runs)]


def interval_sections(runs: Sequence[LoggedRun]) -> list[ReportSection]:
    """The headline numbers of the logged systems as ``value [lo, hi]`` (score files carry no
    items to resample)."""
    from m3kit.benchmarks.intervals import interval_table
    from m3kit.benchmarks.m3eval import BENCHMARK as DECLARED

    table = interval_table(DECLARED, runs, run_system)
    if table is None:
        return []
    return [ReportSection(benchmark=BENCHMARK, title="M3Eval · Confidence intervals",
                          tables=[table])]
