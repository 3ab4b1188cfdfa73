"""Scoring text against evidence units: a lexical score and a dense score, blended.

- lexical: idf-weighted coverage of a hypothesis' words by one evidence unit. For an option
  only its *distinctive* words count (words every option shares say nothing about which is
  right), and a unit that also covers the question's words counts more (``0.5 + 0.5 q``), so
  "the keys are on the table" supports "table" for "where are the keys?" more than "the mug is
  on the table" does.
- dense: cosine between the embedding of "question + option" and each unit, best unit.

Both lie in [0, 1] and are blended with ``lexical_weight``. Scores are rounded to 4 decimals
before any comparison so that float noise (batch padding in the embedder) never flips a
decision; ties go to the earlier letter.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from m3kit.models.evidence import EvidenceUnit, tokens
from m3kit.perception.base import TextEmbedder

_DECIMALS = 4


@dataclass(frozen=True)
class Support:
    """How well evidence supports one hypothesis (an option, or the question's statement)."""

    score: float
    lexical: float
    dense: float
    evidence: str | None  # the unit that supports it best (None without evidence)


class EvidenceScorer:
    """Scores options, statements and units against evidence with one embedder.

    Embeddings are cached per text inside the instance (many questions share one context).
    """

    def __init__(
        self, embedder: TextEmbedder, *, lexical_weight: float = 0.5, cache_size: int = 50_000
    ) -> None:
        if not 0.0 <= lexical_weight <= 1.0:
            raise ValueError(f"lexical_weight must be in [0, 1], got {lexical_weight}")
        self.embedder = embedder
        self.lexical_weight = lexical_weight
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._cache_size = cache_size

    def score_options(
        self, question: str, options: Sequence[str], units: Sequence[EvidenceUnit]
    ) -> list[Support]:
        """Support for each option (in order) as the answer to ``question``."""
        option_tokens = [set(tokens(text)) for text in options]
        shared = set.intersection(*option_tokens) if len(option_tokens) > 1 else set()
        distinctive = [(t - shared) or t for t in option_tokens]
        hypotheses = [f"{question} {text}".strip() for text in options]
        return self._support(question, hypotheses, distinctive, units)

    def statement_support(self, statement: str, units: Sequence[EvidenceUnit]) -> Support:
        """Support for the statement a Yes/No question asks about."""
        return self._support("", [statement], [set(tokens(statement))], units)[0]

    def rank_units(
        self, question: str, units: Sequence[EvidenceUnit]
    ) -> list[tuple[EvidenceUnit, float]]:
        """Units by relevance to ``question``, best first (ties: conversation order)."""
        if not units:
            return []
        unit_tokens = [set(tokens(u.text)) for u in units]
        idf = _idf(unit_tokens)
        wanted = set(tokens(question))
        lexical = [_coverage(wanted, t, idf) for t in unit_tokens]
        dense = self._dense([question], units)[0]
        scored = [
            (unit, _round(self.lexical_weight * lex + (1 - self.lexical_weight) * den))
            for unit, lex, den in zip(units, lexical, dense, strict=True)
        ]
        order = sorted(range(len(units)), key=lambda n: (-scored[n][1], n))
        return [scored[n] for n in order]

    def _support(
        self,
        question: str,
        hypotheses: Sequence[str],
        words: Sequence[set[str]],
        units: Sequence[EvidenceUnit],
    ) -> list[Support]:
        if not units:
            return [Support(0.0, 0.0, 0.0, None) for _ in hypotheses]
        unit_tokens = [set(tokens(u.text)) for u in units]
        idf = _idf(unit_tokens)
        asked = set(tokens(question))
        relevance = [_coverage(asked, t, idf) if asked else 1.0 for t in unit_tokens]
        dense = self._dense(hypotheses, units)
        out = []
        for n, wanted in enumerate(words):
            per_unit = [
                _coverage(wanted, t, idf) * (0.5 + 0.5 * rel)
                for t, rel in zip(unit_tokens, relevance, strict=True)
            ]
            lexical = max(per_unit)
            best_dense = float(dense[n].max())
            score = self.lexical_weight * lexical + (1 - self.lexical_weight) * best_dense
            # The quoted unit is the one the blend prefers, unit by unit.
            blend = [
                self.lexical_weight * lex + (1 - self.lexical_weight) * den
                for lex, den in zip(per_unit, dense[n], strict=True)
            ]
            best = max(range(len(units)), key=lambda k: (round(blend[k], _DECIMALS), -k))
            out.append(
                Support(_round(score), _round(lexical), _round(best_dense), units[best].text)
            )
        return out

    def _dense(self, hypotheses: Sequence[str], units: Sequence[EvidenceUnit]) -> np.ndarray:
        """Cosine (clipped to [0, 1]) of each hypothesis against each unit: (hyps, units)."""
        vectors = self.embed([*hypotheses, *(u.text for u in units)])
        sims = vectors[: len(hypotheses)] @ vectors[len(hypotheses) :].T
        return np.clip(sims, 0.0, 1.0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` (rows), from the cache where possible."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for text, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self._cache[text] = np.asarray(vector, dtype=np.float32)
        rows = []
        for text in texts:
            self._cache.move_to_end(text)
            rows.append(self._cache[text])
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return np.stack(rows) if rows else np.zeros((0, self.embedder.dim), dtype=np.float32)


def calibrate_threshold(answerable: Sequence[float], unanswerable: Sequence[float]) -> float:
    """The abstention threshold that best separates two sets of best-option scores.

    ``answerable``: the best option's score on questions whose evidence supports an option;
    ``unanswerable``: the same on questions whose evidence supports none. Returns the midpoint
    between adjacent observed scores that maximises balanced accuracy (mean of the two
    per-set accuracies; answering when ``score >= threshold``). Ties go to the lowest such
    threshold (abstain less).
    """
    if not answerable or not unanswerable:
        raise ValueError("calibration needs scores for both answerable and unanswerable items")
    values = sorted(set(answerable) | set(unanswerable))
    cuts = [values[0] - 1e-6] + [(a + b) / 2 for a, b in itertools.pairwise(values)]
    cuts.append(values[-1] + 1e-6)
    pos = np.asarray(answerable, dtype=float)
    neg = np.asarray(unanswerable, dtype=float)

    def balanced(cut: float) -> float:
        return 0.5 * float((pos >= cut).mean()) + 0.5 * float((neg < cut).mean())

    best = max(cuts, key=lambda cut: (round(balanced(cut), 9), -cut))
    return round(best, _DECIMALS)


class _Idf(dict[str, float]):
    """BM25's idf over the units. A word found in no unit weighs what a word in zero units
    would: the most, so an option naming something the evidence never mentions is penalised."""

    def __init__(self, unit_tokens: Sequence[set[str]]) -> None:
        n = len(unit_tokens)
        df: dict[str, int] = {}
        for words in unit_tokens:
            for word in words:
                df[word] = df.get(word, 0) + 1
        super().__init__({w: math.log(1 + (n - d + 0.5) / (d + 0.5)) for w, d in df.items()})
        self.unseen = math.log(1 + (n + 0.5) / 0.5)

    def __missing__(self, word: str) -> float:
        return self.unseen


def _idf(unit_tokens: Sequence[set[str]]) -> _Idf:
    return _Idf(unit_tokens)


def _coverage(wanted: set[str], present: set[str], idf: _Idf) -> float:
    """idf-weighted share of ``wanted`` words found in ``present``."""
    if not wanted:
        return 0.0
    total = sum(idf[w] for w in wanted)
    found = sum(idf[w] for w in wanted if w in present)
    return found / total if total > 0 else 0.0


def _round(value: float) -> float:
    return round(float(value), _DECIMALS)
