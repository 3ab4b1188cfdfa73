"""Rich progress bars for long CLI work (and, in a pipe or a file, progress lines)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Self

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:
    from m3kit.models.backend import InspectBackend


@contextmanager
def progress_bar(description: str, total: int,
                 console: Console) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``. The bar (done/total, elapsed, remaining, on stderr) appears with the
    first step, so work refused up front prints only its error line."""
    shown: tuple[Progress, TaskID] | None = None

    def advance(n: int = 1) -> None:
        nonlocal shown
        if shown is None:
            progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
            )
            progress.start()
            shown = (progress, progress.add_task(description, total=total))
        progress, task = shown
        progress.advance(task, n)

    try:
        yield advance
    finally:
        if shown is not None:
            shown[0].stop()


@contextmanager
def count_bars(console: Console) -> Iterator[Callable[[str, int, int], None]]:
    """Yield ``report(label, done, total)``: one bar per label (done/total, elapsed, on
    stderr), each appearing with its first report, so work that reports nothing (a score
    without a judge) prints nothing."""
    progress: Progress | None = None
    tasks: dict[str, TaskID] = {}

    def report(label: str, done: int, total: int) -> None:
        nonlocal progress
        if progress is None:
            progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                MofNCompleteColumn(), TimeElapsedColumn(), console=console)
            progress.start()
        if label not in tasks:
            tasks[label] = progress.add_task(label, total=total)
        progress.update(tasks[label], completed=done, total=total)

    try:
        yield report
    finally:
        if progress is not None:
            progress.stop()


# In a pipe or a file (no live bars), at most this long between two progress lines: well inside
# the 30 s a reader of a pipe should wait.
STAGE_LINE_INTERVAL_S = 15.0


class StageProgress:
    """A construction pipeline's progress (the ``stage`` / ``advance`` / ``message`` protocol of
    M3Eval's generation and SuperMemory-VQA's annotation): on a terminal one rich bar per stage,
    counting units reused from an earlier run apart; in a pipe or a file one line per stage when
    it starts, then every ``STAGE_LINE_INTERVAL_S`` seconds while it runs (also when no unit
    finished: a model call can take minutes) and when it ends.
    ``labels`` names the stages; ``quiet``: neither bars nor lines, the messages still printed
    (retries, what a stage skipped)."""

    def __init__(self, console: Console, labels: Mapping[str, str], *,
                 quiet: bool = False) -> None:
        from rich import progress as bars

        self.console = console
        self.labels = dict(labels)
        self.quiet = quiet
        self.live = console.is_terminal and not quiet
        self.bars = bars.Progress(
            bars.TextColumn("[bold]{task.description}"), bars.BarColumn(),
            bars.MofNCompleteColumn(), bars.TextColumn("{task.fields[reused]} reused"),
            bars.TimeElapsedColumn(), bars.TimeRemainingColumn(), console=console)
        self.tasks: dict[str, Any] = {}
        self.totals: dict[str, int] = {}
        self.done: dict[str, int] = {}
        self.reused: dict[str, int] = {}
        self.last_line: dict[str, float] = {}
        self.started: dict[str, float] = {}
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.ticker: threading.Thread | None = None

    def __enter__(self) -> Self:
        if self.live:
            self.bars.start()
        elif not self.quiet:
            self.ticker = threading.Thread(target=self._tick, name="m3kit-progress-lines",
                                           daemon=True)
            self.ticker.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live:
            self.bars.stop()
        self.stopped.set()
        if self.ticker is not None:
            self.ticker.join()

    def _tick(self) -> None:
        """A line for each stage still running that said nothing for the interval."""
        while not self.stopped.wait(STAGE_LINE_INTERVAL_S / 3):
            with self.lock:
                now = time.monotonic()
                for name, total in self.totals.items():
                    if (self.done[name] < total
                            and now - self.last_line[name] >= STAGE_LINE_INTERVAL_S):
                        self._line(name)

    def stage(self, name: str, total: int) -> None:
        if not total:
            return
        with self.lock:
            self._start(name, total)

    def _start(self, name: str, total: int) -> None:
        self.totals[name] = total
        self.started[name] = time.monotonic()
        self.done[name] = self.reused[name] = 0
        if self.live:
            self.tasks[name] = self.bars.add_task(self.labels.get(name, name), total=total,
                                                  reused=0)
        else:
            self._line(name)

    def advance(self, name: str, *, reused: bool = False) -> None:
        with self.lock:
            self._advance(name, reused)

    def _advance(self, name: str, reused: bool) -> None:
        if name not in self.totals:
            return
        self.done[name] += 1
        self.reused[name] += reused
        if self.live:
            self.bars.update(self.tasks[name], advance=1, reused=self.reused[name])
        elif (self.done[name] == self.totals[name]
              or time.monotonic() - self.last_line[name] >= STAGE_LINE_INTERVAL_S):
            self._line(name)

    def message(self, text: str) -> None:
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def _line(self, name: str) -> None:
        self.last_line[name] = time.monotonic()
        if self.quiet:
            return
        elapsed = int(self.last_line[name] - self.started[name])
        self.message(f"{self.labels.get(name, name)}: {self.done[name]} of {self.totals[name]}"
                     f" ({self.reused[name]} reused), {elapsed // 60}:{elapsed % 60:02d} elapsed")


@contextmanager
def model_calls_told(backend: InspectBackend | None, console: Console) -> Iterator[None]:
    """While a construction pipeline runs: then its backend closed and what its calls came to
    printed (``CallCount.describe``), also when a failing server stopped the run. ``None``: no
    model was used (an offline default), nothing to tell."""
    try:
        yield
    finally:
        if backend is not None:
            backend.close()
            console.print(backend.call_count.describe(), markup=False, highlight=False,
                          soft_wrap=True)
