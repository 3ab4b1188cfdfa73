"""Fusion weights learned by a logistic regression over the rankings' features."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.memory.retrieval.fusion import RRF_C, FusionSettings
from m3kit.memory.retrieval.learned import (
    RankedQuestion,
    candidate_features,
    fit_fusion,
    logistic_fit,
)


def test_candidate_features_by_hand() -> None:
    """rrf: (c + 1) / (c + rank), 0 where absent; score: min-max per ranking."""
    rankings = {"bm25": [("a", 4.0), ("b", 2.0)], "dense": [("b", 0.9), ("c", 0.5)]}
    ids, rows = candidate_features(rankings, "rrf", names=("dense", "bm25"))
    assert ids == ["b", "c", "a"]  # dense read first
    c = RRF_C
    np.testing.assert_allclose(rows, [[1.0, (c + 1) / (c + 2)], [(c + 1) / (c + 2), 0.0],
                                      [0.0, 1.0]])
    ids, rows = candidate_features(rankings, "score", names=("dense", "bm25"))
    np.testing.assert_allclose(rows, [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])


def test_logistic_fit_matches_the_closed_form_of_one_binary_feature() -> None:
    """One 0/1 feature, no penalty: the fit reproduces the log-odds of each group. x = 0: 1 of
    4 positive (log 1/3); x = 1: 3 of 4 (log 3); slope log 3 - log 1/3 = log 9."""
    x = np.array([[0.0]] * 4 + [[1.0]] * 4)
    y = np.array([1, 0, 0, 0, 1, 1, 1, 0], dtype=float)
    beta = logistic_fit(x, y, l2=0.0)
    assert beta[0] == pytest.approx(np.log(9), abs=1e-6)
    assert beta[1] == pytest.approx(np.log(1 / 3), abs=1e-6)


def _question(n: int) -> RankedQuestion:
    """BM25 always ranks the supporting fact first; the dense ranking puts it at a place that
    varies, behind distractors."""
    fact = f"fact{n}"
    noise = [f"d{n}-{m}" for m in range(5)]
    dense_place = n % 4 + 1
    dense = noise[:dense_place] + [fact] + noise[dense_place:]
    return RankedQuestion(
        rankings={"bm25": [(fact, 5.0)] + [(d, 1.0 / (m + 1)) for m, d in enumerate(noise)],
                  "dense": [(i, 1.0 - m / 10) for m, i in enumerate(dense)]},
        relevant=frozenset({fact}))


def test_fit_fusion_weighs_the_ranking_that_finds_the_facts() -> None:
    learned = fit_fusion([_question(n) for n in range(40)], names=("dense", "bm25"))
    assert isinstance(learned, FusionSettings)
    assert learned.method == "rrf"
    assert learned.weights["bm25"] == 1.0
    assert learned.weights["dense"] < 0.5
    fused = learned.fuse([_question(99).rankings["dense"], _question(99).rankings["bm25"]],
                         [learned.weight("dense"), learned.weight("bm25")])
    assert fused[0][0] == "fact99"


def test_fit_fusion_needs_both_kinds_of_candidates() -> None:
    lonely = RankedQuestion(rankings={"bm25": [("a", 1.0)]}, relevant=frozenset({"a"}))
    with pytest.raises(ValueError, match="relevant and irrelevant"):
        fit_fusion([lonely])
    with pytest.raises(ValueError, match="relevant and irrelevant"):
        fit_fusion([])
