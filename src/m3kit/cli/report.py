"""``m3kit report PATH... --out DIR``: eval logs and score files to an HTML report.

Thin: everything happens in ``m3kit.report.build.build_report``.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["report_command"]


def report_command(
    paths: Annotated[list[str], typer.Argument(help="Eval logs (.eval/.json), folders of them, "
                                               "or M3Eval score files (m3kit score m3eval "
                                               "--json; the file's stem names the system).")],
    out: Annotated[str, typer.Option("--out", "-o", help="Folder for index.html, tables.md "
                                     "and the figures.")],
    humans: Annotated[str | None, typer.Option("--humans", help="Human reference scores: a "
                                               "JSON file shaped like an M3Eval score "
                                               "file.")] = None,
    title: Annotated[str, typer.Option("--title", help="The report's title.")] = "m3kit report",
    baseline: Annotated[str | None, typer.Option("--baseline", help="An eval log or a folder "
                                                 "of one system's logs: each run of its "
                                                 "benchmark is compared with it (Δ vs "
                                                 "baseline, * where significant).")] = None,
) -> None:
    """Render paper-style tables and figures (M3Eval Tables 1-3, Figures 8-11, ...)."""
    from m3kit.report.build import build_report

    index = build_report(paths, out, humans=humans, title=title, baseline=baseline)
    typer.echo(f"report: {index}")
