"""Cluster bootstrap intervals, the paired comparison and McNemar's exact test, on cases whose
answer is known by hand."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.metrics.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_UNITS,
    Interval,
    PairedDifference,
    cluster_bootstrap,
    group_units,
    mcnemar_exact,
    number_text,
    paired_cluster_bootstrap,
    parts_bootstrap,
)


def mean_of(items: list[int]) -> dict[str, float | None]:
    return {"mean": sum(items) / len(items) if items else None}


def test_defaults() -> None:
    assert (DEFAULT_RESAMPLES, DEFAULT_LEVEL, DEFAULT_SEED) == (2000, 0.95, 0)


def test_all_equal_units_give_a_zero_width_interval() -> None:
    units = [[1, 0], [1, 0], [1, 0], [1, 0]]
    assert cluster_bootstrap(units, mean_of) == {
        "mean": Interval(value=0.5, lo=0.5, hi=0.5, n_units=4)}


def test_seed_fixes_the_draws_documented_in_the_module() -> None:
    # The module's contract: resample r draws default_rng(seed).integers(0, n, (R, n))[r].
    assert np.random.default_rng(0).integers(0, 2, size=(4, 2)).tolist() == [
        [1, 1], [1, 0], [0, 0], [0, 0]]


def test_hand_checked_two_units() -> None:
    # Unit 0 holds two wrong answers, unit 1 one right answer; value = 1/3.
    # Seed 0, 4 resamples draw units [1,1] -> [1,1] mean 1; [1,0] -> [1,0,0] mean 1/3;
    # [0,0] -> [0,0,0,0] mean 0; [0,0] -> mean 0. Sorted: 0, 0, 1/3, 1.
    units = [[0, 0], [1]]
    # level 0.5: quantile 0.25 at position 0.75 -> 0; quantile 0.75 at position 2.25 ->
    # 1/3 + 0.25 * (1 - 1/3) = 0.5.
    half = cluster_bootstrap(units, mean_of, resamples=4, level=0.5, seed=0)["mean"]
    assert half.value == pytest.approx(1 / 3)
    assert (half.lo, half.hi) == (pytest.approx(0.0), pytest.approx(0.5))
    # level 0.95: quantile 0.025 at position 0.075 -> 0; quantile 0.975 at position 2.925 ->
    # 1/3 + 0.925 * 2/3 = 0.95.
    wide = cluster_bootstrap(units, mean_of, resamples=4, seed=0)["mean"]
    assert (wide.lo, wide.hi) == (pytest.approx(0.0), pytest.approx(0.95))
    assert wide.n_units == 2


def test_whole_units_are_resampled_not_items() -> None:
    # Each unit is all-right or all-wrong; item resampling would produce means such as 0.25,
    # cluster resampling of 2 units only 0, 0.5 and 1.
    units = [[1, 1], [0, 0]]
    result = cluster_bootstrap(units, lambda xs: {"mean": sum(xs) / len(xs)}, resamples=200)
    assert result["mean"] == Interval(value=0.5, lo=0.0, hi=1.0, n_units=2)


def test_undefined_resamples_are_left_out_and_undefined_values_have_no_interval() -> None:
    # "rate" is the share of 1s among items > 0; undefined when no such item was drawn.
    def rates(items: list[int]) -> dict[str, float | None]:
        positive = [x for x in items if x > 0]
        return {"rate": (sum(x == 1 for x in positive) / len(positive)) if positive else None,
                "never": float("nan")}

    result = cluster_bootstrap([[0], [1], [1]], rates, resamples=50)
    # Resamples drawing only unit 0 are undefined; the others all give rate 1. The rate is
    # defined on units 1 and 2 alone, not on unit 0: it rests on 2 units.
    assert result["rate"] == Interval(value=1.0, lo=1.0, hi=1.0, n_units=2)
    assert result["never"] == Interval(value=None, lo=None, hi=None, n_units=0)


def test_no_units() -> None:
    none = Interval(value=None, lo=None, hi=None, n_units=0)
    assert cluster_bootstrap([], mean_of) == {"mean": none}
    assert cluster_bootstrap([[]], mean_of) == {"mean": none}


def test_one_unit_has_no_interval() -> None:
    # Every resample is the one unit again: a zero-width "interval" would claim certainty.
    assert cluster_bootstrap([[1, 0, 0], []], mean_of) == {
        "mean": Interval(value=1 / 3, lo=None, hi=None, n_units=1)}


def test_n_units_counts_the_units_a_number_is_defined_on() -> None:
    # "pos" is defined on units holding a positive item: units 1 and 3 of four.
    def stats(items: list[int]) -> dict[str, float | None]:
        positive = [x for x in items if x > 0]
        return {"all": sum(items) / len(items),
                "pos": sum(positive) / len(positive) if positive else None}

    result = cluster_bootstrap([[0], [2], [0, 0], [4]], stats, resamples=20)
    assert (result["all"].n_units, result["pos"].n_units) == (4, 2)
    assert result["pos"].value == 3.0


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="level"):
        cluster_bootstrap([[1]], mean_of, level=1.0)
    with pytest.raises(ValueError, match="resamples"):
        cluster_bootstrap([[1]], mean_of, resamples=0)


def test_group_units_orders_units_by_name() -> None:
    # Sorted by unit name, items in their order within a unit: the same draws whatever
    # order the items came in.
    items = [("v2", 1), ("v1", 2), ("v2", 3)]
    assert group_units(items, lambda x: x[0]) == [[("v1", 2)], [("v2", 1), ("v2", 3)]]


def test_items_in_two_orders_give_identical_intervals() -> None:
    # The same 12 items, units of unequal quality, in file order and shuffled: without the
    # sorted numbering the seed would draw different units in the two orders.
    items = [(f"u{i % 5}", int(i % 5 < 2 or i == 7)) for i in range(12)]
    shuffled = [items[i] for i in (11, 3, 7, 0, 9, 5, 1, 10, 2, 8, 6, 4)]

    def mean_of_pairs(xs: list[tuple[str, int]]) -> dict[str, float | None]:
        return {"mean": sum(x for _, x in xs) / len(xs)}

    def run(order: list[tuple[str, int]]) -> Interval:
        return cluster_bootstrap(group_units(order, lambda x: x[0]), mean_of_pairs,
                                 resamples=200)["mean"]

    assert run(items) == run(shuffled)
    assert run(items).lo < run(items).hi  # units differ: a real interval, not zero width


def test_interval_text() -> None:
    assert Interval(value=41.8, lo=38.25, hi=45.5, n_units=24).text() == "41.8 [38.2, 45.5]"
    assert Interval(value=41.8, lo=38.25, hi=45.5, n_units=24).text(units=True) == (
        "41.8 [38.2, 45.5] (24 units)")
    assert Interval(value=0.4561, lo=0.4, hi=0.5, n_units=10).text(".3f") == (
        "0.456 [0.400, 0.500]")
    assert Interval(value=None, lo=None, hi=None, n_units=0).text() == "-"
    # fewer than MIN_UNITS units: shown with its unit count; fewer than 2: no interval
    assert MIN_UNITS == 10
    assert Interval(value=50.0, lo=0.0, hi=100.0, n_units=3).text() == (
        "50.0 [0.0, 100.0] (3 units)")
    assert Interval(value=1.0, lo=None, hi=None, n_units=1).text() == "1.0 (1 unit)"
    # no negative zero
    assert Interval(value=-0.0, lo=-0.001, hi=50.0, n_units=12).text(".2f") == (
        "0.00 [0.00, 50.00]")


def test_number_text_never_prints_negative_zero() -> None:
    assert number_text(-0.0, ".2f", signed=True) == "+0.00"
    assert number_text(-0.004, ".2f", signed=True) == "+0.00"
    assert number_text(-0.004, ".2f") == "0.00"
    assert number_text(-0.006, ".2f", signed=True) == "-0.01"
    assert number_text(-50.0, ".2f", signed=True) == "-50.00"
    assert number_text(0.0, ".2f", signed=True) == "+0.00"
    assert number_text(None, ".2f", missing="n/a") == "n/a"


def test_paired_identical_systems_differ_by_zero_with_p_one() -> None:
    units = [[(1, 1), (0, 0)], [(1, 1)], [(0, 0)]]
    result = paired_cluster_bootstrap(units, mean_of, min_units=1)
    assert result == {"mean": PairedDifference(a=0.5, b=0.5, diff=0.0, lo=0.0, hi=0.0,
                                               p_value=1.0, n_units=3)}


def test_paired_system_b_always_right() -> None:
    units = [[(0, 1)], [(0, 1), (0, 1)], [(0, 1)]]
    result = paired_cluster_bootstrap(units, mean_of, min_units=1)["mean"]
    # Every resample's difference is 1: P(d <= 0) = 0, so p = 0.
    assert result == PairedDifference(a=0.0, b=1.0, diff=1.0, lo=1.0, hi=1.0, p_value=0.0,
                                      n_units=3)
    assert result.significant


def test_paired_hand_checked_two_units() -> None:
    # Unit 0: a right, b wrong; unit 1: a wrong, b right. diff = 0.
    # Seed 0, 4 resamples draw [1,1] -> d = 1; [1,0] -> 0; [0,0] -> -1; [0,0] -> -1.
    # P(d <= 0) = 3/4, P(d >= 0) = 2/4 -> p = 2 * 1/2 = 1.
    # Sorted d: -1, -1, 0, 1; level 0.5: position 0.75 -> -1, position 2.25 -> 0.25.
    units = [[(1, 0)], [(0, 1)]]
    result = paired_cluster_bootstrap(units, mean_of, resamples=4, level=0.5,
                                      min_units=1)["mean"]
    assert result.diff == 0.0
    assert (result.lo, result.hi) == (pytest.approx(-1.0), pytest.approx(0.25))
    assert result.p_value == 1.0


def test_paired_p_value_one_sided_mass() -> None:
    # Three units: b gains on units 1 and 2 and loses on unit 0; diff = 1/3.
    units = [[(1, 0)], [(0, 1)], [(0, 1)]]
    result = paired_cluster_bootstrap(units, mean_of, resamples=5, level=0.5,
                                      min_units=1)["mean"]
    # Seed 0, 5 resamples draw [2,1,1] -> 3 gains -> d = 1; [0,0,0] -> 3 losses -> d = -1;
    # [0,0,0] -> -1; [2,1,2] -> d = 1; [1,1,2] -> d = 1. P(d <= 0) = 2/5, P(d >= 0) = 3/5
    # -> p = 0.8.
    assert result.diff == pytest.approx(1 / 3)
    assert result.p_value == pytest.approx(0.8)


def test_paired_few_units_give_no_p_value_and_no_mark() -> None:
    # B right on every item of 3 units, A wrong: the interval of the difference is [1, 1],
    # but 3 units are under MIN_UNITS: no p-value, never significant.
    units = [[(0, 1)], [(0, 1), (0, 1)], [(0, 1)]]
    result = paired_cluster_bootstrap(units, mean_of)["mean"]
    assert result == PairedDifference(a=0.0, b=1.0, diff=1.0, lo=1.0, hi=1.0, p_value=None,
                                      n_units=3)
    assert not result.significant
    # the same with 10 units: p = 0 and significant
    ten = paired_cluster_bootstrap([[(0, 1)]] * 10, mean_of)["mean"]
    assert (ten.n_units, ten.p_value, ten.significant) == (10, 0.0, True)


def test_paired_one_unit_has_no_interval() -> None:
    # The reviewer's case: a difference of -50 points resting on ONE probe video.
    units = [[(1, 0), (1, 1)]]
    result = paired_cluster_bootstrap(units, mean_of)["mean"]
    assert result == PairedDifference(a=1.0, b=0.5, diff=-0.5, lo=None, hi=None, p_value=None,
                                      n_units=1)
    assert not result.significant


def test_paired_n_units_needs_the_number_in_both_runs_of_a_unit() -> None:
    def positive_mean(items: list[int]) -> dict[str, float | None]:
        positive = [x for x in items if x > 0]
        return {"pos": sum(positive) / len(positive) if positive else None}

    # unit 0: defined in a only; unit 1: in both; unit 2: in b only; unit 3: in both
    units = [[(1, 0)], [(2, 2)], [(0, 3)], [(1, 1)]]
    assert paired_cluster_bootstrap(units, positive_mean)["pos"].n_units == 2


@pytest.mark.parametrize(("b", "c", "p"), [
    (0, 5, 0.0625),  # 2 * 1/32
    (1, 1, 1.0),  # 2 * 3/4, clipped
    (2, 8, 0.109375),  # 2 * (1 + 10 + 45) / 1024
    (8, 2, 0.109375),  # symmetric
    (0, 0, 1.0),  # no discordant pair
])
def test_mcnemar_exact(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == p


def test_mcnemar_rejects_negative_counts() -> None:
    with pytest.raises(ValueError, match="discordant"):
        mcnemar_exact(-1, 2)


def test_a_few_hundred_units_give_an_interval_around_the_mean() -> None:
    rng = np.random.default_rng(1)
    units = [[int(x) for x in rng.integers(0, 2, size=4)] for _ in range(200)]  # 800 items
    result = cluster_bootstrap(units, mean_of)
    interval = result["mean"]
    assert interval.lo < interval.value < interval.hi


# Two parts sampled apart (a system's runs of two tasks): items (unit, kind, value).
PART_A = [("a1", "x", 0), ("a1", "x", 0), ("a2", "x", 1)]
PART_B = [("b1", "y", 1), ("b2", "y", 0)]


def kinds(items: list[tuple[str, str, int]]) -> dict[str, float | None]:
    """The mean of the x items, of the y items, of all, and x minus y (defined only where
    both kinds were drawn)."""
    def mean(kind: str | None) -> float | None:
        values = [v for _, k, v in items if kind is None or k == kind]
        return sum(values) / len(values) if values else None

    x, y = mean("x"), mean("y")
    return {"x": x, "y": y, "all": mean(None),
            "x_minus_y": None if x is None or y is None else x - y}


def unit_of(item: tuple[str, str, int]) -> str:
    return item[0]


def test_parts_bootstrap_resamples_a_number_over_the_part_that_defines_it() -> None:
    kw = {"resamples": 4, "level": 0.5, "seed": 0}
    result = parts_bootstrap([PART_A, PART_B], unit_of, kinds, **kw)
    # x is part A's alone: its units [[0, 0], [1]] resampled alone, as in
    # test_hand_checked_two_units: value 1/3, [0, 0.5], whatever part B holds
    assert result["x"].value == pytest.approx(1 / 3)
    assert (result["x"].lo, result["x"].hi) == (pytest.approx(0.0), pytest.approx(0.5))
    assert result["x"] == cluster_bootstrap(group_units(PART_A, unit_of), kinds, **kw)["x"]
    assert result["y"] == cluster_bootstrap(group_units(PART_B, unit_of), kinds, **kw)["y"]
    # resampling both parts' four units together draws a varying number of part A's units:
    # another interval for the same number (what a report of a pooled system showed before)
    joint = cluster_bootstrap(group_units(PART_A + PART_B, unit_of), kinds, **kw)
    assert joint["x"] != result["x"]
    # numbers of both parts, and those no part defines alone, are resampled over all units
    assert result["all"] == joint["all"] and result["x_minus_y"] == joint["x_minus_y"]
    assert result["x"].n_units == 2 and result["all"].n_units == 4


def test_parts_bootstrap_of_one_part_is_the_cluster_bootstrap() -> None:
    items = PART_A + PART_B
    assert parts_bootstrap([items], unit_of, kinds, resamples=50) == cluster_bootstrap(
        group_units(items, unit_of), kinds, resamples=50)
