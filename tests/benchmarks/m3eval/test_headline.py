"""M3Eval's headline numbers from per-item records: the same values as the score card, the
probe video as the bootstrap's unit (conftest.PREDICTIONS says what each output counts as)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval import BENCHMARK
from m3kit.benchmarks.m3eval.score import (
    STORYLINE,
    cluster_of,
    headline,
    item_correct,
    items_from_predictions,
    score_predictions,
)
from m3kit.metrics.bootstrap import Interval


def test_headline_equals_the_score_card(released_root: Path, predictions_file: Path,
                                        released_excluded: set[str]) -> None:
    items = items_from_predictions(released_root, predictions_file, excluded=released_excluded)
    card = score_predictions(released_root, predictions_file, excluded=released_excluded)
    numbers = headline(items)
    da, mi, il = card.divided_attention, card.memory_interference, card.interleaved
    expected: dict[str, float | None] = {}
    for column in ("no_swap", "swap", "delta"):
        expected.update({f"{column}_{m}": da[column][m] for m in STORYLINE})
    expected["spatial_source_grounding"] = da["spatial_source_grounding"]
    for direction in ("proactive", "retroactive", "repeat_target", "repeat_interferer",
                      "delta"):
        for rate in ("accuracy", "intrusion_rate"):
            expected[f"{direction}_{rate}"] = mi[direction][rate]
    expected.update({f"interleaved_{m}": il[m] for m in (*STORYLINE,
                                                         "false_memory_discrimination")})
    expected["temporal_source_grounding"] = il["temporal_source_grounding"]
    expected["nback_accuracy"] = card.nback["accuracy"]
    assert {k: v for k, v in numbers.items() if k not in ("accuracy", "intrusion_rate")} == \
        expected
    # Overall, by hand: 30 scored questions (ss-10, ss-11 excluded; il-3, mt-3 missing):
    # correct ss-1, ss-4, ss-5, ss-7 | mi-2, mi-4 | mt-1 | il-1, il-4, il-5 | nb-1, nb-4, nb-5
    # = 13 -> 43.33; intrusion over the 8 questions with an intrusion option (mi-1..4, mi-6,
    # mt-1..3): mi-1, mi-3, mt-2 chose it -> 3/8 = 37.5
    assert card.n_scored == len(items) == 30
    assert numbers["accuracy"] == pytest.approx(100 * 13 / 30)
    assert numbers["intrusion_rate"] == 37.5
    assert sum(item_correct(i) for i in items) == 13


def test_the_unit_is_the_probe_video(released_root: Path, predictions_file: Path,
                                     released_excluded: set[str]) -> None:
    items = items_from_predictions(released_root, predictions_file, excluded=released_excluded)
    by_id = {i.id: i for i in items}
    assert cluster_of(by_id["mi-1"]) == cluster_of(by_id["mi-2"]) == \
        "videos/memory_interference/pair2_v1v2.mp4"
    assert cluster_of(by_id["nb-1"]) == "videos/nback/seq1.mp4"
    assert len({cluster_of(i) for i in items}) == 5
    intervals = BENCHMARK.headline_intervals(items, resamples=200)
    assert set(intervals) == set(headline(items))
    # N-Back's six questions share one video: every resample that draws it gives 50.0.
    assert intervals["nback_accuracy"] == Interval(value=50.0, lo=50.0, hi=50.0)
    overall = intervals["accuracy"]
    assert overall.lo < overall.value < overall.hi


def test_a_probe_drawn_twice_counts_twice() -> None:
    from m3kit.benchmarks.m3eval.scorer import M3EvalItem

    right = M3EvalItem(id="a", status="correct", video="v1",
                       groups={"paradigm": "nback", "question_type": "nback"})
    wrong = M3EvalItem(id="b", status="incorrect", video="v2",
                       groups={"paradigm": "nback", "question_type": "nback"})
    assert headline([right, right, wrong])["nback_accuracy"] == pytest.approx(200 / 3)
