"""Confidence intervals on a run's headline numbers, for any declared benchmark.

A benchmark's scoring (``Benchmark.scoring``) has its headline numbers (``headline``), the
independent unit of an item (``cluster_of``, described by the declaration's ``ci_unit``) and how
a run's items are read (``items_from_log``, ``items_from_predictions``); this module joins them to
``m3kit.metrics.bootstrap.cluster_bootstrap`` for ``m3kit score --ci``, ``m3kit eval``'s summary
and ``m3kit report``. A system that ``m3kit report`` pools from several tasks' logs is resampled
task by task (``run_intervals``), so each of its numbers has the interval ``m3kit eval`` printed
for the task that holds it, and its tables, figures and the quickstart show that one interval.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from m3kit.benchmarks.declaration import Benchmark
from m3kit.metrics.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    few_units_note,
)
from m3kit.schema.evallog import LoggedRun, LoggedSample
from m3kit.schema.report import NA, Table

__all__ = [
    "HeadlineIntervals",
    "interval_lines",
    "intervals_table",
    "item_intervals",
    "log_intervals",
    "prediction_intervals",
    "run_intervals",
    "system_intervals",
]


class HeadlineIntervals(BaseModel):
    """Each headline number with its percentile interval and the units it rests on (``ci``),
    what was resampled (``ci_unit``), the level, the number of resamples and the seed.
    ``model_dump()`` is the part ``m3kit score --ci --json`` adds."""

    model_config = ConfigDict(frozen=True)

    ci: dict[str, Interval]
    ci_unit: str
    ci_level: float
    ci_resamples: int
    ci_seed: int

    def heading(self) -> str:
        """``95 % intervals, 2000 resamples of <unit>, seed 0``."""
        return (f"{self.ci_level * 100:g} % intervals, {self.ci_resamples} resamples of "
                f"{self.ci_unit}, seed {self.ci_seed}")


def item_intervals(benchmark: Benchmark, items: Sequence[Any], *,
                   resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                   seed: int = DEFAULT_SEED) -> HeadlineIntervals:
    """The headline intervals of a run's per-item records (``BenchmarkScoring.item``)."""
    return HeadlineIntervals(
        ci=benchmark.headline_intervals(items, resamples=resamples, level=level, seed=seed),
        ci_unit=benchmark.ci_unit, ci_level=level, ci_resamples=resamples, ci_seed=seed,
    )


def prediction_intervals(benchmark: Benchmark, data: Path, predictions: Path,
                         options: Mapping[str, Any] | None = None, *,
                         resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                         seed: int = DEFAULT_SEED) -> HeadlineIntervals:
    """The headline intervals of an external predictions file, its items read as
    ``score_predictions`` reads them (``options``: the same keywords)."""
    read = benchmark.scoring.load().items_from_predictions
    if read is None:
        raise ValueError(f"benchmark {benchmark.name!r} declares no per-item records")
    items = read(data, predictions, **(options or {}))
    return item_intervals(benchmark, items, resamples=resamples, level=level, seed=seed)


def log_intervals(benchmark: Benchmark, samples: Sequence[LoggedSample], *,
                  resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                  seed: int = DEFAULT_SEED) -> HeadlineIntervals:
    """The headline intervals of a run's samples (``m3kit.report.logs.read_samples``)."""
    read = benchmark.scoring.load().items_from_log
    if read is None:
        raise ValueError(f"benchmark {benchmark.name!r} declares no per-item records")
    return item_intervals(benchmark, read(samples), resamples=resamples, level=level, seed=seed)


