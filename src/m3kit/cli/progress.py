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
    """Yield ``advance(n)``; the bar shows done/total, elapsed and remaining time on stderr."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
