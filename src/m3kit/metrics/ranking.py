"""Ranked multiple-choice answers with an abstain option (SuperMemory-VQA, seed 003 §4.3).

Pure functions, no I/O. A *ranking* is a list of 0-based option indices, best first, possibly
partial (the options not named are tied below the named ones); ``None`` is an invalid reply.

- ``parse_ranking``: a model's raw reply to a ranking (the text rule of docs/metrics.md);
- ``ranking_from_values``: a ranking given as data (letters or 0-based indices);
- ``reciprocal_rank``: 1/rank of the gold, the tied unranked options sharing the mean of their
  ranks' reciprocals (QA-MRR);
- ``binary_f1``: F1 of a binary decision (Ans-F1 with positive = answerable, or the abstention
  F1 with positive = unanswerable), an invalid reply counting as the wrong decision;
- ``choice_credit``: accuracy credit with partial credit for the ``vague`` option (Table 5);
- ``mean_and_sample_std``: the per-person / per-video mean and sample standard deviation
  (Table 4).
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean, stdev

__all__ = [
    "DecisionCounts",
    "binary_f1",
    "choice_credit",
    "decision_counts",
    "mean_and_sample_std",
    "parse_ranking",
    "ranking_from_values",
    "reciprocal_rank",
]

# What follows the last of these in a reply is the ranking (any case).
_LABEL = re.compile(r"(ranking|answer)\s*:", re.IGNORECASE)
_LONE = re.compile(r"^\(?([A-Z])\)?$")
_SEPARATOR = re.compile(r"\s*[>,]\s*")


def _letters(n_options: int) -> str:
    return string.ascii_uppercase[:n_options]


def parse_ranking(reply: str | None, n_options: int = 4) -> list[int] | None:
    """The ranking a reply states, or ``None`` (invalid).

    Take what follows the last ``Ranking:`` or ``Answer:`` (any case) when there is one, else
    the whole reply; strip surrounding white space and one trailing ``.``. A lone letter ``X``
    or ``(X)`` is a one-item ranking; option letters separated by ``>`` or ``,`` (spaces around
    them allowed) are a ranking, a repeated letter dropped after its first place. Anything else
    (a letter past the options, lower-case letters, words) is invalid.
    """
    if reply is None:
        return None
    labels = list(_LABEL.finditer(reply))
    text = reply[labels[-1].end():] if labels else reply
    text = text.strip()
    text = text.removesuffix(".").strip()
    letters = _letters(n_options)
    lone = _LONE.match(text)
    if lone:
        return [letters.index(lone.group(1))] if lone.group(1) in letters else None
    parts = _SEPARATOR.split(text)
    if len(parts) < 2 or any(len(p) != 1 or p not in letters for p in parts):
        return None
    return _deduplicated([letters.index(p) for p in parts])


def ranking_from_values(values: Sequence[str | int], n_options: int = 4) -> list[int] | None:
    """A ranking given as data: option letters (``"B"``) or 0-based indices (``1``), best
    first, possibly partial, repeats dropped after their first place; ``None`` (invalid) when
    empty or when a value names no option (a boolean, ``"E"``, ``4`` of four options)."""
    letters = _letters(n_options)
    out: list[int] = []
    for value in values:
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            if not 0 <= value < n_options:
                return None
            out.append(value)
        elif isinstance(value, str) and len(value.strip()) == 1 and value.strip() in letters:
            out.append(letters.index(value.strip()))
        else:
            return None
    return _deduplicated(out) if out else None


def _deduplicated(ranking: list[int]) -> list[int]:
    return list(dict.fromkeys(ranking))


def reciprocal_rank(ranking: Sequence[int] | None, gold: int, n_options: int = 4) -> float:
    """1/rank of ``gold`` in ``ranking`` (0..1); 0 for an invalid reply (``None``).

    A partial ranking that omits the gold leaves the ``m`` unranked options tied on ranks
    ``len(ranking)+1 .. n_options``: the gold earns the mean of ``1/r`` over those ranks (one
    letter given and wrong, of four: (1/2 + 1/3 + 1/4) / 3)."""
    if ranking is None:
        return 0.0
    if gold in ranking:
        return 1.0 / (list(ranking).index(gold) + 1)
    remaining = range(len(ranking) + 1, n_options + 1)
    return fmean(1.0 / r for r in remaining) if remaining else 0.0


@dataclass
class DecisionCounts:
    """True positives, false positives and false negatives of a binary decision."""

    tp: int = 0
    fp: int = 0
    fn: int = 0


def decision_counts(gold_positive: Sequence[bool],
                    predicted_positive: Sequence[bool | None]) -> DecisionCounts:
    """Counts of a binary decision per question; ``None`` (an invalid or missing reply) is the
    wrong decision: a false negative when the gold is positive, a false positive when not."""
    if len(gold_positive) != len(predicted_positive):
        raise ValueError("one prediction per gold decision")
    counts = DecisionCounts()
    for gold, predicted in zip(gold_positive, predicted_positive, strict=True):
        said = (not gold) if predicted is None else predicted
        if gold and said:
            counts.tp += 1
        elif said:
            counts.fp += 1
        elif gold:
            counts.fn += 1
    return counts


def binary_f1(gold_positive: Sequence[bool],
              predicted_positive: Sequence[bool | None]) -> float | None:
    """F1 (0..1) of the positive class, ``2TP / (2TP + FP + FN)``, an invalid reply (``None``)
    counting as the wrong decision (``decision_counts``); ``None`` when there is no positive in
    the gold nor in the predictions (F1 undefined)."""
    counts = decision_counts(gold_positive, predicted_positive)
    denominator = 2 * counts.tp + counts.fp + counts.fn
    return 2 * counts.tp / denominator if denominator else None


def choice_credit(answer_type: str | None, *, answerable: bool,
                  vague_weight: float) -> float:
    """Credit of one answer (0..1) by the type of the option picked: ``correct`` (the gold of
    an answerable question, or the abstain option of an unanswerable one: the caller says
    ``"correct"`` for the gold) 1; ``vague`` of an answerable question ``vague_weight``;
    anything else, and an invalid reply (``None``), 0."""
    if answer_type == "correct":
        return 1.0
    if answer_type == "vague" and answerable:
        return vague_weight
    return 0.0


def mean_and_sample_std(values: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and *sample* standard deviation (n - 1) of group scores; the mean is ``None`` for
    no group and the deviation ``None`` for fewer than two."""
    if not values:
        return None, None
    return fmean(values), (stdev(values) if len(values) >= 2 else None)
