"""``m3kit eval TASK [TASK...] --model PROVIDER/MODEL``: run m3kit tasks and print each one's
results table; each run's results file is written beside its log (``m3kit.report.results``).

Thin: parsing and printing here; a benchmark's name is its tasks (``m3kit.benchmarks
.expand_tasks``), each task is looked up and run by ``m3kit.benchmarks.run_benchmark_task``
(``m3kit.harness.run.run_eval`` underneath), the table is ``m3kit.report.summary``'s. Several
tasks run one after the other in this process with one model (``_run_tasks``).
"""

from __future__ import annotations

import sys
import textwrap
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from m3kit.cli.options import at_least, parse_key_values
from m3kit.harness.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
)
from m3kit.harness.taskargs import RUN_MINIMUMS

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from inspect_ai.model import Model

    from m3kit.report.summary import SummaryTable

__all__ = ["eval_command", "eval_display", "print_summary", "progress_lines"]

SHOW_SKIPPED = 5  # reasons printed after a run; the log keeps them all
SUMMARY_WIDTH = 80  # the summary's lines under the table wrap here, at word boundaries


def print_summary(summary: SummaryTable, console: Console) -> None:
    """Print ``summary`` compactly: no box, one space between columns, headers whole, group
    labels split as ``display_rows`` does; nine columns fit 80 columns without breaking a
    word. The interval lines, the failure lines (what failed and why) and the card line under
    it wrap at ``SUMMARY_WIDTH`` columns at word boundaries (continuations indented), never
    mid-word by the terminal."""
    from m3kit.report.summary import display_rows

    table = Table(title=summary.title, box=None, padding=(0, 1), collapse_padding=True,
                  pad_edge=False, header_style="bold")
    for i, column in enumerate(summary.columns):
        if i == 0:
            # a word longer than the column (a tiny terminal) still folds rather than vanish
            table.add_column(column, overflow="fold", min_width=5)
        else:
            table.add_column(column, justify="right", min_width=len(column), no_wrap=True)
    for row in display_rows(summary):
        table.add_row(*row)
    console.print(table)
    # a failure's reason may quote a path longer than a line: only those lines break words
    lines = [*((line, False) for line in summary.intervals),
             *((line, True) for line in summary.failures),
             *(((summary.caption, False),) if summary.caption else ())]
    for line, break_words in lines:
        indent = " " * (len(line) - len(line.lstrip(" ")))
        for part in textwrap.wrap(line, SUMMARY_WIDTH, subsequent_indent=indent + "    ",
                                  break_long_words=break_words, break_on_hyphens=False):
            console.print(part, markup=False, highlight=False, soft_wrap=True)


def eval_display(progress: bool | None, terminal: bool) -> str:
    """inspect's display for ``--progress`` (True), ``--quiet`` (False) or neither (None):
    live bars on a terminal (``rich``), one line per step elsewhere (``plain``: a log file
    still shows the run advancing), nothing with ``--quiet``; by default bars on a terminal
    and nothing in a pipe, whose reader wants the table alone."""
    if progress is None:
        progress = terminal
    if not progress:
        return "none"
    return "rich" if terminal else "plain"


def progress_lines(progress: bool | None, terminal: bool) -> bool:
    """Whether ``m3kit eval`` writes its own progress lines to stderr: in a pipe or a file
    (no live display there) unless ``--quiet``; never on a terminal, which has inspect's bars."""
    return progress is not False and not terminal


def _print_skips(console: Console, heading: str, count: int, reasons: list[str],
                 where: str) -> None:
    """``heading``, then the first ``SHOW_SKIPPED`` reasons and how many more ``where`` holds;
    nothing when ``count`` is 0."""
    if not count:
        return
    console.print(heading, markup=False, highlight=False)
    for reason in reasons[:SHOW_SKIPPED]:
        console.print(f"  {reason}", markup=False, highlight=False, soft_wrap=True)
    shown = min(len(reasons), SHOW_SKIPPED)
    if count > shown:
        console.print(f"  ... and {count - shown} more ({where})", markup=False,
                      highlight=False)


