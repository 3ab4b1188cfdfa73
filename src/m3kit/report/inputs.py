"""What ``m3kit report`` and ``m3kit compare`` read: eval logs (``.eval`` or ``.json``), folders of
them (searched recursively) and score files of a benchmark that takes them, and the runs one
system's logs pool into.

Each log belongs to the benchmark that declares its task (``m3kit.benchmarks.benchmark_for_task``).
Logs of one system (``BenchmarkReporting.system_label``) are pooled into one run
(``m3kit.report.pooling``) and read into typed records (``m3kit.report.logs``). In a folder, a
damaged log or other JSON is skipped with a warning naming it; a file given on its own must be
readable. A log of a task that is not m3kit's (``m3kit.report.logs.foreign_task``: a task
file's, another package's) is skipped the same way, wherever it is given: named, the other logs
reported. A log of an m3kit task no benchmark declares is an ``UnknownTaskError``, as in
``m3kit eval``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks import BENCHMARKS, Benchmark
from m3kit.errors import M3kitError
from m3kit.report.logs import foreign_task, read_run, run_header
from m3kit.schema.results import is_results_file

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from m3kit.schema.evallog import LoggedRun

__all__ = [
    "LOG_SUFFIXES",
    "ReportInputError",
    "ReportInputs",
    "card_benchmark",
    "is_log_json",
    "pooled_runs",
    "read_humans",
    "read_inputs",
    "read_json",
    "system_logs",
]

logger = logging.getLogger(__name__)

LOG_SUFFIXES = (".eval", ".json")


class ReportInputError(M3kitError):
    """A report input is missing, unreadable, or neither an eval log nor a score file."""


class ReportInputs(BaseModel):
    """What the report is made of: eval logs (with samples) and score cards by benchmark name,
    then by system (the file's stem)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    logs: list[Any] = Field(default_factory=list)
    cards: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    # Damaged eval logs (and, in a folder, unreadable JSON files) left out, each naming its
    # file: one bad file costs itself.
    skipped: list[ReportInputError] = Field(default_factory=list)


def card_benchmark(data: Any) -> Benchmark | None:
    """The benchmark whose score card ``data`` is (by its top-level keys), if any."""
    if not isinstance(data, dict):
        return None
    return next((b for b in BENCHMARKS if b.score_file_keys & set(data)), None)


def _card_names() -> str:
    return " or ".join(f"an {b.title} score file (m3kit score {b.score_verb} --json)"
                       for b in BENCHMARKS if b.score_file_keys)


def read_json(path: Path, error: type[M3kitError] = ReportInputError) -> Any:
    """The JSON in ``path``; ``error`` (naming the file) when it is unreadable or not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise error(f"not readable as JSON: {exc}", path=path) from exc


def is_log_json(data: Any) -> bool:
    """Whether ``data`` is an inspect eval log written as JSON (its header and version)."""
    return isinstance(data, dict) and isinstance(data.get("eval"), dict) and "version" in data


def _read_log(path: Path) -> EvalLog:
    from inspect_ai.log import read_eval_log

    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect raises many kinds (zip, json, validation): name the file
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReportInputError(f"not a readable eval log: {reason[:200]}", path=path) from exc


def _add_log(path: Path, inputs: ReportInputs) -> None:
    try:
        inputs.logs.append(_read_log(path))
    except ReportInputError as exc:
        inputs.skipped.append(exc)


def _benchmarks_only(inputs: ReportInputs) -> None:
    """Move the logs of tasks that are not m3kit's (``foreign_task``) to the skipped."""
    kept = []
    for log in inputs.logs:
        if not foreign_task(log):
            kept.append(log)
        else:
            inputs.skipped.append(ReportInputError(
                f"not a log of an m3kit benchmark (task {log.eval.task})", path=log.location))
    inputs.logs = kept


SHOW_IGNORED = 3  # other JSON files of a folder named in its one warning


def _read_one(path: Path, inputs: ReportInputs, explicit: bool,
              ignored: list[Path] | None = None) -> None:
    if path.suffix == ".eval":
        _add_log(path, inputs)
        return
    try:
        data = read_json(path)
    except ReportInputError as exc:
        if explicit:  # a file asked for by name must be read
            raise
        inputs.skipped.append(exc)  # in a folder, like a damaged log: named, the rest reported
        return
    benchmark = None if is_log_json(data) else card_benchmark(data)
    if is_log_json(data):
        _add_log(path, inputs)
    elif benchmark is not None:
        cards = inputs.cards.setdefault(benchmark.name, {})
        if path.stem in cards:
            raise ReportInputError(f"two score files name the same system {path.stem!r}",
                                   path=path)
        cards[path.stem] = data
    elif explicit:
        raise ReportInputError(f"neither an inspect eval log nor {_card_names()}", path=path)
    elif ignored is not None:
        # Folders hold other JSON too (inspect's listings, configs, a quickstart's suite):
        # skip them, and say so once per folder.
        ignored.append(path)


def read_inputs(paths: Sequence[str | Path], *, foreign: bool = False) -> ReportInputs:
    """Read every eval log and score file named by ``paths`` (files or folders). An eval log
    that cannot be read (truncated, not a zip, invalid JSON), or a ``.json`` file in a folder
    that is not JSON at all, is skipped with a warning naming it and listed in ``skipped``; the
    others are reported. A ``.json`` file named explicitly must be readable. A log of a task
    that is no m3kit benchmark's is skipped the same way, unless ``foreign`` (``m3kit export``
    writes its rows as they are)."""
    if not paths:
        raise ReportInputError("no inputs: give eval logs, folders of them, or score files")
    inputs = ReportInputs()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            # a run's results file (``m3kit eval``'s, beside its log) is neither input
            found = sorted(p for p in path.rglob("*") if p.is_file()
                           and p.suffix in LOG_SUFFIXES and not is_results_file(p.name))
            if not found:
                raise ReportInputError("the folder holds no .eval or .json files", path=path)
            ignored: list[Path] = []
            for file in found:
                _read_one(file, inputs, explicit=False, ignored=ignored)
            if ignored:
                more = " ..." if len(ignored) > SHOW_IGNORED else ""
                logger.warning("skipped %d .json files of %s that are neither eval logs nor "
                               "score files: %s%s", len(ignored), path,
                               ", ".join(str(f.relative_to(path))
                                         for f in ignored[:SHOW_IGNORED]), more)
        elif path.is_file():
            if path.suffix not in LOG_SUFFIXES:
                raise ReportInputError("expected an .eval or .json file", path=path)
            _read_one(path, inputs, explicit=True)
        else:
            raise ReportInputError("no such file or folder", path=path)
    if not foreign:
        _benchmarks_only(inputs)
    if not inputs.logs and not inputs.cards:
        if inputs.skipped:  # nothing else to report: the first damaged log is the error
            raise inputs.skipped[0]
        raise ReportInputError("no eval logs or score files among the inputs")
    for error in inputs.skipped:
        logger.warning("skipped %s", error)
    return inputs


def read_humans(path: str | Path) -> dict[str, Any]:
    """Human reference scores: a JSON file in the shape of a benchmark's score card (M3Eval's:
    the JSON ``m3kit score m3eval --json`` prints)."""
    file = Path(path)
    if not file.is_file():
        raise ReportInputError("no such file", path=file, field="--humans")
    data = read_json(file)
    if card_benchmark(data) is None:
        raise ReportInputError("not M3Eval scores (expected keys such as divided_attention, "
                               "memory_interference, interleaved, nback)", path=file,
                               field="--humans")
    return data


def system_logs(benchmark: Benchmark, logs: Sequence[EvalLog]
                ) -> list[tuple[str, list[EvalLog]]]:
    """``benchmark``'s logs by system, in first-seen order: one model label
    (``BenchmarkReporting.system_label``) with one setting
    (``m3kit.report.pooling.setting_variants``); each system as its variant (what its label
    shows besides the model) and its logs."""
    from m3kit.report.pooling import setting_variants

    label = benchmark.reporting.load().system_label
    headers = [run_header(log) for log in logs]
    variants = setting_variants(headers, label)
    systems: dict[tuple[Any, str], list[EvalLog]] = {}
    for log, header, variant in zip(logs, headers, variants, strict=True):
        systems.setdefault((label(header), variant), []).append(log)
    return [(variant, members) for (_, variant), members in systems.items()]


def pooled_runs(benchmark: Benchmark, logs: Sequence[EvalLog]) -> list[LoggedRun]:
    """``benchmark``'s logs as runs, one per system (``system_logs``; the run's ``variant``,
    which the label then shows, is the system's); the logs of one system pooled
    (``m3kit.report.pooling.pool_logs``), then read (``m3kit.report.logs.read_run``). A system
    whose logs hold several tasks keeps each task's run, pooled alone, as its ``parts``."""
    from m3kit.report.logs import task_name
    from m3kit.report.pooling import pool_logs

    runs = []
    for variant, members in system_logs(benchmark, logs):
        (log,) = pool_logs(members, lambda _: "system").values()
        by_task = pool_logs(members, task_name)
        parts = ([read_run(one).model_copy(update={"variant": variant})
                  for one in by_task.values()] if len(by_task) > 1 else [])
        runs.append(read_run(log).model_copy(update={"variant": variant, "parts": parts}))
    return runs
