"""Reciprocal-rank fusion on rankings computed by hand (Cormack et al. 2009, c = 60)."""

from __future__ import annotations

import pytest

from m3kit.memory.retrieval.fusion import RRF_C, reciprocal_rank_fusion


def test_two_lists_by_hand() -> None:
    """a: 1/61; b: 1/62 + 1/61; c: 1/63 + 1/62; d: 1/63; normalised by 2/61."""
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "d"]])
    assert [i for i, _ in fused] == ["b", "c", "a", "d"]
    best = 2 / 61
    expected = {"b": (1 / 62 + 1 / 61) / best, "c": (1 / 63 + 1 / 62) / best,
                "a": (1 / 61) / best, "d": (1 / 63) / best}
    for item, score in fused:
        assert score == pytest.approx(expected[item], rel=1e-12)
    assert RRF_C == 60


def test_first_everywhere_scores_one_and_agreement_beats_one_first_place() -> None:
    fused = dict(reciprocal_rank_fusion([["x", "y"], ["x", "z"], ["y", "x"]]))
    assert fused["x"] == pytest.approx((2 / 61 + 1 / 62) / (3 / 61))
    assert fused["x"] > fused["y"] > fused["z"]
    assert dict(reciprocal_rank_fusion([["a"], ["a"]]))["a"] == pytest.approx(1.0)


def test_weights_and_c() -> None:
    """Weights 2 and 1, c = 0: a = 2/1, b = 2/2 + 1/1 = 2, c = 1/2: a ties b, met first."""
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "c"]], weights=[2, 1], c=0)
    assert fused == [("a", pytest.approx(2 / 3)), ("b", pytest.approx(2 / 3)),
                     ("c", pytest.approx(0.5 / 3))]
    silent = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], weights=[1, 0])
    assert [i for i, _ in silent] == ["a", "b"]


def test_ties_keep_the_order_items_were_met() -> None:
    """Every item is alone at rank 1 or 2 of one list: the order reads the lists rank by
    rank (a, c, b, d)."""
    fused = reciprocal_rank_fusion([["a", "b"], ["c", "d"]])
    assert [i for i, _ in fused] == ["a", "c", "b", "d"]


def test_a_repeated_id_counts_at_its_best_rank() -> None:
    fused = dict(reciprocal_rank_fusion([["a", "b", "a"]]))
    assert fused == {"a": pytest.approx(1.0), "b": pytest.approx(61 / 62)}


def test_bad_arguments() -> None:
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(ValueError, match="weights"):
        reciprocal_rank_fusion([["a"]], weights=[1, 1])
    with pytest.raises(ValueError, match="negative"):
        reciprocal_rank_fusion([["a"]], weights=[-1])
