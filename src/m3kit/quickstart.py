"""``m3kit quickstart``: a synthetic M3Eval-style suite, the offline baseline with and without
memory, tables in which every number carries its n and a 95 % interval, and a reading derived
from those intervals, in a few minutes on a 2-core CPU.

The result is a list of ``ReportSection``s (tables, then notes: the reading and the caveats),
printed by ``m3kit quickstart``, written to ``report.md`` and placed first in the HTML report, so
the terminal, the Markdown and the HTML say the same. A further benchmark's part is one function
returning ``(section, eval-log paths)`` and one call in ``run_quickstart``.

Everything is cached (the suite, decoded frames, OCR, model responses), so a second run only
reads logs and prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from m3kit.benchmarks.m3eval.answer_tables import (
    SampleRow,
    accuracy_tables,
    cost_table,
    evidence_table,
    interference_table,
    nback_table,
    readings,
    rows_from_run,
    table_notes,
    uniform_answers,
)
from m3kit.metrics.bootstrap import MIN_UNITS, number_text
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import ReportSection, Table

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

TASKS = ("synth_divided_attention", "synth_interference", "synth_interleaved", "synth_nback")
DEFAULT_MEMORIES = ("none", "rag")
# Frames per probe: the offline baseline reads every frame with OCR, so the quickstart shows it
# fewer than M3Eval's 96 (16 over a 12 s probe: about two per 1.5 s beat) and spends the time on
# more source pairs, the unit its intervals rest on. N-back keeps the paper's 8 frames per clip.
DEFAULT_FRAMES = 16
BASELINE_NOTE = (
    "m3kit/builtin is a text-surrogate baseline, not a VLM: it reads frames with OCR, so it can "
    "beat chance only where on-screen text carries the answer (text on screen); where only the "
    "pixels do (visual only), chance is the honest expectation. Gold letters are balanced by "
    "construction and the baseline breaks ties by a hash of the question, not by letter, so "
    "answering one letter scores exactly chance.")

Progress = Callable[[str, int, int], None]


class QuickstartResult(BaseModel):
    """What the quickstart made: the suite folder, the eval logs, ``report.md``, the HTML
    report and the sections printed (each: tables, then notes)."""

    suite: Path
    logs: list[str]
    report: Path
    html: Path
    sections: list[ReportSection]

    @property
    def tables(self) -> list[Table]:
        return [table for section in self.sections for table in section.tables]


def run_quickstart(
    out_dir: str | Path = "m3kit-quickstart",
    *,
    model: str = "m3kit/builtin",
    memories: Sequence[str] = DEFAULT_MEMORIES,
    frames: int = DEFAULT_FRAMES,
    limit: int | None = None,
    progress: Progress | None = None,
) -> QuickstartResult:
    """Build the quickstart suite under ``out_dir/suite``, evaluate ``model`` on every paradigm
    with each memory, and write ``out_dir/report.md`` and the HTML report
    ``out_dir/report/index.html`` (these sections first, then M3Eval's Tables 1-3 and Figures
    9-11 as ``m3kit report`` draws them: the suite has no repetition probes for Figure 8)."""
    from m3kit.synth import SuiteConfig, build_suite

    out = Path(out_dir)
    report = progress or (lambda _stage, _done, _total: None)
    suite = build_suite(out / "suite", SuiteConfig.small(),
                        progress=lambda stage, done, total: report(f"suite: {stage}", done, total))
    from m3kit.report.logs import read_run

    logs_by_memory = _evaluate(suite.root, out / "logs", model=model, memories=memories,
                               frames=frames, limit=limit, progress=report)
    runs = {memory: [read_run(log) for log in memory_logs]
            for memory, memory_logs in logs_by_memory.items()}
    sections = suite_sections(runs)
    logs = [log.location for memory_logs in logs_by_memory.values() for log in memory_logs]
    # further benchmarks' parts: one call each
    from m3kit.benchmarks.supermemory.quickstart import quickstart_section

    section, more_logs = quickstart_section(out / "supermemory", model=model, limit=limit,
                                            progress=report, read_run=read_run,
                                            memories=memories)
    sections.append(section)
    logs += more_logs
    report("report", 0, 1)
    from m3kit.report.build import build_report

    html = build_report(logs, out / "report", title=f"m3kit quickstart: {model}", lead=sections)
    path = write_report(out / "report.md", sections, model=model, frames=frames, logs=logs)
    report("done", 1, 1)
    return QuickstartResult(suite=suite.root, logs=logs, report=path, html=html,
                            sections=sections)


def _evaluate(suite: Path, log_dir: Path, *, model: str, memories: Sequence[str], frames: int,
              limit: int | None, progress: Progress) -> dict[str, list[EvalLog]]:
    """Run every task with each memory; the logs by memory (``none``: direct)."""
    from m3kit.benchmarks import run_benchmark_task

    steps = [(memory, task) for memory in memories for task in TASKS]
    logs: dict[str, list[EvalLog]] = {}
    for done, (memory, task) in enumerate(steps):
        progress(f"eval: {task} ({memory})", done, len(steps))
        log = run_benchmark_task(
            task, model, memory=None if memory == "none" else memory,
            task_args={"suite": str(suite),
                                 **({} if task == "synth_nback" else {"frames": frames})},
            limit=limit, log_dir=log_dir,
        )
        logs.setdefault(memory, []).append(log)
    return logs


def suite_sections(runs: Mapping[str, Sequence[LoggedRun]]) -> list[ReportSection]:
    """The synthetic suite's part from the runs by memory (``none``: direct): the headline
    (accuracy by evidence, the reading, the memory comparison), then the breakdowns with their
    notes."""
    rows: list[SampleRow] = [row for memory_runs in runs.values() for run in memory_runs
                             for row in rows_from_run(run)]
    headline = ReportSection(
        benchmark="m3eval", title="M3Eval-style synthetic suite: what the answers show",
        tables=[evidence_table(rows)],
        notes=[*readings(rows), *memory_readings(runs), *uniform_answers(rows), BASELINE_NOTE])
    breakdown = ReportSection(
        benchmark="m3eval", title="M3Eval-style synthetic suite: breakdowns",
        tables=[*accuracy_tables(rows), interference_table(rows), nback_table(rows),
                cost_table(rows)],
        notes=table_notes(rows))
    return [headline, breakdown]


def memory_readings(runs: Mapping[str, Sequence[LoggedRun]]) -> list[str]:
    """Each memory against answering directly, paired on the same questions by ``m3kit
    compare``'s machinery (``m3kit.report.compare.compare_runs``): the difference in accuracy,
    its interval and whether it is beyond the noise."""
    from m3kit.benchmarks.m3eval import BENCHMARK
    from m3kit.report.compare import RunItems, compare_runs, run_items

    def merged(memory: str) -> RunItems:
        parts = [run_items(BENCHMARK, run, run.location) for run in runs[memory]]
        items = {key: item for part in parts for key, item in part.items.items()}
        return parts[0].model_copy(update={"items": items})

    if "none" not in runs:
        return []
    direct = merged("none")
    lines = []
    for memory in runs:
        if memory == "none":
            continue
        comparison = compare_runs(direct, merged(memory))
        number = comparison.numbers.get("accuracy")
        if number is None or number.diff is None:
            continue
        interval = ("" if number.lo is None or number.hi is None else
                    f" [{number_text(number.lo, '+.1f')}, {number_text(number.hi, '+.1f')}]")
        if number.significant:
            verdict = "beyond the noise"
        elif number.n_units < MIN_UNITS:
            verdict = f"too few units ({number.n_units}) to tell"
        else:
            verdict = "inside the noise: no difference shown"
        lines.append(f"{comparison.b} minus {comparison.a}, accuracy on the same "
                     f"{comparison.n_shared} questions: {number_text(number.diff, '+.1f')}"
                     f"{interval} points (paired, {number.n_units} units): {verdict}.")
    return lines


def write_report(path: Path, sections: Sequence[ReportSection], *, model: str, frames: int,
                 logs: Sequence[str]) -> Path:
    """A Markdown report: what was run, each section's tables and notes, where the logs are."""
    lines = [
        "# m3kit quickstart",
        "",
        (f"Model `{model}` on the synthetic M3Eval-style suite, {frames} uniform frames "
         "per probe (8 per clip for N-back)."),
        "",
    ]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for table in section.tables:
            lines += [table.to_markdown(), ""]
        lines += [f"- {note}" for note in section.notes] + [""]
    lines += ["Eval logs (open with `inspect view`):", ""] + [f"- `{log}`" for log in logs]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
