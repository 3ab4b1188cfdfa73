"""``m3kit score <benchmark> --data ... --predictions FILE [--json]``: score another harness's
raw outputs with m3kit's metrics. One verb per declared benchmark, built here from its
declaration (``Benchmark.score_command``: the verb, its help and its options); the verb calls
the benchmark's ``score_predictions`` and prints its ``score_text`` or the card's JSON.

``--ci`` adds a percentile cluster-bootstrap interval to every headline number
(``m3kit.benchmarks.intervals``; ``--ci-level``, ``--resamples``, ``--seed``): ``value [lo,
hi] (n units)`` in a table after the score, or in ``--json`` a ``ci`` object ``{name: {value,
lo, hi, n_units}}`` with ``ci_unit`` (what was resampled), ``ci_level``, ``ci_resamples`` and
``ci_seed``.

``--items`` (with ``--json``) adds the per-item records the score counted (``items``: the
benchmark's ``BenchmarkScoring.item`` records, each with its id and the unit the bootstrap
resamples, at full precision) and ``benchmark`` (the declaration's name): a file ``m3kit
compare`` takes.

``--json`` adds the score's reproducibility card (``card``: m3kit and inspect-ai versions, the
data set's fingerprint, the scoring rules in force, the predictions file's sha256; ``model``
``null``, unknown for external predictions).

Every verb says what it could not use the same way: the first ``SHOW_SKIPPED`` skipped records
on stderr as ``m3kit: skipped: <file>: record <r>: field '<f>': <reason>`` (all of them are in
``--json``'s ``skipped``), then how many predictions match no question; exit 2, one line, when
nothing can be scored.
"""

from __future__ import annotations

import inspect
import json
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from m3kit.benchmarks import BENCHMARKS, Benchmark, ScoreOption
from m3kit.cli.options import parse_key_values
from m3kit.cli.progress import count_bars
from m3kit.metrics.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

if TYPE_CHECKING:
    from m3kit.benchmarks.intervals import HeadlineIntervals
    from m3kit.schema.report import Table

__all__ = ["SHOW_SKIPPED", "app", "build_score_command", "print_blocks"]

SHOW_SKIPPED = 5  # skipped records named on stderr; --json lists them all
TEXT_WIDTH = 80  # text blocks under a score's tables wrap here
SHOW_UNMATCHED = 5  # unmatched prediction ids named on stderr
SKIPPED_FIRST = "n_skipped_records"  # the first key of what a score's JSON says was skipped


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


def print_blocks(blocks: Sequence[Any]) -> None:
    """Text blocks wrapped at ``TEXT_WIDTH`` columns; ``m3kit.schema.report.Table``s drawn by
    rich (within the terminal's width), the first column left-aligned and the others
    right-aligned."""
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console()
    for block in blocks:
        if isinstance(block, str):
            # lines of text wrap at 80 columns at word boundaries, continuations indented
            for line in block.splitlines():
                indent = " " * (len(line) - len(line.lstrip(" ")))
                for part in textwrap.wrap(line, TEXT_WIDTH, subsequent_indent=indent + "    ",
                                          break_long_words=False,
                                          break_on_hyphens=False) or [""]:
                    typer.echo(part)
            continue
        table = RichTable(title=block.title)
        for i, column in enumerate(block.columns):
            table.add_column(column, justify="left" if i == 0 else "right")
        for row in block.rows:
            table.add_row(*(str(cell) for cell in row))
        console.print(table)


def _with_card(numbers: dict[str, Any], card: dict[str, Any]) -> dict[str, Any]:
    """The score's JSON with its reproducibility card after the numbers, before what was
    skipped (which closes the JSON)."""
    out: dict[str, Any] = {}
    for key, value in numbers.items():
        if key == SKIPPED_FIRST:
            out["card"] = card
        out[key] = value
    out.setdefault("card", card)
    return out


def _annotation(option: ScoreOption) -> tuple[Any, Any]:
    """The typer annotation and default of one declared option."""
    info = typer.Option(*option.flags, help=option.help)
    if option.flag:
        return Annotated[bool, info], False
    if option.multiple or option.key_values:
        kind = str if option.key_values else option.type
        # a type built at run time from the declaration, for typer; no static type names it
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


_CI_PARAMS: list[tuple[str, Any, Any]] = [
    ("ci", Annotated[bool, typer.Option(
        "--ci", help="Add a percentile cluster-bootstrap confidence interval to every "
                     "headline number (resampling the benchmark's independent unit).")], False),
    ("ci_level", Annotated[float, typer.Option(
        "--ci-level", help="The intervals' confidence level, between 0 and 1.")],
     DEFAULT_LEVEL),
    ("resamples", Annotated[int, typer.Option(
        "--resamples", min=1, help="Bootstrap resamples for --ci.")], DEFAULT_RESAMPLES),
    ("seed", Annotated[int, typer.Option("--seed", help="Seed of the --ci resamples.")],
     DEFAULT_SEED),
]


