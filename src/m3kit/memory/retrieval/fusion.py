"""Rank fusion: several rankings of the same items (BM25, dense, a time scope) into one.

Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): an item's fused score is
Σ_lists w_l / (c + rank_l), rank counted from 1, over the lists that hold it. It needs no
calibration between a BM25 score and a cosine (they live on different scales) and the paper's
c = 60 damps the head of each list so that agreement between lists beats one list's first place.

Scores are reported *normalised*: divided by Σ_l w_l / (c + 1), the score of an item ranked
first in every list, so a fused score lies in (0, 1] whatever the number of lists. M3Proctor's
α bonuses (paper eq. 3) are added to this score the way they are added to a cosine.
"""

from __future__ import annotations

from collections.abc import Sequence

from m3kit.memory.retrieval.index import Hit

RRF_C = 60
"""Cormack et al.'s constant: the rank offset that damps each list's head."""


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
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError(f"got {len(rankings)} rankings but {len(weights)} weights")
    if any(w < 0 for w in weights):
        raise ValueError("fusion weights must not be negative")
    if c < 0:
        raise ValueError(f"c must not be negative, got {c}")
    scores: dict[str, float] = {}
    first_met: dict[str, int] = {}
    for position in range(max((len(r) for r in rankings), default=0)):
        for ranking in rankings:
            if position < len(ranking):
                first_met.setdefault(ranking[position], len(first_met))
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
