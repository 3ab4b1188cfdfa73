"""``m3kit report --layout main``: the M3Exam paper's main table (seed 002, Table 2; its full
four-metric breakdown, Table 4) for memory runs of M3Exam and of LoCoMo (which runs through
M3Exam's task and scorer).

One row per system (``m3kit.report.memory_rows``: one answer model with one setting), grouped
as the paper groups them: no memory (direct), text-based memory systems, multimodal memory
systems (the class rule is ``memory_rows``'). One column group per question type (LoCoMo: per
category) with its questions (``n``), EM, F1 and BLEU-1 (F1 and BLEU-1 not for FM and FJ, as
the paper), and LLM-J where a judge score exists in the logs; then Avg. (EM over every item;
F1, BLEU-1 and LLM-J over the items outside FM and FJ) and, when judged, the Overall Score.
M3Exam and LoCoMo runs never share a table.

Every number is M3Exam's own, over the items its scoring counts (``items_from_log``: a sample
inspect recorded as errored is left out, a failed answer scores 0), so a cell equals
``m3kit score m3exam``'s and the report's intervals table's; each carries its 95 % percentile
interval over 2000 resamples of M3Exam's unit (the session of the question's evidence), seed 0,
as every interval m3kit reports (``m3kit.metrics.bootstrap``). A judge's partial coverage
(some items of a cell judged, others not) shows as ``k of n judged``, never as a mean over the
subset. The records keep every number unrounded (``--json``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from m3kit.benchmarks import Benchmark
from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.benchmarks.m3exam.load import QUESTION_TYPES
from m3kit.benchmarks.m3exam.locomo import LOCOMO_TYPES
from m3kit.benchmarks.m3exam.report import benchmark_of, column_name
from m3kit.benchmarks.m3exam.score import cluster_of, headline, items_from_log, rule_judged
from m3kit.metrics.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    Interval,
    few_units_note,
    parts_bootstrap,
)
from m3kit.report.memory_rows import (
    CLASS_TITLES,
    MemoryClass,
    RunIdentity,
    flag_models,
    model_note,
    run_identity,
)
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import NA, ReportSection, Table

__all__ = [
    "METRICS",
    "MainTable",
    "MemoryRow",
    "MetricCell",
    "main_section",
    "main_table",
    "main_tables",
    "memory_row",
]

Metric = Literal["em", "f1", "bleu1", "llm_judge"]
METRICS: dict[Metric, str] = {"em": "EM", "f1": "F1", "bleu1": "BLEU-1", "llm_judge": "LLM-J"}
# every column's heading: the metrics, a group's questions, and Avg.'s Overall Score
HEADINGS: dict[str, str] = {**{str(k): v for k, v in METRICS.items()}, "n": "n",
                            "overall": "Overall"}
AVG = "avg"  # the Avg. group's key among the types
TITLES = {"m3exam": "M3Exam", "locomo": "LoCoMo"}


class MetricCell(Interval):
    """One cell: the number with its interval (``Interval``: ``None`` where undefined), ``n``
    the items it averages, and for LLM-J ``judged``, how many of them have a judge score
    (fewer than ``n``: a partial judge, the value ``None``)."""

    n: int
    judged: int | None = None

    @property
    def partial(self) -> bool:
        return self.judged is not None and 0 < self.judged < self.n


class MemoryRow(BaseModel):
    """One system's row: who it is, its questions (the items scored), its cells per type
    (``per_type[type][metric]``) and over all types (``avg``, with ``overall`` when judged)."""

    model_config = ConfigDict(frozen=True)

    run: RunIdentity
    questions: int
    per_type: dict[str, dict[str, MetricCell]]
    avg: dict[str, MetricCell]


class MainTable(BaseModel):
    """The main table of one data family (``benchmark``: ``m3exam`` or ``locomo``): its types in
    the paper's order, whether a judge scored any item (``judged``: LLM-J columns shown), the
    bootstrap's settings and the rows, in the input's order (``groups`` orders them)."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    types: list[str]
    judged: bool
    ci_unit: str
    ci_level: float
    ci_resamples: int
    ci_seed: int
    rows: list[MemoryRow]

    def groups(self) -> list[tuple[MemoryClass, list[MemoryRow]]]:
        """The rows by class, in ``CLASS_TITLES``' order, empty classes left out."""
        return [(cls, members) for cls in CLASS_TITLES
                if (members := [r for r in self.rows if r.run.memory_class == cls])]


