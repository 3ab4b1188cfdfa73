"""Confidence intervals and paired tests by the cluster bootstrap, and McNemar's exact test.

Questions of one benchmark are not independent: M3Eval asks several questions of one source
video, Video-MME-v2 asks its questions in groups of 4 about one video, M3Exam asks several
questions of one session. Resampling questions would treat them as independent and give
intervals that are too narrow, so the resampled unit is the cluster (Field & Welsh, "Bootstrapping
clustered data", JRSS-B 2007): each resample draws as many units as there are, with replacement,
keeps every item of each drawn unit, and recomputes the statistic on the pooled items. The
interval is the percentile interval of the resampled statistic (Efron & Tibshirani, "An
Introduction to the Bootstrap", 1993, ch. 13).

The draws are fixed by the seed: resample ``r`` takes the units
``numpy.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))[r]``, so two
runs (and the paired comparison of two systems, which draws the same units for both) agree.
A resample in which a number is undefined (None or NaN: no question of that kind was drawn) is
left out of that number's interval. Pure functions, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from fractions import Fraction
from typing import TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

__all__ = [
    "DEFAULT_LEVEL",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "Interval",
    "PairedDifference",
    "cluster_bootstrap",
    "group_units",
    "mcnemar_exact",
    "paired_cluster_bootstrap",
]

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

Statistic = Callable[[list[T]], Mapping[str, float | None]]


class Interval(BaseModel):
    """A number and its percentile interval; None where the number is undefined."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    lo: float | None
    hi: float | None

    def text(self, spec: str = ".1f") -> str:
        """``value [lo, hi]`` in the format ``spec`` (``"-"`` for an undefined number)."""
        if self.value is None:
            return "-"
        if self.lo is None or self.hi is None:
            return format(self.value, spec)
        return f"{self.value:{spec}} [{self.lo:{spec}}, {self.hi:{spec}}]"


class PairedDifference(BaseModel):
    """One number of two systems on the same items: ``a``, ``b``, their difference ``b - a``,
    its percentile interval and a two-sided bootstrap p-value."""

    model_config = ConfigDict(frozen=True)

    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    p_value: float | None


def group_units(items: Iterable[T], key: Callable[[T], K]) -> list[list[T]]:
    """``items`` grouped into units by ``key``, units in order of first appearance and items in
    their given order within a unit."""
    units: dict[K, list[T]] = {}
    for item in items:
        units.setdefault(key(item), []).append(item)
    return list(units.values())


def _defined(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return float(value)


def _draws(n_units: int, resamples: int, seed: int) -> np.ndarray:
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    return np.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")


def _percentiles(values: list[float], level: float) -> tuple[float | None, float | None]:
    """The ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles (numpy's linear
    interpolation between order statistics)."""
    if not values:
        return None, None
    lo, hi = np.quantile(np.asarray(values), [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _resampled(units: Sequence[Sequence[T]], statistic: Statistic[T],
               draws: np.ndarray) -> list[Mapping[str, float | None]]:
    return [statistic([item for u in row for item in units[u]]) for row in draws.tolist()]


def cluster_bootstrap(units: Sequence[Sequence[T]], statistic: Statistic[T], *,
                      resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                      seed: int = DEFAULT_SEED) -> dict[str, Interval]:
    """Per number of ``statistic``: its value on all items and its percentile interval over
    ``resamples`` cluster resamples of ``units``.

    ``statistic`` maps a list of items to named numbers (None where undefined) and returns the
    same names for every list. Empty units are ignored; with no unit at all every interval is
    undefined.
    """
    _check_level(level)
    units = [list(u) for u in units if len(u)]
    full = statistic([item for unit in units for item in unit])
    if not units:
        return {name: Interval(value=_defined(v), lo=None, hi=None) for name, v in full.items()}
    samples = _resampled(units, statistic, _draws(len(units), resamples, seed))
    intervals: dict[str, Interval] = {}
    for name, value in full.items():
        value = _defined(value)
        drawn = [d for s in samples if (d := _defined(s.get(name))) is not None]
        lo, hi = _percentiles(drawn, level) if value is not None else (None, None)
        intervals[name] = Interval(value=value, lo=lo, hi=hi)
    return intervals


def paired_cluster_bootstrap(units: Sequence[Sequence[tuple[T, T]]], statistic: Statistic[T],
                             *, resamples: int = DEFAULT_RESAMPLES,
                             level: float = DEFAULT_LEVEL,
                             seed: int = DEFAULT_SEED) -> dict[str, PairedDifference]:
    """Two systems compared on the same items: ``units`` of ``(a's item, b's item)`` pairs.

    Per number of ``statistic``: its value for a and for b, the difference ``b - a``, the
    percentile interval of the difference over resamples that draw the same units for both, and
    the two-sided p-value ``2 * min(P(d <= 0), P(d >= 0))`` of the resampled differences ``d``,
    at most 1 (the bootstrap test of Efron & Tibshirani 1993, ch. 16, by the interval's
    duality).
    """
    _check_level(level)
    units = [list(u) for u in units if len(u)]
    pairs = [pair for unit in units for pair in unit]
    full_a = statistic([a for a, _ in pairs])
    full_b = statistic([b for _, b in pairs])
    units_a = [[a for a, _ in unit] for unit in units]
    units_b = [[b for _, b in unit] for unit in units]
    if units:
        draws = _draws(len(units), resamples, seed)
        samples_a = _resampled(units_a, statistic, draws)
        samples_b = _resampled(units_b, statistic, draws)
    else:
        samples_a = samples_b = []
    differences: dict[str, PairedDifference] = {}
    for name in full_a:
        a, b = _defined(full_a.get(name)), _defined(full_b.get(name))
        diff = b - a if a is not None and b is not None else None
        drawn: list[float] = []
        for sa, sb in zip(samples_a, samples_b, strict=True):
            da, db = _defined(sa.get(name)), _defined(sb.get(name))
            if da is not None and db is not None:
                drawn.append(db - da)
        lo = hi = p_value = None
        if diff is not None and drawn:
            lo, hi = _percentiles(drawn, level)
            d = np.asarray(drawn)
            p_value = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
        differences[name] = PairedDifference(a=a, b=b, diff=diff, lo=lo, hi=hi, p_value=p_value)
    return differences


def mcnemar_exact(b: int, c: int) -> float:
    """McNemar's exact two-sided p-value on the discordant pairs: ``b`` items only the first
    system answered correctly, ``c`` only the second. Under the null each discordant pair goes
    either way with probability 1/2, so p = 2 * P(Binomial(b + c, 1/2) <= min(b, c)), at most 1
    (McNemar 1947; the exact form as in statsmodels' ``mcnemar(exact=True)``)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = Fraction(sum(math.comb(n, k) for k in range(min(b, c) + 1)), 2**n)
    return float(min(Fraction(1), 2 * tail))
