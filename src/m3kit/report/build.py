"""``m3kit report``'s library side: each benchmark's runs to its declared report sections, one
HTML report.

The inputs (eval logs, folders of them, score files) are read by ``m3kit.report.inputs``; the logs
of one system are pooled into one run there. Each run goes to the benchmark that declares its
task and is rendered by ``Benchmark.report_sections``; ``--baseline`` adds a comparison section
(``m3kit.report.compare``) and every report ends with how each run was made (its card).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from m3kit.benchmarks import BENCHMARKS
from m3kit.report.inputs import card_benchmark, pooled_runs, read_humans, read_inputs
from m3kit.report.logs import benchmark_of

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from m3kit.schema.evallog import LoggedRun
    from m3kit.schema.report import ReportSection

__all__ = ["build_report", "how_runs_were_made"]

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
        label = benchmark.system_label.load()
        made += [(label(run), run) for run in runs]
        sections += benchmark.report_sections.load()(runs, out, cards=cards,
                                                     humans=given_humans)
        if base is not None and base.benchmark == benchmark.name:
            sections.append(baseline_section(benchmark, base, runs))
    how = how_runs_were_made(made)
    return write_report([*sections, how] if how is not None else sections, out, title=title)


def how_runs_were_made(runs: Sequence[tuple[str, LoggedRun]]) -> ReportSection | None:
    """The report's last section: one small table per run (labelled as its benchmark labels
    it) of its reproducibility card, the prompt by its sha256 and, under the table, its text
    (collapsed); ``None`` when no run has a card."""
    from m3kit.schema.report import ReportSection, Table

    tables = [
        Table(title=f"{run.task}: {label}", columns=["setting", "value"],
              rows=[list(row) for row in run.card.rows()],
              details=[("prompt template", run.card.prompt_template)]
              if run.card.prompt_template else [])
        for label, run in runs if run.card is not None
    ]
    if not tables:
        return None
    note = ("Each run's reproducibility card, as its eval log records it "
            "(docs/metrics.md, \"Reproducibility card\").")
    return ReportSection(benchmark="", title="How each run was made", tables=tables,
                         notes=[note])
