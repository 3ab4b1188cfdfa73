"""Video-MME-v2's headline numbers from per-item records: the same values as the score card
(test_score.PREDICTIONS, hand-computed there), the group of 4 as the bootstrap's unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.videomme_v2 import BENCHMARK
from m3kit.benchmarks.videomme_v2.score import (
    cluster_of,
    headline,
    item_correct,
    items_from_predictions,
    score_predictions,
)

from .conftest import rows, write_table
from .test_score import EXPECTED, PREDICTIONS


@pytest.fixture
def scored(tmp_path: Path) -> tuple[Path, Path]:
    write_table(tmp_path / "test.parquet", rows())
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"question_id": k, "prediction": v}) + "\n"
                                   for k, v in PREDICTIONS.items()), encoding="utf-8")
    return tmp_path, predictions


def test_headline_equals_the_score_card(scored: tuple[Path, Path]) -> None:
    data, predictions = scored
    items = items_from_predictions(data, predictions)
    card = score_predictions(data, predictions)
    assert headline(items) == {"non_lin": card.total, "level_1": card.level_1,
                               "level_2": card.level_2, "level_3": card.level_3,
                               "avg_acc": card.avg_acc}
    assert headline(items)["non_lin"] == pytest.approx(EXPECTED["total"])  # 23.333
    assert sum(item_correct(i) for i in items) == 10  # avg_acc 62.5 = 10 of 16


def test_groups_are_the_unit_and_a_group_drawn_twice_counts_twice(
        scored: tuple[Path, Path]) -> None:
    data, predictions = scored
    items = items_from_predictions(data, predictions)
    assert [cluster_of(i) for i in items[:4]] == ["001"] * 4
    assert len({cluster_of(i) for i in items}) == 4
    groups = {g: [i for i in items if cluster_of(i) == g] for g in ("001", "003")}
    # 001 scores 25, 003 scores 400/12: drawing 001 twice and 003 once -> (50 + 400/12) / 3
    twice = headline([*groups["001"], *groups["003"], *groups["001"]])
    assert twice["non_lin"] == pytest.approx((2 * 25 + 400 / 12) / 3)
    # 001: 2 right, 003: 2 right -> 6 of 12
    assert twice["avg_acc"] == pytest.approx(50.0)
    # a group missing a position is left out, as an incomplete group is
    assert headline(groups["001"][:3])["non_lin"] is None


def test_intervals_resample_whole_groups(scored: tuple[Path, Path]) -> None:
    data, predictions = scored
    items = items_from_predictions(data, predictions)
    intervals = BENCHMARK.headline_intervals(items, resamples=500)
    assert intervals["non_lin"].value == pytest.approx(EXPECTED["total"])
    # Every resample's Non-Lin score is a mean of 4 group scores out of {25, 25, 33.3, 10}
    assert 10.0 <= intervals["non_lin"].lo < intervals["non_lin"].value
    assert intervals["non_lin"].value < intervals["non_lin"].hi <= 400 / 12
    # level 1 has one group (001): it rests on one unit and has no interval
    assert (intervals["level_1"].lo, intervals["level_1"].hi) == (None, None)
    assert (intervals["level_1"].n_units, intervals["non_lin"].n_units) == (1, 4)
