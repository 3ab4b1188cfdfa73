"""``m3kit compare A B``: run B against run A on the same questions, per headline number the
difference with its paired cluster-bootstrap interval and p-value, and McNemar's exact test.

Two forms, one result: ``m3kit compare A B`` for eval logs (a log, or a folder of logs) or
score files (``m3kit score VERB --json --items``), ``m3kit compare --score VERB --data DIR
--predictions A --predictions B`` for two other harnesses' predictions on the same data. Where
both sides hold logs of several benchmarks (two quickstart folders), each benchmark both hold
is compared on its own, one after the other, and those of one side only are named on stderr;
where they hold several systems of a benchmark, the systems of one label are compared
pairwise, one comparison each (``--system LABEL``: that one only). ``--json`` prints an object
keyed by benchmark, always, each a list of comparisons, one element per pair. Thin:
everything happens in ``m3kit.report.compare``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.options import parse_key_values
from m3kit.metrics.bootstrap import DEFAULT_LEVEL, DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = ["compare_command"]

SHOW_ONLY = 5  # ids of items in one run only named in the text output; --json lists them all


def compare_command(
    runs: Annotated[list[str] | None, typer.Argument(
        help="Run A, then run B: an eval log (.eval/.json), a folder of logs, or a score file "
             "of 'm3kit score VERB --json --items'.", show_default=False)] = None,
    system: Annotated[str | None, typer.Option(
        "--system", help="Compare only the system of this label (as the report labels it) "
                         "where a side holds several.")] = None,
    score: Annotated[str | None, typer.Option(
        "--score", help="Compare two predictions files instead, scored by this benchmark's "
                        "'m3kit score' verb (m3eval, videomme-v2, m3exam).")] = None,
    data: Annotated[Path | None, typer.Option(
        "--data", help="With --score: the benchmark's data, as 'm3kit score VERB --data'.")
    ] = None,
    predictions: Annotated[list[Path] | None, typer.Option(
        "--predictions", help="With --score: run A's predictions, then run B's (twice).")
    ] = None,
    score_option: Annotated[list[str] | None, typer.Option(
        "--score-option", "-O", help="With --score: an option of the score verb as "
        "name=value, by its keyword name (fj_rule=letter, judge_model=openai/gpt-4o, "
        "review=FILE; repeatable).")] = None,
    resamples: Annotated[int, typer.Option(
        "--resamples", help="Bootstrap resamples.")] = DEFAULT_RESAMPLES,
    level: Annotated[float, typer.Option(
        "--level", help="Level of the difference's interval.")] = DEFAULT_LEVEL,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resamples.")] = DEFAULT_SEED,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the comparisons as JSON keyed by benchmark, each a list with "
                       "one element per pair of systems (full precision).")] = False,
) -> None:
    """Compare run B with run A on their shared questions: per headline number B - A, its
    paired cluster-bootstrap interval and p-value; McNemar's exact test on accuracy."""
    from m3kit.benchmarks import benchmark_named
    from m3kit.report.compare import by_benchmark, compare_inputs, comparison_blocks

    result = compare_inputs(runs or [], score=score, data=data, predictions=predictions or [],
                            score_options=parse_key_values(score_option, "--score-option"),
                            system=system, resamples=resamples, level=level, seed=seed)
    # with several benchmarks compared, each line says which benchmark it is about
    benchmarks = by_benchmark(result.comparisons)
    several_benchmarks = len(benchmarks) + len(result.not_compared) > 1

    def title(name: str) -> str:
        found = benchmark_named(name)
        return f"{found.title if found is not None else name}: " if several_benchmarks else ""

    only = [f"{name} (run {side})" for side, names in (("A", result.benchmarks_only_a),
                                                         ("B", result.benchmarks_only_b))
            for name in names]
    if only:
        typer.echo(f"m3kit: benchmarks in one run only, left out: {', '.join(only)}", err=True)
    for name, reason in result.not_compared.items():
        typer.echo(f"m3kit: {title(name)}not compared: {reason}", err=True)
    for side, by_name in (("A", result.systems_only_a), ("B", result.systems_only_b)):
        for name, labels in by_name.items():
            typer.echo(f"m3kit: {title(name)}systems only in run {side}, left out: "
                       f"{', '.join(labels)}", err=True)
    several = len(result.comparisons) > 1
    for comparison in result.comparisons:
        # with several pairs, each line says which pair it is about
        pair = (comparison.a if comparison.a == comparison.b
                else f"{comparison.a} vs {comparison.b}")
        which = f"{title(comparison.benchmark)}{pair}: " if several else ""
        if comparison.card_differences:
            typer.echo(f"m3kit: warning: {which}the runs' cards differ in "
                       f"{', '.join(comparison.card_differences)}: the difference may not be "
                       "the model's alone", err=True)
        for name, ids in (("A", comparison.only_a), ("B", comparison.only_b)):
            if ids:
                more = " ..." if len(ids) > SHOW_ONLY else ""
                typer.echo(f"m3kit: {which}{len(ids)} questions only in run {name}, left out: "
                           f"{', '.join(ids[:SHOW_ONLY])}{more}", err=True)
    if as_json:
        typer.echo(json.dumps({name: [c.model_dump(mode="json") for c in comparisons]
                               for name, comparisons in benchmarks.items()}, indent=2))
        return
    from m3kit.cli.score import print_blocks

    for index, comparison in enumerate(result.comparisons):
        if index:
            typer.echo("")
        print_blocks(comparison_blocks(comparison))
