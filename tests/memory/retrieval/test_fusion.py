"""Reciprocal-rank fusion on rankings computed by hand (Cormack et al. 2009, c = 60)."""

from __future__ import annotations

import pytest

from m3kit.memory.retrieval.fusion import (
    EXPANSION_WEIGHT,
    RRF_C,
    FusionSettings,
    min_max,
    reciprocal_rank_fusion,
    score_fusion,
)


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


def test_score_fusion_by_hand() -> None:
    """BM25 a 9, b 5, c 1 -> min-max a 1, b 0.5, c 0; cosine b 0.8, d 0.6, a 0.4 -> b 1,
    d 0.5, a 0. Weights 2 (BM25) and 1: a 2/3, b (2 * 0.5 + 1)/3 = 2/3 (a tie: a was met
    first), d 0.5/3, c 0."""
    fused = score_fusion([[("a", 9.0), ("b", 5.0), ("c", 1.0)],
                          [("b", 0.8), ("d", 0.6), ("a", 0.4)]], weights=[2.0, 1.0])
    assert [i for i, _ in fused] == ["a", "b", "d", "c"]
    expected = {"a": 2 / 3, "b": 2 / 3, "d": 0.5 / 3, "c": 0.0}
    for item, score in fused:
        assert score == pytest.approx(expected[item], rel=1e-12)


def test_score_fusion_reads_the_gaps_that_reciprocal_ranks_drop() -> None:
    """BM25 z 8, y 7, x 6 -> z 1, y 0.5, x 0; cosine x 1.0, y 0.8, z 0.1 -> x 1, y 7/9, z 0.
    CombSUM: y (0.5 + 7/9) / 2 = 23/36 first, z and x 1/2. RRF: z and x 1/61 + 1/63 each,
    above y's 2/62: the item close to both lists' firsts wins only when scores are read."""
    lexical = [("z", 8.0), ("y", 7.0), ("x", 6.0)]
    dense = [("x", 1.0), ("y", 0.8), ("z", 0.1)]
    fused = score_fusion([lexical, dense])
    assert fused[0] == ("y", pytest.approx(23 / 36))
    assert [i for i, _ in fused] == ["y", "z", "x"]
    assert [i for i, _ in reciprocal_rank_fusion([[i for i, _ in lexical],
                                                  [i for i, _ in dense]])] == ["z", "x", "y"]


def test_min_max_edges() -> None:
    assert min_max([]) == {}
    assert min_max([("a", 3.0), ("b", 3.0)]) == {"a": 1.0, "b": 1.0}
    assert min_max([("a", 1.0), ("a", 3.0), ("b", 2.0)]) == {"a": 1.0, "b": 0.0}


def test_fusion_settings_weigh_rankings_by_name() -> None:
    settings = FusionSettings(weights={"bm25": 2.0})
    assert settings.weight("bm25") == 2.0
    assert settings.weight("dense") == 1.0
    assert settings.weight("feedback") == EXPANSION_WEIGHT
    # RRF with BM25 at weight 2: a = 2/61, b = 2/62 + 1/61, c = 1/62 (over 3/61)
    fused = settings.fuse([[("a", 9.0), ("b", 5.0)], [("b", 0.9), ("c", 0.8)]], [2.0, 1.0])
    assert [i for i, _ in fused] == ["b", "a", "c"]
    assert fused[1][1] == pytest.approx((2 / 61) / (3 / 61))
    assert FusionSettings(method="score").fuse([[("a", 2.0), ("b", 1.0)]], [1.0]) == [
        ("a", 1.0), ("b", 0.0)]
    with pytest.raises(ValueError, match="unknown rankings"):
        FusionSettings(weights={"colbert": 1.0})
    with pytest.raises(ValueError, match="negative"):
        FusionSettings(weights={"bm25": -1.0})