def run_intervals(benchmark: Benchmark, runs: Sequence[LoggedRun], *,
                  statistic: Callable[[list[Any]], Mapping[str, float | None]] | None = None
                  ) -> HeadlineIntervals:
    """The intervals of one system's ``runs`` (their samples pooled) at the bootstrap's
    defaults: the headline numbers, or those of ``statistic`` over the benchmark's per-item
    records. Each task's run (``LoggedRun.tasks``) is a part sampled apart
    (``m3kit.metrics.bootstrap.parts_bootstrap``): a number one task defines gets the interval
    that task's own run gives it (``m3kit eval``'s), and every table and figure that shows a
    number of the system takes it from here."""
    from m3kit.metrics.bootstrap import parts_bootstrap

    scoring = benchmark.scoring.load()
    read, cluster_of = scoring.items_from_log, scoring.cluster_of
    if read is None or cluster_of is None:
        raise ValueError(f"benchmark {benchmark.name!r} declares no per-item records")
    if statistic is None:
        if scoring.headline is None:
            raise ValueError(f"benchmark {benchmark.name!r} declares no headline numbers")
        statistic = scoring.headline
    parts = [read(part.samples) for run in runs for part in run.tasks()]
    return HeadlineIntervals(
        ci=parts_bootstrap(parts, cluster_of, statistic),
        ci_unit=benchmark.ci_unit, ci_level=DEFAULT_LEVEL, ci_resamples=DEFAULT_RESAMPLES,
        ci_seed=DEFAULT_SEED,
    )


def interval_lines(intervals: HeadlineIntervals, names: Mapping[str, str], *,
                   scale: float = 1.0, spec: str = ".1f", width: int = 80) -> list[str]:
    """``label value [lo, hi] (n units)`` for the headline numbers ``names`` maps to labels (in
    its order; undefined numbers left out), times ``scale``, joined with `` · `` into lines of
    at most ``width`` characters under the heading (wrapped at word boundaries)."""
    cells = []
    for name, label in names.items():
        interval = intervals.ci.get(name)
        if interval is None or interval.value is None:
            continue
        cells.append(f"{label} {interval.scaled(scale).text(spec, units=True)}")
    if not cells:
        return []
    lines, line = textwrap.wrap(intervals.heading() + ":", width, subsequent_indent="  "), "  "
    for cell in cells:
        joined = f"{line} · {cell}" if line.strip() else f"{line}{cell}"
        if len(joined) > width and line.strip():
            lines.append(line)
            line = f"  {cell}"
        else:
            line = joined
    lines.append(line)
    return lines


def system_intervals(benchmark: Benchmark, runs: Sequence[LoggedRun],
                     system_of: Callable[[LoggedRun], str]) -> dict[str, HeadlineIntervals]:
    """The headline intervals of each system (``system_of``; its runs pooled, each task
    apart: ``run_intervals``), in first-seen order; empty without headline numbers."""
    scoring = benchmark.scoring.load()
    if scoring.headline is None or scoring.items_from_log is None:
        return {}
    systems: dict[str, list[LoggedRun]] = {}
    for run in runs:
        systems.setdefault(system_of(run), []).append(run)
    return {system: run_intervals(benchmark, its) for system, its in systems.items()}


def intervals_table(benchmark: Benchmark,
                    by_system: Mapping[str, HeadlineIntervals]) -> Table | None:
    """``m3kit report``'s table of headline numbers (``m3kit.report.build`` appends it to each
    benchmark's sections): one row per number defined for some system, one column per system
    of ``by_system`` (``system_intervals``), each ``value [lo, hi] (n units)`` as the benchmark
    prints an interval in a report (``Benchmark.interval_spec``: one interval reads the same in
    the quickstart's section and in the report); None when no number is defined."""
    every = dict.fromkeys(name for i in by_system.values() for name in i.ci)
    names = [name for name in every
             if any(name in i.ci and i.ci[name].value is not None for i in by_system.values())]
    if not names:
        return None
    first = next(iter(by_system.values()))
    rows = [[name, *(i.ci[name].text(benchmark.interval_spec, units=True)
                     if name in i.ci and i.ci[name].value is not None else NA
                     for i in by_system.values())]
            for name in names]
    few = any(i.ci[name].few_units for i in by_system.values() for name in names
              if name in i.ci and i.ci[name].value is not None)
    caption = first.heading() + (f". {few_units_note()}" if few else "")
    return Table(title=f"{benchmark.title} · headline numbers with intervals",
                 columns=["number", *by_system], rows=rows, caption=caption)
