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
from typing import TYPE_CHECKING, Any

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
from m3kit.errors import M3kitError
from m3kit.metrics.bootstrap import MIN_UNITS, number_text
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import ReportSection, Table

if TYPE_CHECKING:
    from inspect_ai.model import Model

TASKS = ("synth_divided_attention", "synth_interference", "synth_interleaved", "synth_nback")
# The paradigms the second process runs after SuperMemory-VQA's part (about half the work each).
SECOND_PROCESS_TASKS = ("synth_interleaved", "synth_nback")
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
    from m3kit.harness.preflight import check_model
    from m3kit.synth import SuiteConfig, build_suite

    out = Path(out_dir)
    report = progress or (lambda _stage, _done, _total: None)
    # One model for every run, as `m3kit eval A B` does: its embedder loads once and its
    # evidence embeddings (the same questions and frames with and without memory) are computed
    # once, instead of once per run.
    resolved = check_model(model)
    # Two processes share the work, so that both cores stay busy while one waits on a
    # single-threaded step (video encoding, a model answer, writing a log): this one renders the
    # suite and runs the first M3Eval paradigms; the second runs SuperMemory-VQA's part, then
    # the last paradigms once the suite is there. The parts share nothing but the caches (files,
    # safe across processes), and each paradigm reads its own frames, so no OCR is done twice.
    steps = [(memory, task) for memory in memories for task in TASKS]
    here = [step for step in steps if step[1] not in SECOND_PROCESS_TASKS]
    with _SecondProcess(_second_part, report,
                        supermemory_dir=out / "supermemory", suite_dir=out / "suite",
                        log_dir=out / "logs", model=model, limit=limit, frames=frames,
                        memories=tuple(memories),
                        steps=[s for s in steps if s not in here]) as second:
        suite = build_suite(out / "suite", SuiteConfig.small(),
                            progress=lambda stage, done, total: report(f"suite: {stage}", done,
                                                                       total))
        second.go_on()  # the suite is complete: the second process may read it
        done = _evaluate(suite.root, out / "logs", model=resolved, steps=here, frames=frames,
                         limit=limit, progress=report)
        theirs = second.result()
    done.update(theirs.m3eval)
    runs = {memory: [done[(memory, task)].run for task in TASKS] for memory in memories}
    sections = [*suite_sections(runs), theirs.supermemory]
    logs = [done[step].location for step in steps] + theirs.supermemory_logs
    report("report", 0, 1)
    from m3kit.report.build import build_report

    html = build_report(logs, out / "report", title=f"m3kit quickstart: {model}", lead=sections)
    path = write_report(out / "report.md", sections, model=model, frames=frames, logs=logs)
    report("done", 1, 1)
    return QuickstartResult(suite=suite.root, logs=logs, report=path, html=html,
                            sections=sections)


class _StepRun(BaseModel):
    """One (memory, task) run of the suite: what its log holds, and where the log is."""

    run: LoggedRun
    location: str


class _SecondPart(BaseModel):
    """What the second process made: SuperMemory-VQA's section and logs, and its M3Eval runs."""

    supermemory: ReportSection
    supermemory_logs: list[str]
    m3eval: dict[tuple[str, str], _StepRun]


def _second_part(progress: Progress, suite_ready: Any, *, supermemory_dir: Path, suite_dir: Path,
                 log_dir: Path, model: str, limit: int | None, frames: int,
                 memories: tuple[str, ...], steps: list[tuple[str, str]]) -> _SecondPart:
    """The second process's share: SuperMemory-VQA's part, then ``steps`` of the suite once
    ``suite_ready`` is set (the first process renders it meanwhile)."""
    from m3kit.benchmarks.supermemory.quickstart import quickstart_section
    from m3kit.harness.preflight import check_model
    from m3kit.report.logs import read_run

    resolved = check_model(model)
    section, logs = quickstart_section(supermemory_dir, model=resolved, limit=limit,
                                       progress=progress, read_run=read_run, memories=memories)
    suite_ready.wait()  # set once the first process has built the suite in ``suite_dir``
    done = _evaluate(suite_dir, log_dir, model=resolved, steps=steps, frames=frames,
                     limit=limit, progress=progress)
    return _SecondPart(supermemory=section, supermemory_logs=logs, m3eval=done)


