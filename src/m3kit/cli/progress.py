"""Rich progress bars for long CLI work."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@contextmanager
def progress_bar(description: str, total: int, console: Console) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``. The bar (done/total, elapsed, remaining, on stderr) appears with the
    first step, so work refused up front prints only its error line."""
    progress: Progress | None = None
    task = None

    def advance(n: int = 1) -> None:
        nonlocal progress, task
        if progress is None:
            progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
            )
            progress.start()
            task = progress.add_task(description, total=total)
        progress.advance(task, n)

    try:
        yield advance
    finally:
        if progress is not None:
            progress.stop()
