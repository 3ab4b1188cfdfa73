"""The report's tables from score cards (a score file is a system of its own) and appendix E's
statistics, by hand on ``conftest.default_records``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
    [section] = sections([], tmp_path, cards={"my-model": card})
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