class _SecondProcess:
    """``work(progress, event, **kwargs)`` in a spawned process, its progress reported here as
    it comes (from a listening thread), ``event`` set by ``go_on()``; ``result()`` waits for its
    return value or raises what it raised (an m3kit error as itself, anything else as a
    ``RuntimeError`` with its traceback).
    Leaving the block before ``result()`` (an error, an interrupt) stops the process."""

    def __init__(self, work: Callable[..., object], progress: Progress, **kwargs: object) -> None:
        import multiprocessing
        import threading

        context = multiprocessing.get_context("spawn")  # no forked inspect or thread state
        self._messages = context.Queue()
        self._go_on = context.Event()
        self._process = context.Process(target=_second_process_main,
                                        args=(work, self._messages, self._go_on, kwargs),
                                        daemon=True)
        self._progress = progress
        self._outcome: tuple[str, object] | None = None
        self._ended = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="m3kit-second-process",
                                          daemon=True)

    def __enter__(self) -> _SecondProcess:
        self._process.start()
        self._listener.start()
        return self

    def go_on(self) -> None:
        """Tell the work that what it waits for (its second argument) is there."""
        self._go_on.set()

    def result(self) -> Any:
        self._ended.wait()
        if self._outcome is None:
            raise M3kitError(f"the second quickstart process ended without a result "
                             f"(exit code {self._process.exitcode})")
        kind, value = self._outcome
        if kind == "error":
            raise value if isinstance(value, BaseException) else RuntimeError(value)
        return value

    def _listen(self) -> None:
        import queue

        while True:
            try:
                kind, value = self._messages.get(timeout=1.0)
            except queue.Empty:
                if self._process.is_alive() or self._process.exitcode is None:
                    continue
                break  # it ended without saying so (killed)
            if kind == "progress":
                self._progress(*value)
            else:
                self._outcome = (kind, value)
                break
        self._ended.set()

    def __exit__(self, *exc: object) -> None:
        if not self._ended.is_set() and self._process.is_alive():
            self._process.terminate()
        self._process.join()
        self._listener.join()


def _second_process_main(work: Callable[..., object], messages: Any, go_on: Any,
                         kwargs: dict[str, object]) -> None:
    """The second process: run ``work``, sending progress as it comes, then its outcome."""
    import traceback

    def progress(stage: str, done: int, total: int) -> None:
        messages.put(("progress", (stage, done, total)))

    try:
        messages.put(("result", work(progress, go_on, **kwargs)))
    except M3kitError as exc:
        messages.put(("error", exc))
    except BaseException:  # noqa: BLE001 (any failure is sent back to the parent, as text)
        messages.put(("error", traceback.format_exc()))


def _evaluate(
    suite: Path, log_dir: Path, *, model: Model, steps: Sequence[tuple[str, str]], frames: int,
    limit: int | None, progress: Progress,
) -> dict[tuple[str, str], _StepRun]:
    """Run each (memory, task) step (memory ``none``: direct); the runs by step."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.report.logs import read_run

    done: dict[tuple[str, str], _StepRun] = {}
    for n, (memory, task) in enumerate(steps):
        progress(f"eval: {task} ({memory})", n, len(steps))
        log = run_benchmark_task(
            task, model, memory=None if memory == "none" else memory,
            task_args={"suite": str(suite),
                                 **({} if task == "synth_nback" else {"frames": frames})},
            limit=limit, log_dir=log_dir,
        )
        done[(memory, task)] = _StepRun(run=read_run(log), location=log.location)
    return done


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