def _type_order(qtype: str) -> tuple[int, str]:
    # M3Exam's types in the paper's order, then LoCoMo's categories 1-5 (never one table)
    order = (*QUESTION_TYPES, *LOCOMO_TYPES)
    return (order.index(qtype) if qtype in order else len(order), qtype)


def _type_of(item: M3ExamItem) -> str:
    return str(item.question_type or "?")


def _statistic(types: Sequence[str]
               ) -> Callable[[list[M3ExamItem]], dict[str, float | None]]:
    """The table's numbers of a list of items, flat (``ss.em``, ``avg.overall``): per type
    M3Exam's ``headline`` over that type's items (its TOTAL rules over one type are the
    per-type rules: F1, BLEU-1 and LLM-J over the type's items outside FM and FJ), and the
    headline itself over all items for Avg."""
    def numbers(items: list[M3ExamItem]) -> dict[str, float | None]:
        by_type: dict[str, list[M3ExamItem]] = defaultdict(list)
        for item in items:
            by_type[_type_of(item)].append(item)
        out: dict[str, float | None] = {}
        for qtype in types:
            values = headline(by_type.get(qtype, []))
            out.update({f"{qtype}.{metric}": values[metric] for metric in METRICS})
        out.update({f"{AVG}.{name}": value for name, value in headline(items).items()})
        return out

    return numbers


def _counts(items: Sequence[M3ExamItem]) -> dict[str, tuple[int, int | None]]:
    """Per metric, the items it averages and, for LLM-J, how many have a judge score."""
    soft = [i for i in items if i.in_total]
    return {
        "em": (len(items), None),
        "f1": (sum(i.f1 is not None for i in soft), None),
        "bleu1": (sum(i.bleu1 is not None for i in soft), None),
        "llm_judge": (len(soft), sum(i.llm_judge is not None for i in soft)),
        "overall": (len(items), None),
    }


def _cells(intervals: dict[str, Interval], prefix: str, items: Sequence[M3ExamItem]
           ) -> dict[str, MetricCell]:
    return {metric: MetricCell(**intervals[f"{prefix}.{metric}"].model_dump(), n=n,
                               judged=judged)
            for metric, (n, judged) in _counts(items).items()
            if f"{prefix}.{metric}" in intervals}


def memory_row(identity: RunIdentity, run: LoggedRun, types: Sequence[str]) -> MemoryRow:
    """One system's row over ``types``: its items as M3Exam counts them, each task's run
    resampled apart (``parts_bootstrap``, as ``m3kit.benchmarks.intervals.run_intervals``)."""
    parts = [rule_judged(items_from_log(part.samples)) for part in run.tasks()]
    everything = [item for part in parts for item in part]
    intervals = parts_bootstrap(parts, cluster_of, _statistic(types))
    by_type: dict[str, list[M3ExamItem]] = defaultdict(list)
    for item in everything:
        by_type[_type_of(item)].append(item)
    return MemoryRow(
        run=identity, questions=len(everything),
        per_type={qtype: _cells(intervals, qtype, by_type[qtype]) for qtype in types
                  if by_type.get(qtype)},
        avg=_cells(intervals, AVG, everything),
    )


def main_table(benchmark: Benchmark, runs: Sequence[LoggedRun], family: str) -> MainTable:
    """The main table of ``runs`` (one per system, as ``m3kit.report.inputs.pooled_runs``
    gives them: all of one data family, ``m3exam`` or ``locomo``)."""
    identities = flag_models([run_identity(benchmark, run) for run in runs])
    types = sorted({_type_of(item) for run in runs for item in items_from_log(run.samples)},
                   key=_type_order)
    rows = [memory_row(identity, run, types)
            for identity, run in zip(identities, runs, strict=True)]
    judged = any((cell.judged or 0) > 0 for row in rows
                 for cells in (*row.per_type.values(), row.avg)
                 for metric, cell in cells.items() if metric == "llm_judge")
    return MainTable(benchmark=family, types=types, judged=judged, ci_unit=benchmark.ci_unit,
                     ci_level=DEFAULT_LEVEL, ci_resamples=DEFAULT_RESAMPLES,
                     ci_seed=DEFAULT_SEED, rows=rows)


