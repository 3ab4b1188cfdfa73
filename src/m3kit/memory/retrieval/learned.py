"""Fusion weights learned from supporting facts: a small learning-to-rank model over a hybrid
search's rankings.

Each candidate of a question (an item in any of its rankings) is described by one feature per
ranking (``fusion.RANKINGS``): under ``rrf`` its reciprocal rank scaled so that first place is 1,
(c + 1) / (c + rank), 0 when the ranking does not hold it; under ``score`` its min-max
normalised score (``fusion.min_max``), 0 when absent. A logistic regression with an L2 penalty
(fit by Newton's method, a few iterations on a CPU) learns which candidates are supporting
facts. Its coefficients, negatives set to 0 and divided by the largest, are the per-ranking
weights of a ``FusionSettings``: a linear model over those features orders candidates exactly
as the weighted fusion does (the intercept orders nothing), so the learned model runs as the
ordinary fusion of any memory (``memory_config={fusion: {...}}``), with no model file.

A pointwise linear ranker (as in Liu, "Learning to Rank for Information Retrieval", 2009, §2):
fit on one data set's supporting facts, it is judged on another (docs/benchmarks.md,
"Retrieval that holds on unseen data").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from m3kit.memory.retrieval.fusion import RANKINGS, RRF_C, FusionMethod, FusionSettings, min_max
from m3kit.memory.retrieval.index import Hit

L2_PENALTY = 1.0
"""The ridge on the coefficients (not on the intercept): a handful of weights over thousands of
candidates, so it only keeps a ranking that never helps from a large weight by chance."""
NEWTON_STEPS = 25


class RankedQuestion(BaseModel):
    """One question's rankings (by name, each best first with its retriever's scores) and the
    ids of its relevant items (supporting facts)."""

    model_config = ConfigDict(frozen=True)

    rankings: dict[str, list[Hit]]
    relevant: frozenset[str]


def candidate_features(rankings: Mapping[str, Sequence[Hit]], method: FusionMethod,
                       names: Sequence[str] = RANKINGS, c: int = RRF_C
                       ) -> tuple[list[str], np.ndarray]:
    """(the candidates, in the order first met reading the rankings of ``names`` in turn;
    their feature rows, one column per name: see the module doc)."""
    ids: dict[str, int] = {}
    for name in names:
        for item_id, _ in rankings.get(name, ()):
            ids.setdefault(item_id, len(ids))
    rows = np.zeros((len(ids), len(names)), dtype=np.float64)
    for column, name in enumerate(names):
        hits = rankings.get(name, ())
        if method == "score":
            for item_id, value in min_max(hits).items():
                rows[ids[item_id], column] = value
            continue
        seen: set[str] = set()
        for rank, (item_id, _) in enumerate(hits, start=1):
            if item_id not in seen:
                seen.add(item_id)
                rows[ids[item_id], column] = (c + 1) / (c + rank)
    return list(ids), rows


def logistic_fit(features: np.ndarray, labels: np.ndarray, *, l2: float = L2_PENALTY,
                 steps: int = NEWTON_STEPS) -> np.ndarray:
    """Coefficients (intercept last) of an L2-penalised logistic regression of ``labels``
    (0/1) on ``features``, by Newton's method from zero."""
    x = np.hstack([features, np.ones((len(features), 1))])
    beta = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[-1] = 0.0  # the intercept is not shrunk
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (p - labels) + penalty * beta
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hessian + 1e-9 * np.eye(len(beta)), gradient)
        beta -= step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return beta


def fit_fusion(questions: Sequence[RankedQuestion], *, method: FusionMethod = "rrf",
               names: Sequence[str] = RANKINGS, l2: float = L2_PENALTY) -> FusionSettings:
    """The fusion whose per-ranking weights a logistic regression learns from ``questions``
    (see the module doc); ``ValueError`` when they hold no candidate, or no relevant and no
    irrelevant one (nothing to learn from)."""
    blocks, labels = [], []
    for question in questions:
        ids, rows = candidate_features(question.rankings, method, names)
        blocks.append(rows)
        labels += [1.0 if i in question.relevant else 0.0 for i in ids]
    y = np.asarray(labels)
    if not len(y) or y.min() == y.max():
        raise ValueError("fusion weights need relevant and irrelevant candidates to learn from")
    coefficients = np.clip(logistic_fit(np.vstack(blocks), y, l2=l2)[:-1], 0.0, None)
    top = float(coefficients.max())
    if top <= 0:
        raise ValueError("no ranking's rank predicts a supporting fact: no weights learned")
    return FusionSettings(method=method, weights={
        name: float(w / top) for name, w in zip(names, coefficients, strict=True)})
