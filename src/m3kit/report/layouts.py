"""``m3kit report --layout``: which tables a report draws.

- ``full`` (the default): each benchmark's own sections (``m3kit.report.build``);
- ``main``: the M3Exam paper's main table for memory runs of M3Exam and LoCoMo
  (``m3kit.report.memory_table``);
- ``cost``: what each run cost, ingestion included, for runs of any benchmark
  (``m3kit.report.cost_table``).

``main`` and ``cost`` read the same inputs as the full report, each system's logs pooled the same
way (``m3kit.report.inputs.pooled_runs``: runs of another answer model or setting are other
rows); they read eval logs only, since score files hold no per-sample costs or items (a score
file among the inputs is named and left out). ``draw_layout`` gives a layout's sections and its
records, whose JSON (``LayoutReport.records_json``, ``m3kit report --json``) is unrounded and
keyed by benchmark, as ``m3kit compare --json`` keys its own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, cast, get_args

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks import BENCHMARKS, Benchmark, benchmark_named
from m3kit.errors import M3kitError
from m3kit.report.cost_table import CostRow, cost_rows, cost_section
from m3kit.report.inputs import pooled_runs, read_inputs
from m3kit.report.logs import benchmark_of
from m3kit.report.memory_table import MainTable, main_section, main_tables
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import ReportSection

__all__ = ["LAYOUTS", "Layout", "LayoutError", "LayoutReport", "check_layout", "draw_layout",
           "layout_runs", "write_layout"]

logger = logging.getLogger(__name__)

Layout = Literal["full", "main", "cost"]
LAYOUTS: tuple[str, ...] = get_args(Layout)
MAIN_BENCHMARK = "m3exam"  # the benchmark whose paper the main layout draws (LoCoMo with it)


class LayoutError(M3kitError):
    """A layout that is not known, or inputs it cannot draw."""


def check_layout(name: str) -> Layout:
    """``name`` as a ``Layout``; ``LayoutError`` naming the known ones otherwise."""
    if name in LAYOUTS:
        return cast(Layout, name)
    raise LayoutError(f"unknown layout {name!r} (one of {', '.join(LAYOUTS)})", field="--layout")


def layout_runs(paths: Sequence[str | Path]) -> list[tuple[Benchmark, list[LoggedRun]]]:
    """The runs of ``paths`` (eval logs, folders of them), one per system, by benchmark in
    the declarations' order; score files are named and left out."""
    inputs = read_inputs(paths)
    for name, cards in inputs.cards.items():
        logger.warning("left out %s score file(s) %s: the layout reads eval logs (per-sample "
                       "costs and items)", name, ", ".join(sorted(cards)))
    by_benchmark: dict[str, list[Any]] = {}
    for log in inputs.logs:
        by_benchmark.setdefault(benchmark_of(log).name, []).append(log)
    return [(benchmark, pooled_runs(benchmark, by_benchmark[benchmark.name]))
            for benchmark in BENCHMARKS if by_benchmark.get(benchmark.name)]


def _main_runs(paths: Sequence[str | Path]) -> tuple[Benchmark, list[LoggedRun]]:
    found = dict((b.name, (b, runs)) for b, runs in layout_runs(paths))
    if MAIN_BENCHMARK not in found:
        benchmark = benchmark_named(MAIN_BENCHMARK)
        title = benchmark.title if benchmark is not None else MAIN_BENCHMARK
        raise LayoutError(f"the main layout draws {title} (and LoCoMo) runs: the inputs hold "
                          f"none (they hold {', '.join(sorted(found)) or 'no eval log'})",
                          field="--layout")
    return found[MAIN_BENCHMARK]


class LayoutReport(BaseModel):
    """What a layout drew: its report sections, and its records, keyed by benchmark (``main``:
    one ``MainTable`` per data family, ``m3exam`` / ``locomo``; ``cost``: each benchmark's
    ``CostRow``s)."""

    model_config = ConfigDict(frozen=True)

    layout: Layout
    sections: list[ReportSection]
    main: dict[str, MainTable] = Field(default_factory=dict)
    cost: dict[str, list[CostRow]] = Field(default_factory=dict)

    def records_json(self) -> str:
        """The layout's records as JSON, every number unrounded."""
        records: dict[str, Any] = (
            {name: table.model_dump(mode="json") for name, table in self.main.items()}
            if self.layout == "main" else
            {name: [row.model_dump(mode="json") for row in rows]
             for name, rows in self.cost.items()})
        return json.dumps(records, indent=2)


def draw_layout(layout: Layout, paths: Sequence[str | Path]) -> LayoutReport:
    """``layout`` (``main`` or ``cost``) drawn for ``paths``."""
    if layout == "main":
        benchmark, runs = _main_runs(paths)
        tables = main_tables(benchmark, runs)
        return LayoutReport(layout=layout,
                            sections=[main_section(benchmark, t) for t in tables],
                            main={t.benchmark: t for t in tables})
    if layout == "cost":
        costs = [(benchmark, cost_rows(benchmark, runs))
                 for benchmark, runs in layout_runs(paths)]
        return LayoutReport(layout=layout,
                            sections=[cost_section(b, rows) for b, rows in costs],
                            cost={b.name: rows for b, rows in costs})
    raise LayoutError("the full report is build_report's: give --layout main or --layout cost "
                      "for a layout's records", field="--layout")


def write_layout(report: LayoutReport, out_dir: str | Path, title: str = "m3kit report"
                 ) -> Path:
    """Write ``report``'s sections (``index.html``, ``tables.md``) into ``out_dir``; return
    the path of ``index.html``."""
    from m3kit.report.html import write_report

    return write_report(report.sections, out_dir, title=title)
