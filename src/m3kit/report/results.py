"""A run's results file (``m3kit.schema.results.RunResults``), built from its log by the code
that builds ``m3kit eval``'s summary: the samples ``m3kit.report.logs.read_samples`` reads, the
headline intervals ``m3kit.report.summary.headline_lines`` prints
(``m3kit.benchmarks.intervals.log_intervals``, the same resamples and seed), the benchmark's
own ``scores_from_log`` card (``m3kit score --json``'s numbers) and ``logged_card``. Nothing is
scored anew here and nothing is rounded.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from m3kit.errors import M3kitError
from m3kit.files import atomic_write_text
from m3kit.report.logs import benchmark_of, foreign_task, logged_card, read_samples
from m3kit.schema.failures import FailureCount
from m3kit.schema.results import FailedSample, HeadlineNumber, RunResults, results_path

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["run_results", "write_results"]


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0] if lines else text


def run_results(log: EvalLog, *, skipped_records: int = 0) -> RunResults:
    """The results of the run ``log`` holds (read with its samples); ``skipped_records``: how
    many records its loader skipped (``m3kit.harness.skips.skipped_of``, which this layer
    cannot import). A task m3kit does not own gets its counts and card, no headline."""
    samples = read_samples(log)
    reasons = [_first_line(s.reason) if s.failed else None for s in samples]
    results: dict = {
        "task": str(log.eval.task), "model": str(log.eval.model), "status": str(log.status),
        "log": str(log.location), "n": len(samples), "failures": FailureCount.of(reasons),
        "failed_samples": [FailedSample(id=s.id, reason=r)
                           for s, r in zip(samples, reasons, strict=True) if r is not None],
        "skipped_records": skipped_records, "card": logged_card(log),
    }
    if not foreign_task(log):
        benchmark = benchmark_of(log)
        results["benchmark"] = benchmark.name
        scoring = benchmark.scoring.load()
        if benchmark.summary_intervals and scoring.items_from_log is not None:
            from m3kit.benchmarks.intervals import log_intervals

            intervals = log_intervals(benchmark, samples)
            results.update(
                headline={name: HeadlineNumber.model_validate(i.model_dump())
                          for name, i in intervals.ci.items()},
                printed=dict(benchmark.summary_intervals), ci_unit=intervals.ci_unit,
                ci_level=intervals.ci_level, ci_resamples=intervals.ci_resamples,
                ci_seed=intervals.ci_seed)
        try:
            results["score"] = scoring.scores_from_log(samples).score_json()
        except M3kitError:  # nothing to score (every sample failed): the counts say why
            results["score"] = None
    return RunResults.model_validate(results)


def write_results(log: EvalLog, *, skipped_records: int = 0) -> Path:
    """Write ``run_results(log)`` beside the log (``results_path``), atomically; returns the
    path. A resumed run rewrites it."""
    path = results_path(str(log.location))
    atomic_write_text(path, run_results(log, skipped_records=skipped_records)
                      .model_dump_json(indent=2) + "\n")
    return path
