"""``m3kit review DIR [--host 127.0.0.1] [--port 8765] [--reviewer NAME] [--export OUT]``: review
what an m3kit builder produced in a local web app (``m3kit.review``), or, with ``--export``,
write the reviewed set and exit without serving."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["review_command"]


def review_command(
    folder: Annotated[Path, typer.Argument(help="A builder's output: a SuperMemory-VQA folder "
                                           "(data/json/all_qa.json), M3Eval's or M3Exam's.")],
    host: Annotated[str, typer.Option(help="Address to listen on (loopback by default: the "
                                      "app has no login).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free one).")] = 8765,
    reviewer: Annotated[str | None, typer.Option(help="Who reviews (default: the operating "
                                                  "system's user).")] = None,
    export: Annotated[Path | None, typer.Option("--export", help="Write the items accepted "
                                                "so far here, in the benchmark's released "
                                                "layout, and exit.")] = None,
) -> None:
    """Accept, reject or edit generated items with their media at the evidence's time."""
    from m3kit.review import export_reviewed, open_review, serving

    if export is not None:
        result = export_reviewed(folder, export)
        typer.echo(f"exported {result.exported} {result.benchmark} items to {result.out} "
                   f"(rejected {result.rejected}, pending {result.pending}); read back: "
                   f"{result.loaded} loaded, {len(result.skipped)} skipped")
        if result.stale:
            typer.echo(f"  {result.stale} decisions left out: taken on an earlier version of "
                       "their items (the builder ran again); review them again", err=True)
        for skip in result.skipped:
            typer.echo(f"  skipped: {skip}", err=True)
        return
    app = open_review(folder, reviewer, host)
    with serving(app, host, port) as url:
        typer.echo(f"m3kit review: {url} (Ctrl+C stops)")
        stopped = threading.Event()
        try:
            while not stopped.wait(1.0):
                pass
        except KeyboardInterrupt:
            typer.echo("m3kit review: stopped", err=True)
