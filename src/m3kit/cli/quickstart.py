"""``m3kit quickstart``: the README's main command."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table as RichTable

from m3kit.cli.options import at_least
from m3kit.harness.taskargs import RUN_MINIMUMS
from m3kit.quickstart import DEFAULT_FRAMES
from m3kit.schema.report import Table, cell_text, plain_text


def quickstart(
    # ``--out`` as ``m3kit report`` and ``m3kit m3eval build``; ``--out-dir`` kept as an alias
    out_dir: Annotated[Path, typer.Option(
        "--out", "--out-dir", help="Suite, logs and report.")] = Path("m3kit-quickstart"),
    model: Annotated[str, typer.Option(
        "--model", help="PROVIDER/MODEL to evaluate.")] = "m3kit/builtin",
    memories: Annotated[str, typer.Option(
        "--memories", help="Comma-separated: none, context, rag.")] = "none,rag",
    frames: Annotated[int, typer.Option("--frames", callback=at_least("--frames", 0),
                                        help="Uniform frames per probe.")] = DEFAULT_FRAMES,
    limit: Annotated[int | None, typer.Option(
        "--limit", callback=at_least("--limit", RUN_MINIMUMS["limit"]),
        help="Only the first N questions per task (N >= 1).")] = None,
) -> None:
    """Build a small synthetic suite, evaluate the model with and without memory, print tables."""
    from m3kit.errors import M3kitError
    from m3kit.quickstart import run_quickstart

    if out_dir.exists() and not out_dir.is_dir():
        # one line now rather than a NotADirectoryError traceback once the suite is written
        raise M3kitError("not a folder: the quickstart writes its suite, logs and report there",
                         path=out_dir, field="--out")
    console = Console()
    errors = Console(stderr=True)
    stages: set[str] = set()
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=errors) as bar:
        task = bar.add_task("quickstart", total=None)

        def progress(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)
            if not errors.is_terminal and stage not in stages:
                # a pipe or a file gets no live bar: one line per stage, so a long run
                # is never silent there (the two parts' stages interleave: each said once)
                stages.add(stage)
                errors.print(f"quickstart: {stage}", markup=False, highlight=False)

        result = run_quickstart(out_dir, model=model, frames=frames, limit=limit,
                                memories=[m.strip() for m in memories.split(",") if m.strip()],
                                progress=progress)
    for section in result.sections:
        console.rule(section.title)
        for table in section.tables:
            console.print(_rich_table(table))
        for note in section.notes:
            console.print(textwrap.fill(plain_text(note), width=min(console.width, 80),
                                        subsequent_indent="  "), markup=False, highlight=False)
    console.print(f"report: {result.report}", markup=False, highlight=False)
    console.print(f"html report (tables and figures): {result.html}", markup=False,
                  highlight=False)


def _rich_table(table: Table) -> RichTable:
    """``table`` for the terminal: the caption under it, numbers right-aligned."""
    out = RichTable(title=table.title, caption=plain_text(table.caption) or None,
                    caption_justify="left")
    for i, column in enumerate(table.columns):
        out.add_column(column, justify="left" if i == 0 else "right")
    for row in table.rows:
        out.add_row(*(cell_text(c, table.decimals) for c in row))
    return out
