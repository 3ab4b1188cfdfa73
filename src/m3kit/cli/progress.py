"""Rich progress bars for long CLI work."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

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
