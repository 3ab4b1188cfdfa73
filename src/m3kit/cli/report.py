"""``m3kit report PATH... --out DIR``: eval logs and score files to an HTML report.

Thin: everything happens in ``m3kit.report.build.build_report``; ``--layout main|cost`` draws
one layout instead (``m3kit.report.layouts``), ``--json`` prints its records.
"""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["report_command"]


def report_command(
    paths: Annotated[list[str], typer.Argument(help="Eval logs (.eval/.json), folders of them, "
                                               "or M3Eval score files (m3kit score m3eval "
                                               "--json; the file's stem names the system).")],
    out: Annotated[str | None, typer.Option("--out", "-o", help="Folder for index.html, "
                                            "tables.md and the figures.")] = None,
    humans: Annotated[str | None, typer.Option("--humans", help="Human reference scores: a "
                                               "JSON file shaped like an M3Eval score "
                                               "file.")] = None,
    title: Annotated[str, typer.Option("--title", help="The report's title.")] = "m3kit report",
    baseline: Annotated[str | None, typer.Option("--baseline", help="An eval log or a folder "
                                                 "of one system's logs: each run of its "
                                                 "benchmark is compared with it (Δ vs "
                                                 "baseline, * where significant).")] = None,
    layout: Annotated[str, typer.Option("--layout", help="full: each benchmark's tables and "
                                        "figures; main: the M3Exam paper's main table of "
                                        "memory systems (M3Exam, LoCoMo); cost: each run's "
                                        "ingest and per-question cost (any benchmark).")
                      ] = "full",
    as_json: Annotated[bool, typer.Option("--json", help="Print the layout's records "
                                          "(main or cost), unrounded.")] = False,
) -> None:
    """Render paper-style tables and figures (M3Eval Tables 1-3, Figures 8-11, ...)."""
    from m3kit.errors import M3kitError
    from m3kit.report.layouts import check_layout

    chosen = check_layout(layout)
    if chosen == "full":
        if as_json:
            raise M3kitError("--json prints a layout's records: give --layout main or "
                             "--layout cost", field="--json")
        if out is None:
            raise M3kitError("give --out DIR: the folder the report is written into",
                             field="--out")
        from m3kit.report.build import build_report

        index = build_report(paths, out, humans=humans, title=title, baseline=baseline)
        typer.echo(f"report: {index}")
        return
    if humans is not None or baseline is not None:
        raise M3kitError(f"--humans and --baseline belong to the full report, not the "
                         f"{chosen} layout", field="--layout")
    if out is None and not as_json:
        raise M3kitError("give --out DIR for the layout's report, or --json for its records",
                         field="--out")
    from m3kit.report.layouts import draw_layout, write_layout

    drawn = draw_layout(chosen, paths)
    if out is not None:
        index = write_layout(drawn, out, title=title)
        # with --json, stdout is the JSON alone
        typer.echo(f"report: {index}", err=as_json)
    if as_json:
        typer.echo(drawn.records_json())
