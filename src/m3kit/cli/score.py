"""``m3kit score <benchmark> --data ... --predictions FILE [--json]``: score another harness's
raw outputs with m3kit's metrics. One verb per declared benchmark, built here from its
declaration (``Benchmark.score_command``: the verb, its help and its options); the verb calls
the benchmark's ``score_predictions`` and prints its ``score_text`` or the card's JSON.

Every verb says what it could not use the same way: the first ``SHOW_SKIPPED`` skipped records
on stderr as ``m3kit: skipped: <file>: record <r>: field '<f>': <reason>`` (all of them are in
``--json``'s ``skipped``), then how many predictions match no question; exit 2, one line, when
nothing can be scored.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from m3kit.benchmarks import BENCHMARKS, Benchmark, ScoreOption
from m3kit.cli.options import parse_key_values

__all__ = ["SHOW_SKIPPED", "app", "build_score_command"]

SHOW_SKIPPED = 5  # skipped records named on stderr; --json lists them all
SHOW_UNMATCHED = 5  # unmatched prediction ids named on stderr


def _report_skips(skipped: Sequence[Any], unmatched: Sequence[str] = (),
                  notes: Sequence[str] = ()) -> None:
    for record in skipped[:SHOW_SKIPPED]:
        typer.echo(f"m3kit: skipped: {record}", err=True)
    if len(skipped) > SHOW_SKIPPED:
        typer.echo(f"m3kit: ... and {len(skipped) - SHOW_SKIPPED} more skipped (all are listed "
                   "under \"skipped\" in --json)", err=True)
    if unmatched:
        shown = ", ".join(unmatched[:SHOW_UNMATCHED])
        more = " ..." if len(unmatched) > SHOW_UNMATCHED else ""
        typer.echo(f"m3kit: {len(unmatched)} predictions match no question: {shown}{more}",
                   err=True)
    for note in notes:
        typer.echo(f"m3kit: {note}", err=True)


def _print_blocks(blocks: Sequence[Any]) -> None:
    """Text blocks as they are; ``m3kit.schema.report.Table``s drawn by rich, the first column
    left-aligned and the others right-aligned."""
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console()
    for block in blocks:
        if isinstance(block, str):
            typer.echo(block)
            continue
        table = RichTable(title=block.title)
        for i, column in enumerate(block.columns):
            table.add_column(column, justify="left" if i == 0 else "right")
        for row in block.rows:
            table.add_row(*(str(cell) for cell in row))
        console.print(table)


def _annotation(option: ScoreOption) -> tuple[Any, Any]:
    """The typer annotation and default of one declared option."""
    info = typer.Option(*option.flags, help=option.help)
    if option.flag:
        return Annotated[bool, info], False
    if option.multiple or option.key_values:
        kind = str if option.key_values else option.type
        return Annotated[list[kind] | None, info], None  # type: ignore[valid-type]
    if option.default is None:
        return Annotated[option.type | None, info], None
    return Annotated[option.type, info], option.default


def _option_value(option: ScoreOption, given: Any) -> Any:
    if option.flag:
        return option.on if given else option.default
    if option.key_values:
        return parse_key_values(given, option.flags[0])
    return given


def build_score_command(benchmark: Benchmark) -> Callable[..., None]:
    """The typer command of ``m3kit score <benchmark.score_verb>``."""
    spec = benchmark.score_command

    def command(**given: Any) -> None:
        from m3kit.schema import NothingToScoreError

        options = {o.name: _option_value(o, given[o.name]) for o in spec.options}
        try:
            card = benchmark.score_predictions.load()(given["data"], given["predictions"],
                                                      **options)
        except NothingToScoreError as exc:
            _report_skips(exc.skipped)
            raise
        _report_skips(card.skipped or (), card.unmatched_ids, card.notes)
        if given["as_json"]:
            typer.echo(json.dumps(card.score_json(), indent=2))
        else:
            _print_blocks(benchmark.score_text.load()(card, given["predictions"]))

    params = [
        ("data", Annotated[Path, typer.Option("--data", help=spec.data_help)],
         inspect.Parameter.empty),
        ("predictions", Annotated[Path, typer.Option(*spec.predictions_flags,
                                                     help=spec.predictions_help)],
         inspect.Parameter.empty),
        *((o.name, *_annotation(o)) for o in spec.options),
        ("as_json", Annotated[bool, typer.Option("--json", help=spec.json_help)], False),
    ]
    command.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                          default=default)
        for name, annotation, default in params
    ])
    command.__annotations__ = {name: annotation for name, annotation, _ in params}
    command.__doc__ = spec.help
    command.__name__ = f"score_{benchmark.name}"
    return command


app = typer.Typer(help="Score predictions from any harness.", no_args_is_help=True)
for _benchmark in BENCHMARKS:
    app.command(_benchmark.score_verb)(build_score_command(_benchmark))
