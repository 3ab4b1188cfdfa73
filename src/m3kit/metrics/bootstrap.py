"""Confidence intervals and paired tests by the cluster bootstrap, and McNemar's exact test.

Questions of one benchmark are not independent: M3Eval asks several questions of one source
video, Video-MME-v2 asks its questions in groups of 4 about one video, M3Exam asks several
questions of one session. Resampling questions would treat them as independent and give
intervals that are too narrow, so the resampled unit is the cluster (Field & Welsh, "Bootstrapping
clustered data", JRSS-B 2007): each resample draws as many units as there are, with replacement,
keeps every item of each drawn unit, and recomputes the statistic on the pooled items. The
interval is the percentile interval of the resampled statistic (Efron & Tibshirani, "An
Introduction to the Bootstrap", 1993, ch. 13).

The draws are fixed by the seed: ``group_units`` numbers the units in sorted order of their
names, and resample ``r`` takes the units
``numpy.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))[r]``, so two
runs (and the paired comparison of two systems, which draws the same units for both) agree,
whatever order their items came in. A resample in which a number is undefined (None or NaN: no
question of that kind was drawn) is left out of that number's interval.

Every number carries ``n_units``, the units it rests on (those on whose items alone it is
defined). The percentile interval of a cluster bootstrap covers poorly with few clusters: it
cannot be wider than the spread of the units' own values, and with a handful of units it is
too narrow (Field & Welsh 2007, sec. 4; Cameron, Gelbach & Miller, "Bootstrap-based
improvements for inference with clustered errors", REStat 2008, whose simulations show
over-rejection with 5 to 10 clusters). So a number on fewer than 2 units has no interval, and
one on fewer than ``MIN_UNITS`` has its interval shown with its unit count and, as a paired
difference, no p-value and never counts as significant. Pure functions, no I/O.

Items pooled from parts sampled apart (one system's runs of several tasks) are resampled part
by part where a number rests on some parts only (``parts_bootstrap``): a task's own number
gets the interval of that task's run, not one that varies with how many of its units each
resample of all the tasks drew.
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
    "MIN_UNITS",
    "Interval",
    "PairedDifference",
    "cluster_bootstrap",
    "few_units_note",
    "group_units",
    "mcnemar_exact",
    "number_text",
    "paired_cluster_bootstrap",
    "parts_bootstrap",
    "units_text",
]

DEFAULT_RESAMPLES = 2000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
# Below this many units a percentile cluster-bootstrap interval undercovers (see the module
# docstring): the interval is shown flagged with its unit count, and a paired difference gets
# no p-value and no significance mark.
MIN_UNITS = 10

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

Statistic = Callable[[list[T]], Mapping[str, float | None]]


def number_text(value: float | None, spec: str = ".1f", *, signed: bool = False,
                missing: str = "-") -> str:
    """``value`` in the format ``spec`` (with its sign when ``signed``); ``missing`` for None.
    A value that rounds to zero prints without a minus sign (``0.00``, ``+0.00``), never as
    ``-0.00``: the one formatter of every interval and difference."""
    if value is None:
        return missing
    text = format(value, ("+" if signed else "") + spec)
    if text.startswith("-") and not any(c in "123456789" for c in text.split("e")[0]):
        text = ("+" if signed else "") + text[1:]
    return text


def few_units_note() -> str:
    """What a unit count under ``MIN_UNITS`` means, for the note under a table."""
    return (f"A number on fewer than {MIN_UNITS} units has an unreliable interval (the "
            "percentile cluster bootstrap undercovers with few units), and on fewer than 2 "
            "none")


def units_text(n_units: int) -> str:
    """``(1 unit)``, ``(3 units)``."""
    return f"({n_units} unit{'' if n_units == 1 else 's'})"


class Interval(BaseModel):
    """A number, its percentile interval and ``n_units``, the units it rests on (those on
    whose items alone it is defined); None where the number is undefined, ``lo``/``hi`` None
    on fewer than 2 units."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    lo: float | None
    hi: float | None
    n_units: int

    @property
    def few_units(self) -> bool:
        """Whether the number rests on fewer than ``MIN_UNITS`` units."""
        return self.n_units < MIN_UNITS

    def text(self, spec: str = ".1f", *, units: bool = False) -> str:
        """``value [lo, hi]`` in the format ``spec`` (``"-"`` for an undefined number), with
        the unit count where the number rests on fewer than ``MIN_UNITS`` units (``50.0 [0.0,
        100.0] (3 units)``, ``50.0 (1 unit)``), or always with ``units``."""
        if self.value is None:
            return "-"
        text = number_text(self.value, spec)
        if self.lo is not None and self.hi is not None:
            text += f" [{number_text(self.lo, spec)}, {number_text(self.hi, spec)}]"
        return f"{text} {units_text(self.n_units)}" if units or self.few_units else text

    def scaled(self, factor: float) -> Interval:
        """The same interval with the value and bounds times ``factor``."""
        def times(v: float | None) -> float | None:
            return None if v is None else v * factor

        return Interval(value=times(self.value), lo=times(self.lo), hi=times(self.hi),
                        n_units=self.n_units)


