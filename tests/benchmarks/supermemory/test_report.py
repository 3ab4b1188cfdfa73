"""The report's tables from score cards (a score file is a system of its own) and appendix E's
statistics, by hand on ``conftest.default_records``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.protocol import ReportContext
from m3kit.benchmarks.supermemory import BENCHMARK
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.report import sections
from m3kit.benchmarks.supermemory.score import score_predictions
from m3kit.benchmarks.supermemory.stats import dataset_stats
from m3kit.report.build import build_report

from .conftest import write_release


@pytest.fixture
def qa_json(tmp_path: Path) -> Path:
    return write_release(tmp_path / "r", videos=False) / "data" / "json" / "all_qa.json"


def test_appendix_e_statistics_by_hand(qa_json: Path) -> None:
    stats = dataset_stats(load_supermemory(qa_json).questions)
    assert (stats.n, stats.n_persons, stats.n_videos) == (4, 2, 4)
    assert stats.answerable == 75.0
    # gaps: q1 10 - 4 = 6 s; q3 16 - 2 = 14 s; q4 (day 2, 12 s) - (day 2, 3 s) = 9 s; q2 none
    assert stats.gap_seconds_median == 9.0
    assert stats.gap_buckets["< 1 min"] == 3 and sum(stats.gap_buckets.values()) == 3
    assert stats.evidence_count == {"1": 2, "2": 1}
    assert stats.evidence_seconds_median == 2.0  # q1 2 s, q3 1 s, q4 2 + 2 s
    assert stats.by_skill["intent_recall"].evidence_count_mean == 2.0
    assert stats.by_skill["conversational_memory"].answerable == 0.0
    assert stats.by_skill["visual_recall"].share == 25.0


def test_a_score_file_is_a_system_of_its_own(qa_json: Path, tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"question_id": q, "ranking": [g]}) + "\n"
                             for q, g in ((1, 0), (2, 3), (3, 1), (4, 1))))
    card = score_predictions(qa_json, preds).score_json()
    [section] = sections(ReportContext(benchmark=BENCHMARK, runs=[], out_dir=tmp_path,
                                      cards={"my-model": card}))
    main = section.tables[0]
    assert main.header_groups == [("", 1), ("score file", 4)]  # the Model column, then groups
    # answerable positive: q1 TP, q2 TN, q3 FN (abstained), q4 TP -> 4 / 5
    assert main.rows == [["my-model", pytest.approx(100 * 4 / 5), 75.0,
                          pytest.approx(100 * (3 + 13 / 36) / 4), 4]]
    vague = next(t for t in section.tables if "Table 5" in t.title)
    assert vague.rows[0][1].value == 75.0 and vague.rows[0][1].delta == 0.0
    group = next(t for t in section.tables if "Table 4" in t.title)
    assert group.rows[0][1] == "75.0 ± 50.0 (4)"  # videos: [100, 100, 0, 100]
    # every group row covers the columns exactly, so no value sits under another's group
    for table in section.tables:
        if table.header_groups:
            assert sum(span for _, span in table.header_groups) == len(table.columns), table.title
    # and through m3kit report, from the file
    scored = tmp_path / "my-model.json"
    scored.write_text(json.dumps(card))
    index = build_report([scored], tmp_path / "html")
    assert "Table 2" in index.read_text()


def test_excluded_questions_are_counted_per_skill_and_named(make_release, tmp_path: Path
                                                            ) -> None:
    """A real run in which question 3's video (P2_D1, person 2's only session) cannot be read
    when it is answered: excluded, never scored, and counted where its skill is shown."""
    import inspect_ai

    from m3kit.benchmarks import benchmark_named
    from m3kit.benchmarks.supermemory.score import scores_from_log, summary_rows
    from m3kit.benchmarks.supermemory.task import supermemory
    from m3kit.report.inputs import pooled_runs
    from m3kit.report.logs import read_samples

    root = make_release()
    task = supermemory(data=str(root), cache=False)  # loaded while the video is there
    (root / "data" / "video" / "Person_2" / "P2_D1.mp4").unlink()
    (log,) = inspect_ai.eval(task, model="m3kit/builtin", model_args={"ocr": False},
                             log_dir=str(tmp_path / "logs"), display="none")
    samples = read_samples(log)
    assert [s.id for s in samples if s.excluded] == ["3"]
    card = scores_from_log(samples)
    assert (card.n, card.n_excluded, card.n_failed) == (3, 1, 0)
    assert "visual_recall" not in card.by_skill  # its one question is the excluded one
    columns, rows = summary_rows(samples)
    by_skill = {row[0]: dict(zip(columns, row, strict=True)) for row in rows}
    assert (by_skill["all"]["n"], by_skill["all"]["excluded"]) == ("3", "1")
    # the skill is still shown: 0 scored, 1 excluded, no accuracy
    assert (by_skill["visual recall"]["n"], by_skill["visual recall"]["Acc"],
            by_skill["visual recall"]["excluded"]) == ("0", "—", "1")
    assert by_skill["intent recall"]["excluded"] == ""
    (section,) = sections(ReportContext(
        benchmark=BENCHMARK, runs=pooled_runs(benchmark_named("supermemory"), [log]),
        out_dir=tmp_path))
    assert section.tables[0].rows[0][-1] == 3  # Table 2's n: the scored questions
    assert ("m3kit/builtin · direct (32 frames): 1 of 4 question(s) excluded, their media "
            "unreadable, and left out of every number (n is the rest): 3.") in section.notes


def test_figures_draw_the_intervals_of_their_table(make_release, records, tmp_path: Path
                                                   ) -> None:
    """A real run over two persons: the skill figure's and the answerability figure's error
    bars are the intervals of the report's table of the figures' numbers, which resample
    persons over the figures' own numbers (each equal to the score card's)."""
    import inspect_ai
    import matplotlib.pyplot as plt
    from matplotlib.container import ErrorbarContainer

    from m3kit.benchmarks import benchmark_named
    from m3kit.benchmarks.supermemory.report import (
        _systems,
        draw_answerability_figure,
        draw_skill_figure,
    )
    from m3kit.benchmarks.supermemory.task import supermemory
    from m3kit.report.inputs import pooled_runs

    from .conftest import DAY, KETTLE, KETTLE_TYPES, T0, record

    # a second person for the kettle's skill, so it rests on two persons
    records.append(record(5, 2, "P2_D1", T0 + 0.5 * DAY, skill="object_location_memory",
                          choices=KETTLE, types=KETTLE_TYPES, gold=0, answerable=True,
                          span=(15.0, 16.0)))
    root = make_release(records)
    (log,) = inspect_ai.eval(supermemory(data=str(root), cache=False), model="m3kit/builtin",
                             model_args={"ocr": False}, log_dir=str(tmp_path / "logs"),
                             display="none")
    runs = pooled_runs(benchmark_named("supermemory"), [log])
    (section,) = sections(ReportContext(benchmark=BENCHMARK, runs=runs, out_dir=tmp_path))
    table = next(t for t in section.tables if t.title.startswith("SuperMemory-VQA figures'"))
    cells = {row[0]: row[1] for row in table.rows}
    assert "Acc · object_location_memory" in cells and "answerable: correct" in cells
    assert cells["Acc · object_location_memory"].endswith("(2 units)")
    assert any(note.startswith("Error bars:") for note in section.notes)
    (system,) = _systems(BENCHMARK, runs)

    def bars(fig) -> list[tuple[float, float]]:
        out = []
        for container in fig.axes[0].containers:
            if isinstance(container, ErrorbarContainer):
                (lines,) = container.lines[2]
                # vertical bars run along y, horizontal ones along x; a value without an
                # interval has no segment
                out += [tuple(sorted((float(a), float(b)))) for a, b in
                        ((s[0][1], s[1][1]) if s[0][0] == s[1][0] else (s[0][0], s[1][0])
                         for s in lines.get_segments() if len(s))]
        return out

    def bounds(name: str) -> tuple[float, float]:
        found = system.intervals[name]
        assert cells[name].startswith(found.text(".1f"))  # the table's interval
        return found.lo, found.hi

    fig = draw_skill_figure([system])
    try:
        skill = bounds("Acc · object_location_memory")
        assert skill in bars(fig)
    finally:
        plt.close(fig)
    fig = draw_answerability_figure([system])
    try:
        assert bounds("answerable: correct") in bars(fig)
    finally:
        plt.close(fig)
