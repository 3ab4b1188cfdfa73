"""``m3kit export LOG ... [--format jsonl|csv] [--out FILE]``: one row per sample of eval logs.

Thin: the logs are found as ``m3kit report`` finds them (``m3kit.report.inputs.read_inputs``:
files or folders, a damaged log skipped with a warning), the rows are
``m3kit.report.export``'s.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["export_command"]


def export_command(
    logs: Annotated[list[Path], typer.Argument(help="Eval logs (.eval/.json) or folders of "
                                               "them.")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl (nested, full precision) or csv "
                                     "(scores.* and settings.* columns).")] = "jsonl",
    out: Annotated[Path | None, typer.Option("--out", help="Write here instead of standard "
                                             "output.")] = None,
) -> None:
    """One row per sample: id, question, prediction, parsed answer, scores, cost, settings."""
    from m3kit.errors import M3kitError
    from m3kit.files import atomic_file
    from m3kit.report.export import EXPORT_FORMATS, export_rows, write_rows
    from m3kit.report.inputs import read_inputs

    if fmt not in EXPORT_FORMATS:
        raise M3kitError(f"--format must be one of {', '.join(EXPORT_FORMATS)}, got {fmt!r}",
                         field="format")
    # a foreign task's rows as they are; a damaged log is skipped with read_inputs' one warning
    inputs = read_inputs(logs, foreign=True)
    if not inputs.logs:
        raise M3kitError("no eval log found in " + ", ".join(str(p) for p in logs))
    rows = export_rows(inputs.logs)
    if out is None:
        write_rows(rows, fmt, sys.stdout)
        return
    with atomic_file(out, "w") as handle:
        write_rows(rows, fmt, handle)
    typer.echo(f"{len(rows)} rows -> {out}", err=True)
