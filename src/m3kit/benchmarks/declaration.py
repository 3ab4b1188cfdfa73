"""What a benchmark is, declared once: ``Benchmark``.

Each ``m3kit.benchmarks.<name>/__init__.py`` exposes one ``BENCHMARK = Benchmark(...)``; the
registry (``inspect eval m3kit/<task>``), ``m3kit eval``'s task checks and summary table,
``m3kit score <verb>`` and ``m3kit report`` all read the declarations and keep no table of
their own. A declaration names its parts as ``Ref``s (``"module:attribute"``), loaded on first
use, so that reading the declarations imports neither inspect-ai nor any benchmark module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from m3kit.errors import M3kitError

__all__ = ["SHARED_RANGES", "ArgRange", "Benchmark", "Ref", "UnknownTaskError"]

T = TypeVar("T")


class UnknownTaskError(M3kitError):
    """No m3kit benchmark declares a task of this name."""


@dataclass(frozen=True)
class Ref(Generic[T]):
    """A module attribute named ``"package.module:attribute"``, imported by ``load``."""

    target: str

    def load(self) -> T:
        module, _, name = self.target.partition(":")
        if not name:
            raise ValueError(f"a reference is 'module:attribute', got {self.target!r}")
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ArgRange:
    """The values a numeric ``-T`` argument may take: ``check(value)`` true, ``wanted`` says
    what that is (``> 0``)."""

    check: Callable[[Any], bool]
    wanted: str


# Options several benchmarks' tasks share, and what their values must be (None always means
# "the default").
SHARED_RANGES: Mapping[str, ArgRange] = {
    "fps": ArgRange(lambda v: v > 0, "> 0"),
    "frames": ArgRange(lambda v: v >= 0, ">= 0"),
    "max_side": ArgRange(lambda v: v > 0, "> 0"),
}


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its tasks, scoring, tables and score command.

    - ``tasks``: the registered task names it owns (``inspect eval m3kit/<task>``), all defined
      in ``task_module``; ``components``: further solvers and scorers registered with them;
    - ``scorer``: the name of its inspect scorer, ``score_item``: the typed per-item record that
      scorer writes (a ``m3kit.schema.ScoreItem``);
    - ``score_predictions``: external predictions -> the benchmark's score card;
      ``scores_from_log``: ``LoggedSample``s of a run -> the same card;
    - ``summary_rows``: ``LoggedSample``s -> the columns and rows ``m3kit eval`` prints;
    - ``report_sections``: what ``m3kit report`` renders for the benchmark's runs;
      ``system_label``: the row label of a run (runs of one label are pooled);
      ``score_file_keys``: top-level keys that mark a JSON file as this benchmark's score card
      (the report's external-score inputs; empty: it takes none);
    - ``score_verb``, ``score_command``: ``m3kit score <verb>`` (a typer command function);
    - ``ranges``: what numeric ``-T`` arguments of its tasks must be.
    """

    name: str
    title: str
    tasks: tuple[str, ...]
    task_module: str
    scorer: str
    score_item: Ref[type]
    score_predictions: Ref[Callable[..., Any]]
    scores_from_log: Ref[Callable[..., Any]]
    summary_rows: Ref[Callable[..., tuple[list[str], list[list[str]]]]]
    report_sections: Ref[Callable[..., list[Any]]]
    system_label: Ref[Callable[..., str]]
    score_verb: str
    score_command: Ref[Callable[..., None]]
    components: tuple[Ref[Any], ...] = ()
    score_file_keys: frozenset[str] = frozenset()
    ranges: Mapping[str, ArgRange] = field(default_factory=lambda: dict(SHARED_RANGES))

    def owns(self, task: str) -> bool:
        """Whether ``task`` (with or without the ``m3kit/`` prefix) is one of this benchmark's
        tasks."""
        return task.rsplit("/", 1)[-1] in self.tasks

    def task_functions(self) -> list[Callable[..., Any]]:
        """The registered ``@task`` functions, in ``tasks`` order (imports ``task_module``)."""
        module = importlib.import_module(self.task_module)
        return [getattr(module, name) for name in self.tasks]

    def task_function(self, task: str) -> Callable[..., Any]:
        """The ``@task`` function of ``task``."""
        return getattr(importlib.import_module(self.task_module), task.rsplit("/", 1)[-1])