def eval_command(
    task: Annotated[list[str], typer.Argument(
        help="m3kit tasks, e.g. synth_nback, or a benchmark's name for all its tasks "
        "(m3eval); several run one after the other in this process.")],
    model: Annotated[str, typer.Option("--model", "-m", help="PROVIDER/MODEL, e.g. "
                                       "openai-api/local/qwen2-vl or m3kit/builtin.")],
    memory: Annotated[str | None, typer.Option("--memory", help="Answer through this memory "
                                               "(context, rag, ...).")] = None,
    task_arg: Annotated[list[str] | None, typer.Option("-T", "--task-arg", help="Task option "
                                                       "key=value (repeatable; with several "
                                                       "tasks, to those that take it).")] = None,
    model_arg: Annotated[list[str] | None, typer.Option("-M", "--model-arg", help="Model "
                                                        "option key=value (repeatable).")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", callback=at_least("--limit", RUN_MINIMUMS["limit"]),
        help="Only the first N samples, N >= 1 (with --stratify: N spread evenly over the "
        "question types).")] = None,
    stratify: Annotated[bool, typer.Option("--stratify", help="With --limit N: take the N "
                                           "samples round-robin over the benchmark's question "
                                           "types (its declared stratum), not the first N.")]
    = False,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the newest unfinished run "
                                         "of this task and model in the log dir (each task's "
                                         "own).")] = False,
    log_dir: Annotated[str, typer.Option("--log-dir", help="Where eval logs go.")] = "logs",
    max_connections: Annotated[int, typer.Option(
        "--max-connections", callback=at_least("--max-connections",
                                               RUN_MINIMUMS["max_connections"]),
        help="Concurrent model requests (at least 1).")] = DEFAULT_MAX_CONNECTIONS,
    max_retries: Annotated[int, typer.Option(
        "--max-retries", callback=at_least("--max-retries", RUN_MINIMUMS["max_retries"]),
        help="Attempts of a model request in total (first one included) before the sample "
        "fails.")] = DEFAULT_MAX_RETRIES,
    max_failed: Annotated[int | None, typer.Option(
        "--max-failed", callback=at_least("--max-failed", RUN_MINIMUMS["max_failed"]),
        help="Exit non-zero when more samples than this fail (default: only when every "
        "sample fails).")] = None,
    attempt_timeout: Annotated[int, typer.Option(
        "--attempt-timeout", callback=at_least("--attempt-timeout",
                                               RUN_MINIMUMS["attempt_timeout"]),
        help="Seconds (at least 1) before a model request is abandoned and retried.")]
    = DEFAULT_ATTEMPT_TIMEOUT,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", callback=at_least("--max-tokens", RUN_MINIMUMS["max_tokens"]),
        help="Most tokens the model may generate per call (every call: the answer, and a "
        "memory's own calls to it); default: the provider's. A served model without it may "
        "generate to the end of its context.")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not use the response "
                                           "cache.")] = False,
    progress: Annotated[bool | None, typer.Option(
        "--progress/--quiet", help="Show inspect's progress display (default: when the output "
        "is a terminal); --quiet prints only the results.")] = None,
    blind: Annotated[bool, typer.Option("--blind", help="Text only: the same questions without "
                                        "frames or subtitles (task arg blind=true), to measure "
                                        "what language priors alone answer.")] = False,
    executor: Annotated[str | None, typer.Option("--executor", help="Where a long-video "
                                                 "memory's perception runs: inprocess (the "
                                                 "default) or ray (RAY_ADDRESS, else a local "
                                                 "Ray); memory setting executor=.")] = None,
) -> None:
    """Evaluate a model (directly or through a memory) on m3kit tasks."""
    from m3kit.benchmarks import expand_tasks

    names = expand_tasks(task)  # ``task``: the usage error says "Missing argument 'task'"
    given = parse_key_values(task_arg or [], "-T")
    flags = {"blind": True} if blind else {}
    # one task: checked in today's order (-T, --executor, -M)
    single = (_with_executor({**given, **flags}, executor, memory) if len(names) == 1
              else None)
    model_args = parse_key_values(model_arg or [], "-M")
    terminal = sys.stdout.isatty()
    stderr = Console(stderr=True, soft_wrap=True)
    options = {
        "memory": memory, "limit": limit, "resume": resume, "log_dir": log_dir,
        "max_connections": max_connections, "max_retries": max_retries,
        "attempt_timeout": attempt_timeout, "cache": not no_cache,
        "display": eval_display(progress, terminal), "stratify": stratify,
        "progress": (lambda line: stderr.print(line, markup=False, highlight=False))
        if progress_lines(progress, terminal) else None,
        # inspect's generate config: recorded in the run's card and its cache scope
        **({"max_tokens": max_tokens} if max_tokens is not None else {}),
    }
    if single is not None:
        _run_task(names[0], model, single, model_args, options, max_failed)
        return
    _run_tasks(names, model, given, flags, executor, model_args, options, max_failed, stderr)