class PairedDifference(BaseModel):
    """One number of two systems on the same items: ``a``, ``b``, their difference ``b - a``,
    its percentile interval (None on fewer than 2 units), a two-sided bootstrap p-value (None
    on fewer than the comparison's minimum of units) and ``n_units``, the units on whose items
    alone both systems define the number."""

    model_config = ConfigDict(frozen=True)

    a: float | None
    b: float | None
    diff: float | None
    lo: float | None
    hi: float | None
    p_value: float | None
    n_units: int

    @property
    def few_units(self) -> bool:
        """Whether the difference rests on fewer than ``MIN_UNITS`` units."""
        return self.n_units < MIN_UNITS

    @property
    def significant(self) -> bool:
        """Whether the difference is marked significant: it has a p-value (enough units) and
        its interval excludes 0."""
        return (self.p_value is not None and self.lo is not None and self.hi is not None
                and (self.lo > 0 or self.hi < 0))

    def interval_text(self, spec: str = ".2f", missing: str = "-") -> str:
        """``[lo, hi]`` with signs (``missing`` without an interval)."""
        if self.lo is None or self.hi is None:
            return missing
        return (f"[{number_text(self.lo, spec, signed=True)}, "
                f"{number_text(self.hi, spec, signed=True)}]")


def group_units(items: Iterable[T], key: Callable[[T], K]) -> list[list[T]]:
    """``items`` grouped into units by ``key``, units in sorted order of their names (``str``
    of the key) and items in their given order within a unit: the same units in the same
    order, so the same draws, whatever order the items came in (a log's, a predictions
    file's)."""
    units: dict[K, list[T]] = {}
    for item in items:
        units.setdefault(key(item), []).append(item)
    return [units[name] for name in sorted(units, key=str)]


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