def main_tables(benchmark: Benchmark, runs: Sequence[LoggedRun]) -> list[MainTable]:
    """M3Exam's runs as main tables, one per data family (M3Exam, LoCoMo), first-seen
    order."""
    families: dict[str, list[LoggedRun]] = {}
    for run in runs:
        families.setdefault(benchmark_of(run), []).append(run)
    return [main_table(benchmark, members, family) for family, members in families.items()]


def _columns(table: MainTable) -> list[tuple[str, list[str]]]:
    """The metric keys of each column group: per type the metrics some row defines (F1 and
    BLEU-1 where the type has items outside FM and FJ; LLM-J where, besides, a judge ran),
    then Avg. (with Overall when judged)."""
    def shown(group: str, metric: str) -> bool:
        if metric == "llm_judge" and not table.judged:
            return False
        cells = [row.avg if group == AVG else row.per_type.get(group, {}) for row in table.rows]
        return any(metric in c and c[metric].n > 0 for c in cells)

    groups: list[tuple[str, list[str]]] = []
    for group in (*table.types, AVG):
        metrics: list[str] = [m for m in METRICS if shown(group, m)]
        if group == AVG and table.judged:
            metrics.append("overall")
        groups.append((group, metrics))
    return groups


def _cell_text(cell: MetricCell | None, spec: str) -> str:
    if cell is None or cell.n == 0:
        return NA
    if cell.partial:
        return f"{cell.judged} of {cell.n} judged"
    return NA if cell.value is None else cell.text(spec, units=True)


def _heading(group: str) -> str:
    return "Avg." if group == AVG else column_name(group)


def main_section(benchmark: Benchmark, table: MainTable) -> ReportSection:
    """The main table as a report section: column groups per type (``n`` and the metrics), a
    heading row per class, each cell ``value [lo, hi] (k units)`` in M3Exam's digits; notes
    say how each row was classed and which rows' answer model differs."""
    groups = _columns(table)
    columns = ["System", "Model", "n"]
    header: list[tuple[str, int]] = [("", 3)]
    for group, metrics in groups:
        shown = metrics if group == AVG else ["n", *metrics]
        columns += [HEADINGS[m] for m in shown]
        header.append((_heading(group), len(shown)))
    rows: list[list[str]] = []
    for cls, members in table.groups():
        rows.append([CLASS_TITLES[cls], *[""] * (len(columns) - 1)])
        for row in members:
            cells = [row.run.label, row.run.model, str(row.questions)]
            for group, metrics in groups:
                found = row.avg if group == AVG else row.per_type.get(group, {})
                if group != AVG:  # the type's questions: the items its EM averages
                    cells.append(str(found["em"].n) if "em" in found else "0")
                cells += [_cell_text(found.get(m), benchmark.interval_spec) for m in metrics]
            rows.append(cells)
    title = TITLES.get(table.benchmark, table.benchmark)
    by = "category" if table.benchmark == "locomo" else "question type"
    few = any(cell.few_units for row in table.rows
              for cells in (*row.per_type.values(), row.avg) for cell in cells.values()
              if cell.value is not None)
    caption = (f"Each cell: value [lo, hi] (units): its {table.ci_level * 100:g} % percentile "
               f"interval over {table.ci_resamples} resamples of the {table.ci_unit}, seed "
               f"{table.ci_seed}; n: the questions scored (a sample that errored is left "
               "out, a failed answer scores 0). Avg.: EM over every item; F1, BLEU-1 and "
               "LLM-J over the items outside FM and FJ (paper Appendix B.2); LLM-J only "
               "where a judge scored; Overall = 0.5·LLM-J + (EM + F1 + BLEU-1)/6.")
    if few:
        caption += f" {few_units_note()}."
    classed = [f"{row.run.system}: {row.run.class_rule}" for row in table.rows
               if row.run.memory_class != "none"]
    notes = ["Classes (the first rule that applies): no memory: direct; memory_config "
             "send_images or vision true/false: multimodal/text; a name ending in -mm, "
             "-vision or -multimodal: multimodal, in -text: text; else multimodal when the "
             "run sent the answer model any image or page."
             + (f" {'; '.join(classed)}." if classed else "")]
    flagged = model_note([row.run for row in table.rows])
    notes += [flagged] if flagged else []
    return ReportSection(
        benchmark=benchmark.name, title=f"{title}: memory systems by {by}",
        tables=[Table(title=f"{title}: memory systems by {by} (EM / F1 / BLEU-1"
                            f"{' / LLM-J' if table.judged else ''})",
                      columns=columns, rows=rows, header_groups=header, caption=caption)],
        notes=notes)
