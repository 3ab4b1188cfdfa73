"""``m3kit report``'s library side: each benchmark's runs to its declared report sections, one
HTML report.

The inputs (eval logs, folders of them, score files) are read by ``m3kit.report.inputs``; the logs
of one system are pooled into one run there. Each run goes to the benchmark that declares its
task and is rendered by the benchmark's report (``Benchmark.reporting``), followed by the table
of its systems' headline numbers with their intervals, computed here once (the figures' error
bars take them too); ``--baseline`` adds a comparison section (``m3kit.report.compare``) and
every report ends with how each run was made (its card).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m3kit.benchmarks import BENCHMARKS, Benchmark
from m3kit.report.inputs import card_benchmark, pooled_runs, read_humans, read_inputs
from m3kit.report.logs import benchmark_of
from m3kit.schema.report import ReportSection

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from m3kit.schema.card import ReproCard
    from m3kit.schema.evallog import LoggedRun

__all__ = ["benchmark_sections", "build_report", "card_rows", "how_runs_were_made"]

logger = logging.getLogger(__name__)


def build_report(paths: Sequence[str | Path], out_dir: str | Path,
                 humans: str | Path | None = None, title: str = "m3kit report",
                 baseline: str | Path | None = None,
                 lead: Sequence[ReportSection] = ()) -> Path:
    """Read ``paths``, render each benchmark's sections into ``out_dir``, write the report;
    return the path of ``index.html``. ``baseline``: an eval log or a folder of one system's
    logs; its benchmark's runs get a section comparing each with it
    (``m3kit.report.compare.baseline_section``). ``lead``: sections placed first, as given
    (the quickstart's, so the page says what its terminal said)."""
    from m3kit.report.compare import baseline_section, run_from_logs
    from m3kit.report.html import write_report

    inputs = read_inputs(paths)
    base = run_from_logs(baseline) if baseline is not None else None
    human_scores = read_humans(humans) if humans is not None else None
    human_of = card_benchmark(human_scores) if human_scores is not None else None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_benchmark: dict[str, list[EvalLog]] = {}
    for log in inputs.logs:
        if log.status != "success":
            logger.warning("%s: run %s, reporting the samples it has", log.location, log.status)
        by_benchmark.setdefault(benchmark_of(log).name, []).append(log)
    sections: list[ReportSection] = list(lead)
    made: list[tuple[str, LoggedRun]] = []
    for benchmark in BENCHMARKS:
        logs = by_benchmark.get(benchmark.name, [])
        cards = inputs.cards.get(benchmark.name, {})
        given_humans = human_scores if human_of is benchmark else None
        if not logs and not cards and given_humans is None:
            continue
        runs = pooled_runs(benchmark, logs)
        label = benchmark.reporting.load().system_label
        made += [(label(run), run) for run in runs]
        sections += benchmark_sections(benchmark, runs, out, cards=cards, humans=given_humans)
        if base is not None and base.benchmark == benchmark.name:
            sections.append(baseline_section(benchmark, base, runs))
    how = how_runs_were_made(made)
    return write_report([*sections, how] if how is not None else sections, out, title=title)


def benchmark_sections(benchmark: Benchmark, runs: Sequence[LoggedRun], out_dir: str | Path, *,
                       cards: Mapping[str, Mapping[str, Any]] | None = None,
                       humans: Mapping[str, Any] | None = None) -> list[ReportSection]:
    """``benchmark``'s part of the report: its own sections for ``runs`` (one per system, a
    system's logs pooled), ``cards`` (score files by system) and ``humans``, figures written into
    ``out_dir``, and the table of its systems' headline numbers as ``value [lo, hi] (n units)``
    (``m3kit.benchmarks.intervals``) in ``<title> · Confidence intervals``: first in the section
    of that title where the benchmark gives one (intervals of its other numbers), else in a
    section of its own after the others. Each system's intervals are computed once, here, and
    handed to the benchmark's sections too (its figures' error bars)."""
    from m3kit.benchmarks.intervals import intervals_table, system_intervals
    from m3kit.benchmarks.protocol import ReportContext

    reporting = benchmark.reporting.load()
    headline = system_intervals(benchmark, runs, reporting.system_label)
    sections = reporting.sections(ReportContext(
        benchmark=benchmark, runs=runs, out_dir=Path(out_dir), cards=cards or {},
        humans=humans, headline=headline))
    table = intervals_table(benchmark, headline) if headline else None
    if table is None:
        return sections
    title = f"{benchmark.title} · Confidence intervals"
    given = next((section for section in sections if section.title == title), None)
    if given is not None:
        given.tables.insert(0, table)
    else:
        sections.append(ReportSection(benchmark=benchmark.name, title=title, tables=[table]))
    return sections


def how_runs_were_made(runs: Sequence[tuple[str, LoggedRun]]) -> ReportSection | None:
    """The report's last section: one small table per task of each run (labelled as its
    benchmark labels the run) of that task's reproducibility card and its task arguments
    (credentials as ``***``), the prompt by its sha256 and, under the table, its text
    (collapsed); ``None`` when no run has a card. A run pooled from several tasks' logs
    (``LoggedRun.parts``) gets a table per task, each task's own settings, as its log records
    them: the frames, arguments and prompt of one paradigm are never shown for the others."""
    from m3kit.schema.report import Table

    tables = []
    for label, run in runs:
        parts = [(part, part.card) for part in run.tasks() if part.card is not None]
        for part, card in parts:
            caption = (f"One of the {len(parts)} tasks whose logs are pooled into {label} "
                       f"({', '.join(p.task for p, _ in parts)})." if len(parts) > 1 else "")
            tables.append(Table(
                title=f"{part.task}: {label}", columns=["setting", "value"],
                rows=[list(row) for row in card_rows(card, part.task_args)], caption=caption,
                details=[("prompt template", card.prompt_template)]
                if card.prompt_template else []))
    if not tables:
        return None
    note = ("Each run's reproducibility card, as its eval log records it "
            "(docs/metrics.md, \"Reproducibility card\"); a run pooled from several tasks "
            "shows each task's.")
    return ReportSection(benchmark="", title="How each run was made", tables=tables,
                         notes=[note])


def card_rows(card: ReproCard, task_args: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``card``'s rows (``ReproCard.rows``) with the task's arguments after the task's name
    (``frames=16, suite=...``; credentials as ``***``, as the card's model arguments)."""
    from m3kit.models.redact import public_model_args

    rows = card.rows()
    # an argument left at None takes the task's own default, which the card's rows name
    shown = public_model_args({k: v for k, v in task_args.items() if v is not None})
    if not shown:
        return rows
    text = ", ".join(f"{name}={_arg_text(value)}" for name, value in sorted(shown.items()))
    at = next((i + 1 for i, (name, _) in enumerate(rows) if name == "task"), len(rows))
    return [*rows[:at], ("task arguments", text), *rows[at:]]


def _arg_text(value: Any) -> str:
    if isinstance(value, Mapping | list):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)
