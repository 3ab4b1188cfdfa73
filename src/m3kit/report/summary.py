"""What ``m3kit eval`` prints after a run: one headline table, in its benchmark's terms.

The benchmark of the log (``m3kit.report.logs.benchmark_of``: the one its task declares, an
unknown task being an ``UnknownTaskError`` as in ``m3kit eval`` itself) gives the columns and rows
(``Benchmark.summary_rows``), computed by its own scoring functions over the samples
``m3kit.report.logs.read_samples`` reads, the reader ``m3kit report`` uses too: M3Eval's
accuracy and intrusion rate per group, Video-MME-v2's Non-Lin score and Avg Acc, M3Exam's
EM / F1 / BLEU-1 (and LLM-J when judged) per question type. Costs (tokens in, images) are means
over answered samples.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from m3kit.report.logs import benchmark_of, read_samples
from m3kit.schema.report import NA, SummaryTable

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["INDENT", "NA", "SummaryTable", "display_rows", "summary_table"]

INDENT = "  "  # a group value under its ``key=`` heading (``display_rows``)


def summary_table(log: EvalLog) -> SummaryTable:
    """The headline table of one eval log (read with its samples), for its benchmark."""
    benchmark = benchmark_of(log)
    columns, rows = benchmark.summary_rows.load()(read_samples(log))
    return SummaryTable(title=f"{log.eval.task} · {log.eval.model} · {log.status}",
                        columns=columns, rows=rows)


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
