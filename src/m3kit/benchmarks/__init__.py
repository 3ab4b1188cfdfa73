"""One folder per benchmark, each declared once in its ``__init__`` (``BENCHMARK``, a
``Benchmark``) and found here by its folder, the same roles in the same files in every folder
(the README's "Adding a benchmark"): ``load`` (released format -> schema), ``predictions``
(predictions files of other harnesses), ``prompt``, ``task`` (inspect tasks), ``item`` (the
typed per-item record), ``scorer`` (the inspect scorer and its metrics), ``score`` (the
aggregation from ``m3kit.metrics``, the score card, ``SCORING``), ``report`` (tables and
figures, ``REPORTING``) and ``construct/`` for construction pipelines. Imports run one way:
``load`` <- ``item`` <- ``score`` <- ``scorer`` <- ``task``, and ``report`` -> ``score``.

``BENCHMARKS`` is every declaration; ``benchmark_for_task`` finds a task's, and the task
checks, builds and runs by name (``check_task_args``, ``build_task``, ``run_benchmark_task``)
go through it. Importing this package imports no benchmark module and no inspect-ai.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from m3kit.benchmarks.declaration import (
    SHARED_RANGES,
    ArgRange,
    Benchmark,
    Ref,
    ScoreCommand,
    ScoreOption,
    UnknownTaskError,
)

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from inspect_ai.model import Model

__all__ = [
    "BENCHMARKS",
    "SHARED_RANGES",
    "ArgRange",
    "Benchmark",
    "Ref",
    "ScoreCommand",
    "ScoreOption",
    "UnknownTaskError",
    "benchmark_for_task",
    "benchmark_named",
    "build_task",
    "check_task_args",
    "expand_tasks",
    "known_tasks",
    "names_m3kit_task",
    "run_benchmark_task",
    "takes_task_arg",
]



def _declarations() -> tuple[Benchmark, ...]:
    """The ``BENCHMARK`` of every benchmark package here, by name: a new benchmark is a new
    folder, listed nowhere else. Each ``__init__`` holds only its declaration, so this imports
    no benchmark module."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        if info.ispkg:
            declared = getattr(importlib.import_module(f"{__name__}.{info.name}"), "BENCHMARK",
                               None)
            if isinstance(declared, Benchmark):
                found.append(declared)
    return tuple(sorted(found, key=lambda b: b.name))


BENCHMARKS: tuple[Benchmark, ...] = _declarations()


def known_tasks() -> list[str]:
    """Every declared task name, sorted (``locomo``, ..., ``videomme_v2``)."""
    return sorted(name for b in BENCHMARKS for name in b.tasks)


def _short(task: str) -> str:
    return task.rsplit("/", 1)[-1]


def benchmark_for_task(task: str) -> Benchmark:
    """The benchmark that declares ``task`` (a name with or without its ``m3kit/`` prefix);
    ``UnknownTaskError`` listing the known tasks for any other name."""
    for benchmark in BENCHMARKS:
        if benchmark.owns(task):
            return benchmark
    raise UnknownTaskError(f"unknown task {_short(task)!r}; known tasks: "
                           f"{', '.join(known_tasks())}", field="task")


def benchmark_named(name: str) -> Benchmark | None:
    """The benchmark called ``name``, or declaring a task of that name; ``None`` if none
    does (a task's ``BENCHMARK_KEY`` metadata names one this way)."""
    for benchmark in BENCHMARKS:
        if benchmark.name == name or benchmark.owns(name):
            return benchmark
    return None


def check_task_args(task: str, args: Mapping[str, Any]) -> None:
    """``UnknownTaskError`` / ``TaskArgumentError`` for an unknown task, an argument the task
    does not take, a value of the wrong type or out of its benchmark's range. Builds nothing."""
    from m3kit.harness.taskargs import check_args

    benchmark = benchmark_for_task(task)
    check_args(_short(task), benchmark.task_function(task), args, benchmark.ranges)


def build_task(task: str, args: Mapping[str, Any]) -> Task:
    """The m3kit task ``task`` built with ``args``, every argument checked first
    (``m3kit.harness.taskargs.build``)."""
    from m3kit.harness.taskargs import build

    benchmark = benchmark_for_task(task)
    return build(_short(task), benchmark.task_function(task), args, benchmark.ranges)


def expand_tasks(names: Sequence[str]) -> list[str]:
    """The tasks ``m3kit eval NAME [NAME...]`` runs, in order, each once: a task's name is that
    task (``m3exam``, ``supermemory`` and ``videomme_v2`` name a task and its benchmark alike:
    the task), a benchmark's name that is no task's (``m3eval``) is every task it declares, in
    its declaration's order; any other name is kept for the task checks to name."""
    out: list[str] = []
    for name in names:
        owner = next((b for b in BENCHMARKS if b.owns(name)), None)
        named = next((b for b in BENCHMARKS if b.name == name), None)
        found = [name] if owner is not None or named is None else list(named.tasks)
        out += [task for task in found if task not in out]
    return out


def takes_task_arg(task: str, key: str) -> bool:
    """Whether the m3kit task ``task`` takes the argument ``key`` (a ``-T`` key); a task m3kit
    does not own (``file.py@task``) is taken to take any, as inspect decides."""
    from m3kit.harness.taskargs import takes_argument

    if not names_m3kit_task(task):
        return True
    return takes_argument(benchmark_for_task(task).task_function(task), key)


def names_m3kit_task(task: str) -> bool:
    """Whether ``task`` names an m3kit task (``synth_nback``, ``m3kit/synth_nback``), declared
    or not, rather than a task file's (``file.py``, ``file.py@task``) or another package's
    (``pkg/task``), which inspect resolves itself."""
    from m3kit.harness.run import PACKAGE

    if task.endswith(".py") or "@" in task:
        return False
    return "/" not in task or task.startswith(f"{PACKAGE}/")


def run_benchmark_task(task: str | Task, model: str | Model, **options: Any) -> EvalLog:
    """``m3kit.harness.run.run_eval`` with an m3kit task given by name (``synth_nback`` or
    ``m3kit/synth_nback``): the name is looked up here, its arguments checked against the
    task's signature and its benchmark's ranges. Other names (``file.py@task``, another
    package's ``pkg/task``) and ``Task`` objects go to inspect as they are."""
    from m3kit.harness.run import PACKAGE, TaskSpec
    from m3kit.harness.run import run_eval as run

    if isinstance(task, str) and names_m3kit_task(task):
        benchmark = benchmark_for_task(task)
        spec = TaskSpec(name=f"{PACKAGE}/{_short(task)}",
                        function=benchmark.task_function(task), ranges=benchmark.ranges,
                        stratum=benchmark.stratum)
        return run(spec, model, **options)
    return run(task, model, **options)
