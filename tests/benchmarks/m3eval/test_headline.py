"""M3Eval's headline numbers from per-item records: the same values as the score card, the
probe's source videos (else the probe video) as the bootstrap's unit (conftest.PREDICTIONS
says what each output counts as)."""

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


def test_without_a_pair_the_unit_is_the_probe_video(released_root: Path,
                                                    predictions_file: Path,
                                                    released_excluded: set[str]) -> None:
    items = items_from_predictions(released_root, predictions_file, excluded=released_excluded)
    by_id = {i.id: i for i in items}
    assert cluster_of(by_id["mi-1"]) == cluster_of(by_id["mi-2"]) == \
        "videos/memory_interference/pair2_v1v2.mp4"
    assert cluster_of(by_id["nb-1"]) == "videos/nback/seq1.mp4"
    assert len({cluster_of(i) for i in items}) == 5
    intervals = BENCHMARK.headline_intervals(items, resamples=200)
    assert set(intervals) == set(headline(items))
    # N-Back's six questions share one video: one unit, no interval.
    assert intervals["nback_accuracy"] == Interval(value=50.0, lo=None, hi=None, n_units=1)
    overall = intervals["accuracy"]
    assert overall.lo < overall.value < overall.hi


def test_a_probe_drawn_twice_counts_twice() -> None:
    from m3kit.benchmarks.m3eval.item import M3EvalItem

    right = M3EvalItem(id="a", status="correct", video="v1",
                       groups={"paradigm": "nback", "question_type": "nback"})
    wrong = M3EvalItem(id="b", status="incorrect", video="v2",
                       groups={"paradigm": "nback", "question_type": "nback"})
    assert headline([right, right, wrong])["nback_accuracy"] == pytest.approx(200 / 3)


def _interference_question(qid: str, probe: str, condition: str, **metadata: object):
    from m3kit.schema import Choice, Question, VideoRef

    return Question(id=qid, benchmark="m3eval", text="Which?", answer="A",
                    choices=[Choice(letter="A", text="x"), Choice(letter="B", text="y")],
                    media=[VideoRef(path=f"{probe}.mp4")],
                    metadata={"paradigm": "interference", "question_type": "memory_interference",
                              "condition": condition, "memory_key": probe, **metadata})


def test_the_unit_is_the_source_pair() -> None:
    from m3kit.benchmarks.m3eval.load import source_unit

    # the synthetic suite's ``pair``; a built release's ``pair_id`` (kept under ``released``)
    synth = _interference_question("mi-p0-proactive/x", "mi-p0-proactive", "proactive",
                                   pair="p0")
    built = _interference_question("m1_proactive", "videos/mi/m1_pro", "proactive",
                                   released={"pair_id": "pair01"})
    plain = _interference_question("q", "videos/mi/p", "proactive", released={})
    assert (source_unit(synth), source_unit(built), source_unit(plain)) == (
        "pair:p0", "pair:pair01", "videos/mi/p")


def test_two_probes_of_one_pair_are_one_unit_also_in_an_older_log() -> None:
    """A log scored before ``source`` was recorded: the sample's question names the pair."""
    from m3kit.benchmarks.m3eval.item import M3EvalItem
    from m3kit.benchmarks.m3eval.score import items_from_log
    from m3kit.schema import LoggedSample, Usage

    questions = [_interference_question(f"mi-p0-{c}/q", f"mi-p0-{c}", c, pair="p0")
                 for c in ("proactive", "retroactive")]
    samples = [LoggedSample(id=q.id, epoch=1, question=q, usage=Usage(), memory_key=q.metadata[
        "memory_key"], item=M3EvalItem(status="correct", letter="A", video=q.metadata[
            "memory_key"], groups={"paradigm": "interference", "condition": c}))
        for q, c in zip(questions, ("proactive", "retroactive"), strict=True)]
    items = items_from_log(samples)
    assert [cluster_of(i) for i in items] == ["pair:p0", "pair:p0"]
    intervals = BENCHMARK.headline_intervals(items, resamples=50)
    # one unit: the delta (proactive - retroactive) is paired within it, and has no interval
    assert intervals["delta_accuracy"] == Interval(value=0.0, lo=None, hi=None, n_units=1)
