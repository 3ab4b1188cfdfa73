"""What ``m3kit eval`` prints after a run: one headline table, in its benchmark's terms.

The benchmark of the log (``m3kit.report.logs.benchmark_of``: the one its task declares, an
unknown task being an ``UnknownTaskError`` as in ``m3kit eval`` itself) gives the columns and rows
(``BenchmarkScoring.summary_rows``), computed by its own scoring functions over the samples
``m3kit.report.logs.read_samples`` reads, the reader ``m3kit report`` uses too: M3Eval's
accuracy and intrusion rate per group, Video-MME-v2's Non-Lin score and Avg Acc, M3Exam's
EM / F1 / BLEU-1 (and LLM-J when judged) per question type. Costs (tokens in, images) are means
over answered samples.

A task m3kit does not own (``m3kit.report.logs.foreign_task``: ``m3kit eval file.py@task``)
gets one generic row: samples, failed (inspect's error or the solver's failure), mean tokens
in and out over the others, and the metrics inspect's own scorers reported.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import fmean
from typing import TYPE_CHECKING

from m3kit.benchmarks import Benchmark
from m3kit.report.failures import failure_lines
from m3kit.report.logs import benchmark_of, foreign_task, logged_card, read_samples
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import LoggedSample
from m3kit.schema.report import NA, SummaryTable, cost_cell, number_cell

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["INDENT", "NA", "SummaryTable", "display_rows", "headline_lines", "summary_table",
           "summary_title"]

INDENT = "  "  # a group value under its ``key=`` heading (``display_rows``)


def _generic_rows(log: EvalLog,
                  samples: list[LoggedSample]) -> tuple[list[str], list[list[str]]]:
    """One row for a task no benchmark declares: n, failed, mean tokens in and out over the
    samples that got an answer, then each metric inspect's scorers reported
    (``<scorer> <metric>``, three decimals)."""
    replied = [s for s in samples if s.error is None and s.failure is None]
    tokens_in = fmean(s.usage.prompt_tokens for s in replied) if replied else math.nan
    tokens_out = fmean(s.usage.completion_tokens for s in replied) if replied else math.nan
    columns = ["group", "n", "failed", "tok in", "tok out"]
    row = ["all", str(len(samples)), str(len(samples) - len(replied)), cost_cell(tokens_in),
           cost_cell(tokens_out)]
    for score in (log.results.scores if log.results is not None else []):
        for metric in score.metrics.values():
            columns.append(f"{score.name} {metric.name}")
            row.append(number_cell(metric.value, 3))
    return columns, [row]


def summary_table(log: EvalLog) -> SummaryTable:
    """The headline table of one eval log (read with its samples), for its benchmark; the
    generic row for a task m3kit does not own; its caption is the run's reproducibility card on
    one line (model · memory · frames · blind · data fingerprint)."""
    samples = read_samples(log)
    intervals: list[str] = []
    if foreign_task(log):
        columns, rows = _generic_rows(log, samples)
    else:
        benchmark = benchmark_of(log)
        columns, rows = benchmark.scoring.load().summary_rows(samples)
        intervals = headline_lines(benchmark, samples)
    card = logged_card(log)
    failed = sum(s.failed and not s.excluded for s in samples)  # excluded: unreadable media
    status = (f"{log.status}, {failed} of {len(samples)} samples failed" if failed
              else log.status)
    return SummaryTable(title=summary_title(log.eval.task, log.eval.model, card, status),
                        columns=columns, rows=rows, intervals=intervals,
                        caption=f"run: {card.summary_line()}" if card is not None else None,
                        failures=failure_lines(samples))


def summary_title(task: str, model: str, card: ReproCard | None, status: str) -> str:
    """``task · model · memory · frames · blind · regime · status``: how the run was made, in
    the title, so runs with ``--memory rag``, ``--blind``, another M3Exam regime or none of them
    never print the same heading (a task without a card: ``task · model · status``)."""
    if card is None:
        return f"{task} · {model} · {status}"
    memory = f"memory {card.memory}" if card.memory else "no memory"
    frames = f"frames {card.frames_text()}" if card.frames is not None else None
    blind = "blind" if card.blind else None
    regime = card.settings.get("regime")
    parts = [task, model, memory, frames, blind, f"regime {regime}" if regime else None, status]
    return " · ".join(part for part in parts if part)


def headline_lines(benchmark: Benchmark, samples: Sequence[LoggedSample]) -> list[str]:
    """The summary's headline numbers (``Benchmark.summary_intervals``, labelled as its
    columns, on its one scale, ``m3kit score``'s and ``m3kit report``'s, in the digits of its
    table, ``Benchmark.summary_format``) as ``value [lo, hi] (n units)``: 95 % percentile
    intervals over 2000 resamples of the benchmark's unit, seed 0
    (``m3kit.benchmarks.intervals``); none for a benchmark without headline numbers or a run
    without items."""
    if not benchmark.summary_intervals or benchmark.scoring.load().items_from_log is None:
        return []
    from m3kit.benchmarks.intervals import interval_lines, log_intervals

    return interval_lines(log_intervals(benchmark, samples), benchmark.summary_intervals,
                          spec=benchmark.summary_format)


def display_rows(table: SummaryTable) -> list[list[str]]:
    """``table``'s rows as a terminal shows them: each ``key=value`` group label becomes its
    value, indented, under a heading row ``key=`` with empty cells (once per run of one key).
    The label column then needs only the longest value, not ``key=value``, so an 80-column
    terminal never breaks a label mid-word."""
    out: list[list[str]] = []
    heading: str | None = None
    for row in table.rows:
        key, sep, value = row[0].partition("=")
        if not sep:
            heading = None
            out.append(list(row))
            continue
        if key != heading:
            heading = key
            out.append([f"{key}=", *[""] * (len(row) - 1)])
        out.append([f"{INDENT}{value}", *row[1:]])
    return out
