"""Rank fusion: several rankings of the same items (BM25, dense, a time scope) into one.

Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): an item's fused score is
Σ_lists w_l / (c + rank_l), rank counted from 1, over the lists that hold it. It needs no
calibration between a BM25 score and a cosine (they live on different scales) and the paper's
c = 60 damps the head of each list so that agreement between lists beats one list's first place.

Scores are reported *normalised*: divided by Σ_l w_l / (c + 1), the score of an item ranked
first in every list, so a fused score lies in (0, 1] whatever the number of lists. M3Proctor's
α bonuses (paper eq. 3) are added to this score the way they are added to a cosine.

The alternative, ``score_fusion``, sums the retrievers' own scores after mapping each list
onto [0, 1] (CombSUM over min-max normalised scores: Fox & Shaw, TREC-2 1994; Lee, SIGIR 1997):
a list whose first item stands far above the rest keeps that margin, where reciprocal ranks
give every list's first item the same credit. ``FusionSettings`` picks the method and weighs
each retriever's ranking by name (``RANKINGS``): measured in docs/benchmarks.md ("Retrieval
that holds on unseen data").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.memory.retrieval.index import Hit

RRF_C = 60
"""Cormack et al.'s constant: the rank offset that damps each list's head."""

EXPANSION_WEIGHT = 0.5
"""The weight of a ranking for an expansion of the question (a model's rewriting, RM3's
feedback words): a guess about the question, which itself weighs double."""

FusionMethod = Literal["rrf", "score"]
RANKINGS: tuple[str, ...] = ("dense", "bm25", "window_dense", "window_bm25", "feedback")
"""The rankings a hybrid search fuses, by name: the item's dense ranking (its best passage when
the search has views), BM25 over its text, the turn window's dense and BM25 rankings (views),
and BM25 over the question expanded by pseudo-relevance feedback (``feedback``)."""


class FusionSettings(BaseModel):
    """How a hybrid search fuses its rankings: ``method`` (``rrf``: reciprocal rank, the
    default; ``score``: min-max CombSUM) and a weight per ranking name (``RANKINGS``; a name
    not given weighs 1, except ``feedback``, an expansion, which weighs ``EXPANSION_WEIGHT``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    method: FusionMethod = "rrf"
    weights: dict[str, float] = Field(default_factory=dict)

    @field_validator("weights")
    @classmethod
    def _known_weights(cls, weights: dict[str, float]) -> dict[str, float]:
        unknown = sorted(set(weights) - set(RANKINGS))
        if unknown:
            raise ValueError(f"unknown rankings {unknown}; known: {', '.join(RANKINGS)}")
        negative = sorted(name for name, w in weights.items() if w < 0)
        if negative:
            raise ValueError(f"fusion weights must not be negative: {', '.join(negative)}")
        return weights

    def weight(self, ranking: str) -> float:
        """The weight of the ranking named ``ranking``."""
        return self.weights.get(ranking, EXPANSION_WEIGHT if ranking == "feedback" else 1.0)

    def fuse(self, rankings: Sequence[Sequence[Hit]], weights: Sequence[float],
             c: int = RRF_C) -> list[Hit]:
        """``rankings`` (each best first, with its retriever's scores) fused by ``method``."""
        if self.method == "score":
            return score_fusion(rankings, weights=weights)
        return reciprocal_rank_fusion([[i for i, _ in r] for r in rankings], weights=weights,
                                      c=c)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]],
    *,
    weights: Sequence[float] | None = None,
    c: int = RRF_C,
) -> list[Hit]:
    """The items of ``rankings`` (each best first; an id repeated in a list counts at its best
    rank) by normalised fused score, best first. Ties keep the order in which the items were
    first met, reading the lists one rank at a time (the first list's first item, the second
    list's first item, ..., the first list's second item...). ``weights``: one per list
    (default 1 each); a list of weight 0 adds nothing."""
    weights = _check_weights(len(rankings), weights)
    if c < 0:
        raise ValueError(f"c must not be negative, got {c}")
    scores: dict[str, float] = {}
    first_met = _first_met(rankings)
    for ranking, weight in zip(rankings, weights, strict=True):
        seen: set[str] = set()
        for rank, item_id in enumerate(ranking, start=1):
            if item_id in seen:
                continue
            seen.add(item_id)
            scores[item_id] = scores.get(item_id, 0.0) + weight / (c + rank)
    best = sum(weights) / (c + 1)
    ordered = sorted(scores, key=lambda i: (-scores[i], first_met[i]))
    return [(i, scores[i] / best if best > 0 else 0.0) for i in ordered]


def _check_weights(count: int, weights: Sequence[float] | None) -> list[float]:
    """``weights`` (default 1 each) checked against ``count`` lists: one each, none negative."""
    if weights is None:
        return [1.0] * count
    if len(weights) != count:
        raise ValueError(f"got {count} rankings but {len(weights)} weights")
    if any(w < 0 for w in weights):
        raise ValueError("fusion weights must not be negative")
    return list(weights)


def _first_met(rankings: Sequence[Sequence[str]]) -> dict[str, int]:
    """Each id's position when the lists are read one rank at a time (the tie order)."""
    first_met: dict[str, int] = {}
    for position in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if position < len(ranking):
                first_met.setdefault(ranking[position], len(first_met))
    return first_met


def min_max(hits: Sequence[Hit]) -> dict[str, float]:
    """Each id of ``hits`` with its score mapped onto [0, 1]: the list's best score 1, its worst
    0 (every score 1 when they are all equal); an id repeated keeps its best score."""
    best: dict[str, float] = {}
    for item_id, score in hits:
        best[item_id] = max(score, best.get(item_id, score))
    if not best:
        return {}
    top, bottom = max(best.values()), min(best.values())
    span = top - bottom
    return {i: (s - bottom) / span if span > 0 else 1.0 for i, s in best.items()}


def score_fusion(rankings: Sequence[Sequence[Hit]], *,
                 weights: Sequence[float] | None = None) -> list[Hit]:
    """The items of ``rankings`` (each a retriever's hits, best first, with its own scores:
    BM25, cosine) by weighted CombSUM of min-max normalised scores (``min_max``), divided by
    Σ w (so a fused score lies in [0, 1]), best first; ties in the order the items were first
    met, as in ``reciprocal_rank_fusion``. A list of weight 0 adds nothing."""
    weights = _check_weights(len(rankings), weights)
    first_met = _first_met([[i for i, _ in r] for r in rankings])
    scores: dict[str, float] = dict.fromkeys(first_met, 0.0)
    for ranking, weight in zip(rankings, weights, strict=True):
        for item_id, score in min_max(ranking).items():
            scores[item_id] += weight * score
    total = sum(weights)
    ordered = sorted(scores, key=lambda i: (-scores[i], first_met[i]))
    return [(i, scores[i] / total if total > 0 else 0.0) for i in ordered]