def _run_tasks(names: list[str], model: str, given: dict, flags: dict, executor: str | None,
               model_args: dict, options: dict, max_failed: int | None,
               stderr: Console) -> None:
    """Several tasks, one after the other, sharing one model (its connection pool), the frame
    store and the memories' stored indexes. Before any work, every task's arguments are checked
    (a ``-T`` key goes to the tasks that take it, an error only when none does) and the model
    once: any refusal is one line and nothing runs. Then each task runs and prints its summary
    under its name; a task that fails (its samples, or a stopped run) is named and the others
    still run; an interrupt stops them all. ``M3kitError`` naming the failed tasks at the end."""
    from m3kit.benchmarks import check_task_args, names_m3kit_task, takes_task_arg
    from m3kit.errors import M3kitError
    from m3kit.harness.preflight import check_model
    from m3kit.harness.run import qualified_task_name, run_task_args

    untaken = [key for key in given if not any(takes_task_arg(t, key) for t in names)]
    if untaken:
        raise M3kitError(f"no task of {', '.join(names)} takes -T {', '.join(untaken)}",
                         field=untaken[0])
    per_task: dict[str, dict] = {}
    for name in names:
        args = _with_executor({**{k: v for k, v in given.items() if takes_task_arg(name, k)},
                               **flags}, executor, options["memory"])
        if names_m3kit_task(name):
            check_task_args(name, run_task_args(args, memory=options["memory"],
                                                cache=options["cache"]))
        per_task[name] = args
    resolved = check_model(model, model_args)
    console = Console()
    failed: list[str] = []
    for i, name in enumerate(names, 1):
        console.print(f"== {qualified_task_name(name).rsplit('/', 1)[-1]} ({i} of "
                      f"{len(names)}) ==", markup=False, highlight=False, soft_wrap=True)
        try:
            _run_task(name, resolved, per_task[name], None, options, max_failed)
        except M3kitError as exc:
            stderr.print(f"m3kit: error: {exc}", markup=False, highlight=False)
            failed.append(name)
        console.print("", markup=False)
    if failed:
        raise M3kitError(f"{len(failed)} of {len(names)} tasks failed: {', '.join(failed)}")


def _run_task(task: str, model: str | Model, task_args: dict, model_args: dict | None,
              options: dict, max_failed: int | None) -> None:
    """One task: run it, print its summary (or why it stopped), write its results file beside
    its log, then ``check_failures``."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.harness.failures import check_failures
    from m3kit.harness.skips import attachment_skips_of, skipped_of
    from m3kit.report.results import write_results
    from m3kit.report.summary import summary_table
    from m3kit.schema.evallog import SKIPPED_KEY

    log = run_benchmark_task(task, model, task_args=task_args, model_args=model_args or {},
                             **options)
    console = Console()
    if log.status != "success":
        _stopped(log, console)
    print_summary(summary_table(log), console)
    # the reasons themselves: tasks and memories log only a count or a warning each
    skipped = skipped_of(log)
    _print_skips(console, f"skipped {skipped.count} record(s) while loading:", skipped.count,
                 skipped.reasons, f"log metadata {SKIPPED_KEY}")
    attachments = attachment_skips_of(log)
    left_out = [str(s) for s in attachments.records]
    _print_skips(console, f"skipped {len(left_out)} attachment(s) {attachments.stage}:",
                 len(left_out), left_out, "each sample's record")
    rebuilt = [str(s) for s in attachments.rebuilt]
    _print_skips(console, f"rebuilt {len(rebuilt)} damaged stored index(es) at memory ingest:",
                 len(rebuilt), rebuilt, "each sample's record")
    unsaved = [str(s) for s in attachments.unsaved]
    _print_skips(console, "the index store cannot be written: indexes kept in memory for this "
                 "run:", len(unsaved), unsaved, "each sample's record")
    console.print(f"log: {log.location}", markup=False, highlight=False, soft_wrap=True)
    # beside the log, failed samples or not (a stopped run, above, has no table and no file)
    write_results(log, skipped_records=skipped.count)
    check_failures(log, max_failed)


def _stopped(log: EvalLog, console: Console) -> NoReturn:
    """A run that did not finish (a dead server, an error, Ctrl-C): no table, whose numbers
    would mix finished samples with unfinished ones; how many finished, and one error line."""
    from m3kit.harness.failures import sample_failure
    from m3kit.harness.run import RunIncompleteError
    from m3kit.models.redact import one_line

    samples = log.samples or []
    finished = sum(1 for s in samples if s.error is None)
    answered = sum(1 for s in samples if s.error is None and sample_failure(s) is None)
    console.print(f"{finished} sample(s) finished before the run stopped ({answered} answered), "
                  "kept in the log", markup=False, highlight=False, soft_wrap=True)
    console.print(f"log: {log.location}", markup=False, highlight=False, soft_wrap=True)
    message = log.error.message if log.error else "the run did not finish"
    raise RunIncompleteError(f"run {log.status}: {one_line(message)} (resume with --resume)",
                             path=log.location)


def _with_executor(task_args: dict, executor: str | None, memory: str | None) -> dict:
    """``task_args`` with ``executor`` added to the memory's settings (``memory_config``)."""
    if executor is None:
        return task_args
    from m3kit.errors import M3kitError
    from m3kit.perception.pipeline import EXECUTORS

    if executor not in EXECUTORS:
        raise M3kitError(f"unknown executor {executor!r}; known: {', '.join(EXECUTORS)}",
                         field="executor")
    if memory is None or memory == "none":
        raise M3kitError("--executor runs a memory's perception: give --memory too",
                         field="executor")
    settings = dict(task_args.get("memory_config") or {})
    return {**task_args, "memory_config": {**settings, "executor": executor}}