def _units_defining(units: Sequence[Sequence[T]], statistic: Statistic[T]) -> dict[str, int]:
    """Per number, the units on whose items alone it is defined."""
    counts: dict[str, int] = {}
    for unit in units:
        for name, value in statistic(list(unit)).items():
            counts[name] = counts.get(name, 0) + (_defined(value) is not None)
    return counts


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
    undefined. A number resting on fewer than 2 units (``Interval.n_units``) has no interval.
    """
    _check_level(level)
    units = [list(u) for u in units if len(u)]
    full = statistic([item for unit in units for item in unit])
    if not units:
        return {name: Interval(value=_defined(v), lo=None, hi=None, n_units=0)
                for name, v in full.items()}
    counts = _units_defining(units, statistic)
    samples = _resampled(units, statistic, _draws(len(units), resamples, seed))
    intervals: dict[str, Interval] = {}
    for name, value in full.items():
        value = _defined(value)
        n_units = counts.get(name, 0) if value is not None else 0
        lo = hi = None
        if value is not None and n_units >= 2:
            lo, hi = _percentiles(
                [d for s in samples if (d := _defined(s.get(name))) is not None], level)
        intervals[name] = Interval(value=value, lo=lo, hi=hi, n_units=n_units)
    return intervals


def _same(a: float | None, b: float | None) -> bool:
    a, b = _defined(a), _defined(b)
    return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-12))


def parts_bootstrap(parts: Sequence[Sequence[T]], key: Callable[[T], Hashable],
                    statistic: Statistic[T], *, resamples: int = DEFAULT_RESAMPLES,
                    level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED
                    ) -> dict[str, Interval]:
    """``cluster_bootstrap`` of items pooled from ``parts`` sampled apart (one system's runs
    of several tasks, each its own set of questions): each number is resampled over the units
    (``key``) of the parts whose items alone define it, as a run of those parts alone
    resamples it. A number that one task defines (M3Eval's N-back accuracy) so gets the
    interval of that task's own run, whatever other tasks were pooled beside it, instead of one
    that varies with how many of its units each resample of all tasks happened to draw.

    A number no part defines alone (a difference across parts), or whose value on its parts
    differs from its value on every item, is resampled over all the parts' units together. One
    part: ``cluster_bootstrap`` itself."""
    nonempty = [list(part) for part in parts if len(part)]
    everything = [item for part in nonempty for item in part]
    if len(nonempty) <= 1:
        return cluster_bootstrap(group_units(everything, key), statistic,
                                 resamples=resamples, level=level, seed=seed)
    full = statistic(everything)
    alone = [statistic(part) for part in nonempty]
    by_parts: dict[tuple[int, ...], list[str]] = {}
    for name in full:
        chosen = tuple(i for i, values in enumerate(alone)
                       if _defined(values.get(name)) is not None)
        if not chosen or (len(chosen) < len(nonempty) and not _same(
                statistic([item for i in chosen for item in nonempty[i]]).get(name), full[name])):
            chosen = tuple(range(len(nonempty)))
        by_parts.setdefault(chosen, []).append(name)
    intervals: dict[str, Interval] = {}
    for chosen, names in by_parts.items():
        pooled = [item for i in chosen for item in nonempty[i]]
        drawn = cluster_bootstrap(group_units(pooled, key), statistic, resamples=resamples,
                                  level=level, seed=seed)
        intervals.update({name: drawn[name] for name in names})
    return {name: intervals[name] for name in full}


def paired_cluster_bootstrap(units: Sequence[Sequence[tuple[T, T]]], statistic: Statistic[T],
                             *, resamples: int = DEFAULT_RESAMPLES,
                             level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
                             min_units: int = MIN_UNITS) -> dict[str, PairedDifference]:
    """Two systems compared on the same items: ``units`` of ``(a's item, b's item)`` pairs.

    Per number of ``statistic``: its value for a and for b, the difference ``b - a``, the
    percentile interval of the difference over resamples that draw the same units for both, and
    the two-sided p-value ``2 * min(P(d <= 0), P(d >= 0))`` of the resampled differences ``d``,
    at most 1 (the bootstrap test of Efron & Tibshirani 1993, ch. 16, by the interval's
    duality). ``n_units``: the units on whose items alone both systems define the number; on
    fewer than 2 there is no interval, on fewer than ``min_units`` no p-value.
    """
    _check_level(level)
    units = [list(u) for u in units if len(u)]
    pairs = [pair for unit in units for pair in unit]
    full_a = statistic([a for a, _ in pairs])
    full_b = statistic([b for _, b in pairs])
    units_a = [[a for a, _ in unit] for unit in units]
    units_b = [[b for _, b in unit] for unit in units]
    n_both: dict[str, int] = {}
    for unit_a, unit_b in zip(units_a, units_b, strict=True):
        one_a, one_b = statistic(unit_a), statistic(unit_b)
        for name in one_a:
            both = (_defined(one_a.get(name)) is not None
                    and _defined(one_b.get(name)) is not None)
            n_both[name] = n_both.get(name, 0) + both
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
        n_units = n_both.get(name, 0) if diff is not None else 0
        lo = hi = p_value = None
        if diff is not None and drawn and n_units >= 2:
            lo, hi = _percentiles(drawn, level)
        if diff is not None and drawn and n_units >= max(2, min_units):
            d = np.asarray(drawn)
            p_value = min(1.0, 2 * min(float(np.mean(d <= 0)), float(np.mean(d >= 0))))
        differences[name] = PairedDifference(a=a, b=b, diff=diff, lo=lo, hi=hi, p_value=p_value,
                                             n_units=n_units)
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
