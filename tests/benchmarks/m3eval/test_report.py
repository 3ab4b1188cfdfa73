"""M3Eval's paper tables and figures from score dicts: cells equal the inputs, Δs and fits are
hand-computed, figures are real PNGs whose plotted data is what the scores say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks.m3eval.report import (
    figure8_data,
    figure9_data,
    figure10_data,
    figure11_data,
    ordered_systems,
    paper_sections,
    system_label,
    table1,
    table2,
    table3,
)
from m3kit.report.html import write_report
from m3kit.schema.report import DeltaCell, cell_text

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def scores(offset: float = 0.0, **overrides: Any) -> dict[str, Any]:
    """A complete score dict in the shape of ``m3kit score m3eval --json`` (percent)."""
    out: dict[str, Any] = {
        "divided_attention": {
            "no_swap": {"source_identification": 62.5 + offset, "order_understanding": 52.5,
                        "content_retention": 49.02},
            "swap": {"source_identification": 37.5 + offset, "order_understanding": 52.5,
                     "content_retention": 56.86},
            "spatial_source_grounding": 70.0 + offset,
        },
        "memory_interference": {
            "proactive": {"accuracy": 63.64, "intrusion_rate": 23.64},
            "retroactive": {"accuracy": 54.55, "intrusion_rate": 30.91},
            "delta": {"accuracy": 9.09, "intrusion_rate": -7.27},
        },
        "interleaved": {"source_identification": 43.04, "order_understanding": 50.0,
                        "content_retention": 49.09, "false_memory_discrimination": 26.32,
                        "temporal_source_grounding": 40.0 + offset},
        "nback": {"accuracy": 60.0, "by_attribute": {"scene": 55.0, "action": 65.0 + offset},
                  "by_n": {"1": 60.0, "2": 62.0, "3": 58.0},
                  "by_k": {"3": 70.0, "5": 60.0, "7": 50.0},
                  "fit_n": {"slope": -1.0, "intercept": 62.0},
                  "fit_k": {"slope": -5.0, "intercept": 85.0}},
        "n_invalid": 3,
        "n_excluded": 1,
    }
    out.update(overrides)
    return out


HUMANS = {
    "divided_attention": {
        "no_swap": {"source_identification": 89.58, "order_understanding": 90.0,
                    "content_retention": 92.16},
        "swap": {"source_identification": 81.25, "order_understanding": 85.0,
                 "content_retention": 86.27},
    },
    # no "delta": the report computes proactive − retroactive itself
    "memory_interference": {"proactive": {"accuracy": 94.55, "intrusion_rate": 3.64},
                            "retroactive": {"accuracy": 74.55, "intrusion_rate": 20.0}},
}


def test_system_labels_and_blind_runs_beside_their_full_runs():
    assert system_label("openai/gpt") == "openai/gpt"
    assert system_label("m3kit/builtin", "rag") == "m3kit/builtin + rag"
    assert system_label("m3kit/builtin", "none", blind=True) == "m3kit/builtin (blind)"
    # first seen order of the models, each blind run right after its full run
    assert ordered_systems(["b (blind)", "a", "b", "a (blind)", "c"]) == [
        "b", "b (blind)", "a", "a (blind)", "c"]


def test_table1_cells_are_the_scores_with_swap_minus_no_swap():
    table = table1({"gpt (blind)": scores(offset=-10.0), "gpt": scores()}, HUMANS)
    assert [row[0] for row in table.rows] == ["Human", "Random", "gpt", "gpt (blind)"]
    human, random, gpt, blind = table.rows
    assert human[1:4] == [89.58, 90.0, 92.16]
    # 81.25 − 89.58 = −8.33; 85.00 − 90.00 = −5.00; 86.27 − 92.16 = −5.89 (the paper's Human row)
    assert [c.value for c in human[4:]] == [81.25, 85.0, 86.27]
    assert [round(c.delta, 2) for c in human[4:]] == [-8.33, -5.0, -5.89]
    assert random[1:4] == [25.0, 25.0, 25.0]
    assert random[4:] == [DeltaCell(value=25.0, delta=0.0)] * 3
    assert gpt[1:4] == [62.5, 52.5, 49.02]
    # 37.5 − 62.5 = −25; 52.5 − 52.5 = 0; 56.86 − 49.02 = +7.84
    assert gpt[4] == DeltaCell(value=37.5, delta=-25.0)
    assert [table.cell(c) for c in gpt[4:]] == ["37.50 (-25.00)", "52.50 (0.00)", "56.86 (+7.84)"]
    assert blind[1] == 52.5 and blind[4] == DeltaCell(value=27.5, delta=-25.0)
    assert table.header_groups == [("", 1), ("No swapping", 3), ("Swapping", 3)]
    # a delta the scores carry (computed before rounding) is shown as given
    given = scores()
    given["divided_attention"]["delta"] = {"source_identification": -24.9999,
                                           "order_understanding": 0.0,
                                           "content_retention": 7.84}
    assert table1({"m": given}).rows[1][4] == DeltaCell(value=37.5, delta=-24.9999)


def test_table2_uses_given_delta_and_computes_a_missing_one():
    table = table2({"gpt": scores()}, HUMANS)
    human, random, gpt = table.rows
    # Human: 94.55 − 74.55 = 20.00 accuracy; 3.64 − 20.00 = −16.36 intrusion (the paper's row)
    assert human[:3] == ["Human", 94.55, 74.55]
    assert human[3] == pytest.approx(20.0)
    assert human[4:6] == [3.64, 20.0] and human[6] == pytest.approx(-16.36)
    assert random == ["Random", 25.0, 25.0, 0.0, 50.0, 50.0, 0.0]
    assert gpt == ["gpt", 63.64, 54.55, 9.09, 23.64, 30.91, -7.27]
    assert table.header_groups[1:] == [("Accuracy (%, ↑)", 3), ("Intrusion Rate (%, ↓)", 3)]


def test_table3_and_missing_values():
    partial = {"interleaved": {"source_identification": 20.0}}
    table = table3({"gpt": scores(), "tiny": partial})
    assert table.rows[0] == ["Random", 25.0, 25.0, 25.0, 25.0]
    assert table.rows[1] == ["gpt", 43.04, 50.0, 49.09, 26.32]
    assert table.rows[2] == ["tiny", 20.0, None, None, None]
    assert [table.cell(c) for c in table.rows[2]] == ["tiny", "20.00", "—", "—", "—"]
    # No human file: no Human row in any table
    assert [r[0] for r in table1({"tiny": partial}).rows] == ["Random", "tiny"]
    assert cell_text(DeltaCell(value=None, delta=None)) == "—"


def test_bar_figures_plot_the_scores():
    by_system = {"gpt": scores(), "gpt (blind)": scores(offset=-10.0)}
    fig9 = figure9_data(by_system).series_by_label()
    assert fig9["gpt"].x == ["Spatial", "Temporal"]
    assert fig9["gpt"].y == [70.0, 40.0] and fig9["gpt (blind)"].y == [60.0, 30.0]
    fig10 = figure10_data(by_system, HUMANS)
    # the human file has no N-back scores: no Human bars; chance of Yes/No is 50 %
    assert [s.label for s in fig10.series] == ["gpt", "gpt (blind)"]
    assert fig10.series[0].y == [55.0, 65.0] and fig10.baseline == 50.0
    with_rep = scores()
    with_rep["memory_interference"]["repeat_target"] = {"accuracy": 60.0, "intrusion_rate": 9.0}
    with_rep["memory_interference"]["repeat_interferer"] = {"accuracy": 58.0,
                                                            "intrusion_rate": 12.0}
    fig8 = figure8_data({"gpt": with_rep, "other": scores()})
    # only systems with repetition runs get bars; [V1, V2] is the retroactive accuracy
    assert [(s.label, s.y) for s in fig8.series] == [("gpt", [54.55, 60.0, 58.0])]
    assert fig8.series[0].x == ["[V1, V2]", "[V1, V1, V2]", "[V1, V2, V2]"]


def test_figure11_draws_given_fits_or_least_squares_over_the_points():
    no_fit = scores()
    del no_fit["nback"]["fit_n"]
    fig = figure11_data({"given": scores(), "fitted": no_fit})
    n_panel, k_panel = fig.panels
    given, fitted = n_panel.series_by_label()["given"], n_panel.series_by_label()["fitted"]
    assert given.x == [1.0, 2.0, 3.0] and given.y == [60.0, 62.0, 58.0]
    assert (given.slope, given.intercept, given.fit_source) == (-1.0, 62.0, "scores")
    # least squares over (1, 60), (2, 62), (3, 58): x̄ = 2, ȳ = 60,
    # slope = ((−1)(0) + (0)(2) + (1)(−2)) / ((−1)² + 0² + 1²) = −1, intercept = 60 + 2 = 62;
    # residuals −1, +2, −1 → residual std = √((1 + 4 + 1) / (3 − 2)) = √6
    assert fitted.slope == pytest.approx(-1.0) and fitted.intercept == pytest.approx(62.0)
    assert fitted.fit_source == "points" and fitted.std == pytest.approx(6 ** 0.5)
    k = k_panel.series_by_label()["given"]
    assert k.x == [3.0, 5.0, 7.0] and (k.slope, k.intercept) == (-5.0, 85.0)
    assert k.std is None  # the given fit has no residual_std: no band
    s = scores()
    s["nback"]["fit_k"]["residual_std"] = 1.5
    assert figure11_data({"m": s}).panels[1].series[0].std == 1.5


def test_figure11_points_per_k_n_setting_when_given():
    s = scores()
    s["nback"] = {"by_k_n": {"K=3,N=1": 80.0, "K=3,N=2": 60.0, "K=4,N=1": 50.0,
                             "K=4,N=2": 70.0}}
    n_panel, k_panel = figure11_data({"m": s}).panels
    [n_series], [k_series] = n_panel.series, k_panel.series
    assert sorted(zip(n_series.x, n_series.y, strict=True)) == [(1.0, 50.0), (1.0, 80.0),
                                                                (2.0, 60.0), (2.0, 70.0)]
    # N: x̄ = 1.5, ȳ = 65; slope = ((−.5)(15) + (−.5)(−15) + (.5)(−5) + (.5)(5)) / 1 = 0
    assert n_series.slope == pytest.approx(0.0) and n_series.intercept == pytest.approx(65.0)
    # K: K=3 → 80, 60; K=4 → 50, 70; slope = ((−.5)(15) + (−.5)(−5) + (.5)(−15) + (.5)(5)) = −10
    assert k_series.slope == pytest.approx(-10.0)
    assert k_series.intercept == pytest.approx(65.0 + 10.0 * 3.5)


def test_sections_write_valid_pngs_with_their_data(tmp_path: Path):
    with_rep = scores()
    with_rep["memory_interference"]["repeat_target"] = {"accuracy": 60.0, "intrusion_rate": 9.0}
    sections = paper_sections({"gpt": with_rep, "gpt (blind)": scores(offset=-10.0)}, tmp_path,
                              humans=HUMANS)
    figures = [f for s in sections for f in s.figures]
    assert figures == ["fig8_repetition.png", "fig9_source_grounding.png",
                       "fig10_nback_attribute.png", "fig11_nback_n_k.png"]
    import matplotlib.image

    for name in figures:
        assert (tmp_path / name).read_bytes()[:8] == PNG_MAGIC
        height, width = matplotlib.image.imread(tmp_path / name).shape[:2]
        assert height > 100 and width > 100
    plotted = json.loads((tmp_path / "fig9_source_grounding.json").read_text())
    assert [(s["label"], s["y"]) for s in plotted["series"]] == [("gpt", [70.0, 40.0]),
                                                                  ("gpt (blind)", [60.0, 30.0])]
    index = write_report(sections, tmp_path, title="M3Eval")
    page = index.read_text()
    assert "Table 1: Divided Attention" in page and "colspan='3'>No swapping<" in page
    assert "37.50 (-25.00)" in page and "gpt (blind)" in page
    assert all(f"src='{name}'" in page for name in figures)
    markdown = (tmp_path / "tables.md").read_text()
    assert "| gpt | 63.64 | 54.55 | 9.09 | 23.64 | 30.91 | -7.27 |" in markdown


def test_figures_without_data_are_left_out_with_a_note(tmp_path: Path):
    only_tables = {"interleaved": {"source_identification": 30.0}}
    sections = paper_sections({"m": only_tables}, tmp_path)
    assert [f for s in sections for f in s.figures] == []
    notes = " ".join(n for s in sections for n in s.notes)
    assert "Figure 8 needs" in notes and "Figure 11 needs" in notes
    assert not list(tmp_path.glob("*.png"))


def test_figure11_ticks_are_whole_numbers_even_for_a_single_n_or_k():
    """One N (2) and one K (5) setting: ticks at 2 and 5 only, never 1.875, 1.9, ..."""
    import matplotlib.pyplot as plt

    from m3kit.benchmarks.m3eval.report import draw_figure

    s = scores()
    s["nback"] = {"by_k_n": {"K=5,N=2": 70.0}}
    fig = draw_figure(figure11_data({"m": s}))
    try:
        n_axes, k_axes = fig.axes
        for axes, value in ((n_axes, 2), (k_axes, 5)):
            axes.figure.canvas.draw()
            assert list(axes.get_xticks()) == [value]
            assert [t.get_text() for t in axes.get_xticklabels()] == [str(value)]
            assert axes.get_xlim() == (value - 0.5, value + 0.5)
    finally:
        plt.close(fig)
    # several settings: one tick per setting run (N = 1, 2, 3)
    fig = draw_figure(figure11_data({"m": scores()}))
    try:
        assert list(fig.axes[0].get_xticks()) == [1, 2, 3]
    finally:
        plt.close(fig)


def test_excluded_questions_are_named_with_the_cells_they_leave(tmp_path: Path):
    from m3kit.benchmarks.m3eval.report import excluded_notes

    cells = {"divided_attention · no_swap · order_understanding": ["ss-11"],
             "divided_attention · spatial_source_grounding": ["ss-10"]}
    by_system = {"m": scores(n_excluded=2, excluded_by_cell=cells),
                 "old score file": scores(),  # 1 excluded, no breakdown recorded
                 "clean": scores(n_excluded=0)}
    assert excluded_notes(by_system) == [
        ("m: 2 question(s) excluded, their media unreadable, and left out of every rate: "
         "divided_attention · no_swap · order_understanding (ss-11); "
         "divided_attention · spatial_source_grounding (ss-10)."),
        ("old score file: 1 question(s) excluded, their media unreadable, and left out of "
         "every rate.")]
    counted = paper_sections(by_system, tmp_path)[-1]
    assert counted.title == "M3Eval · Answers counted"
    assert counted.notes[1:] == excluded_notes(by_system)


def _error_bars(axes: Any) -> list[list[tuple[float, float, float]]]:
    """Per error-bar container of ``axes``, its bars as (x, low end, high end)."""
    from matplotlib.container import ErrorbarContainer

    out = []
    for container in axes.containers:
        if isinstance(container, ErrorbarContainer):
            (bars,) = container.lines[2]
            out.append([(float(seg[0][0]), float(seg[0][1]), float(seg[1][1]))
                        for seg in bars.get_segments()])
    return out


def test_figures_draw_error_bars_from_the_intervals():
    """The error bars are the intervals given (the tables'), for the systems that have them:
    the human reference and a system without items (a score file) have none."""
    import matplotlib.pyplot as plt

    from m3kit.benchmarks.m3eval.report import attribute_number, draw_figure
    from m3kit.metrics.bootstrap import Interval

    def interval(value: float, lo: float, hi: float) -> Interval:
        return Interval(value=value, lo=lo, hi=hi, n_units=12)

    intervals = {"gpt": {"spatial_source_grounding": interval(70.0, 61.0, 79.0),
                         "temporal_source_grounding": interval(40.0, 30.0, 55.0),
                         attribute_number("scene"): interval(55.0, 45.0, 66.0),
                         attribute_number("action"): interval(65.0, 52.0, 71.0)}}
    by_system = {"gpt": scores(), "score file": scores(offset=-10.0)}
    fig9 = figure9_data(by_system, HUMANS, intervals)
    gpt = fig9.series_by_label()["gpt"]
    assert (gpt.lo, gpt.hi) == ([61.0, 30.0], [79.0, 55.0])
    assert fig9.series_by_label()["score file"].lo == []
    for data, expected in ((fig9, [(61.0, 79.0), (30.0, 55.0)]),
                           (figure10_data(by_system, HUMANS, intervals),
                            [(45.0, 66.0), (52.0, 71.0)])):
        fig = draw_figure(data)
        try:
            (bars,) = _error_bars(fig.axes[0])  # gpt's only
            assert [(lo, hi) for _, lo, hi in bars] == expected
            # at gpt's bars: the first of the two systems, left of each category's centre
            assert all(x < category for (x, _, _), category in zip(bars, (0, 1), strict=True))
        finally:
            plt.close(fig)


def test_figure11_draws_no_line_through_two_values_and_shows_coinciding_series():
    """Two N values: no least-squares line (the legend says so); two systems with the same
    points: both visible (apart, each its marker), the legend naming the one they match."""
    import matplotlib.pyplot as plt

    from m3kit.benchmarks.m3eval.report import draw_figure, setting_number
    from m3kit.metrics.bootstrap import Interval

    s = scores()
    s["nback"] = {"by_k_n": {"K=3,N=1": 60.0, "K=3,N=2": 70.0},
                  "fit_n": {"slope": 10.0, "intercept": 50.0}}
    intervals = {name: {setting_number("K=3,N=1"): Interval(value=60.0, lo=40.0, hi=80.0,
                                                            n_units=8),
                        setting_number("K=3,N=2"): Interval(value=70.0, lo=50.0, hi=85.0,
                                                            n_units=8)}
                 for name in ("rag", "none")}
    data = figure11_data({"none": s, "rag": s}, intervals=intervals)
    n_panel = data.panels[0]
    none, rag = n_panel.series
    assert not none.line and not rag.line and none.slope == 10.0  # the score's fit, kept
    assert (none.same_as, rag.same_as) == ("", "none")
    assert rag.legend("N") == "rag (same points as none; no line: 2 N values)"
    fig = draw_figure(data)
    try:
        axes = fig.axes[0]
        # no fitted line (drawn over 20 points): only chance's and the bars' caps
        assert 20 not in [len(line.get_xdata()) for line in axes.get_lines()]
        labels = [t.get_text() for t in axes.get_legend().get_texts()]
        assert "rag (same points as none; no line: 2 N values)" in labels
        # the two series' markers side by side, not on top of each other
        xs = [sorted(float(x) for x, _ in c.get_offsets()) for c in axes.collections
              if c.get_offsets().shape[0] == 2]
        assert len(xs) == 2 and xs[0] != xs[1]
        assert all(abs(a - b) < 0.25 for a, b in zip(xs[0], xs[1], strict=True))
        assert len({c.get_paths()[0].vertices.tobytes() for c in axes.collections
                    if c.get_offsets().shape[0] == 2}) == 2  # two markers
        # each system's error bars at its own markers
        bars = _error_bars(axes)
        assert [[(lo, hi) for _, lo, hi in b] for b in bars] == [[(40.0, 80.0), (50.0, 85.0)]] * 2
        assert [sorted(x for x, _, _ in b) for b in bars] == xs
    finally:
        plt.close(fig)
    # three N values: the line is drawn
    fig = draw_figure(figure11_data({"m": scores()}))
    try:
        assert 20 in [len(line.get_xdata()) for line in fig.axes[0].get_lines()]
    finally:
        plt.close(fig)