_ITEMS_PARAM: tuple[str, Any, Any] = (
    "items", Annotated[bool, typer.Option(
        "--items", help="With --json: add the per-item records (ids, the resampled unit) and "
                        "the benchmark's name, for 'm3kit compare A.json B.json'.")], False)


def _items(benchmark: Benchmark, given: dict[str, Any], options: dict[str, Any]) -> list[Any]:
    """The predictions file's per-item records, read with the same options as the score."""
    from m3kit.errors import M3kitError

    read = benchmark.scoring.load().items_from_predictions
    if read is None:
        raise M3kitError(f"{benchmark.title} declares no per-item records", field="items")
    return read(given["data"], given["predictions"], **options)


def _intervals(benchmark: Benchmark, given: dict[str, Any],
               items: Sequence[Any]) -> HeadlineIntervals:
    """``--ci``: the headline intervals of the predictions file's ``items``."""
    from m3kit.benchmarks.intervals import item_intervals
    from m3kit.errors import M3kitError

    scoring = benchmark.scoring.load()
    if scoring.headline is None or scoring.cluster_of is None:
        raise M3kitError(f"{benchmark.title} declares no headline numbers to put intervals on",
                         field="ci")
    return item_intervals(benchmark, items, resamples=given["resamples"],
                          level=given["ci_level"], seed=given["seed"])


def _before_skips(numbers: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra``'s keys after the score's numbers, before what was skipped."""
    out: dict[str, Any] = {}
    for key, value in numbers.items():
        if key == SKIPPED_FIRST:
            out.update(extra)
        out[key] = value
    return {**out, **{k: v for k, v in extra.items() if k not in out}}


def _interval_blocks(intervals: HeadlineIntervals, spec: str) -> list[str | Table]:
    """What was resampled, then the headline numbers as ``value [lo, hi]`` with the units
    each rests on, one a row."""
    from m3kit.schema.report import Table

    return [intervals.heading() + ":",
            Table(title="", columns=["headline", "value [lo, hi] (units)"],
                  rows=[[name, interval.text(spec, units=True)]
                        for name, interval in intervals.ci.items()])]


def build_score_command(benchmark: Benchmark) -> Callable[..., None]:
    """The typer command of ``m3kit score <benchmark.score_verb>``."""
    spec = benchmark.score_command

    def command(**given: Any) -> None:
        from m3kit.errors import M3kitError
        from m3kit.schema import NothingToScoreError

        if given["items"] and not given["as_json"]:
            raise M3kitError("the per-item records are part of the JSON: give --json too",
                             field="items")
        if given["ci"] and not 0 < given["ci_level"] < 1:
            raise M3kitError(f"--ci-level must be between 0 and 1, got {given['ci_level']}",
                             field="ci_level")
        options = {o.name: _option_value(o, given[o.name]) for o in spec.options}
        score = benchmark.scoring.load().score_predictions
        try:
            # a scorer that calls models (a judge) reports its progress: bars on stderr
            with count_bars(Console(stderr=True)) as report:
                takes_progress = "progress" in inspect.signature(score).parameters
                extra = ({"progress": lambda done, total: report("judging", done, total)}
                         if takes_progress else {})
                card = score(given["data"], given["predictions"], **options, **extra)
        except NothingToScoreError as exc:
            _report_skips(exc.skipped)
            raise
        _report_skips(card.skipped or (), card.unmatched_ids, card.notes)
        # the items once, for both the intervals and --items
        items = _items(benchmark, given, options) if given["ci"] or given["items"] else []
        intervals = _intervals(benchmark, given, items) if given["ci"] else None
        if given["as_json"]:
            numbers = card.score_json()
            if intervals is not None:
                numbers = _before_skips(numbers, intervals.model_dump(mode="json"))
            if given["items"]:
                numbers = _before_skips(numbers, {
                    "benchmark": benchmark.name,
                    "items": [item.model_dump(mode="json") for item in items]})
            # how the score was made: versions, data fingerprint, rules, predictions sha256
            made = benchmark.predictions_card(given["data"], given["predictions"], options)
            typer.echo(json.dumps(_with_card(numbers, made.model_dump(mode="json")),
                                  indent=2))
        else:
            print_blocks(benchmark.scoring.load().score_text(card, given["predictions"]))
            if intervals is not None:
                print_blocks(_interval_blocks(intervals, benchmark.headline_format))

    params = [
        ("data", Annotated[Path, typer.Option("--data", help=spec.data_help)],
         inspect.Parameter.empty),
        ("predictions", Annotated[Path, typer.Option(*spec.predictions_flags,
                                                     help=spec.predictions_help)],
         inspect.Parameter.empty),
        *((o.name, *_annotation(o)) for o in spec.options),
        ("as_json", Annotated[bool, typer.Option("--json", help=spec.json_help)], False),
        *_CI_PARAMS,
        _ITEMS_PARAM,
    ]
    # typer reads the parameters from ``__signature__``, which mypy does not know on a function
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
