"""``m3kit compare A B``: run B against run A on the same questions, per headline number the
difference with its paired cluster-bootstrap interval and p-value, and McNemar's exact test.

Two forms, one result: ``m3kit compare A B`` for eval logs (a log, or a folder of logs) or
score files (``m3kit score VERB --json --items``), ``m3kit compare --score VERB --data DIR
--predictions A --predictions B`` for two other harnesses' predictions on the same data. Where
both sides hold several systems (two quickstart folders), the systems of one label are compared
pairwise, one comparison each (``--system LABEL``: that one only); ``--json`` prints a list of
comparisons, always, one element per pair. Thin: everything happens in
``m3kit.report.compare``.
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
        "--json", help="Print the comparisons as a JSON list, one per pair of systems "
                       "(full precision).")] = False,
) -> None:
    """Compare run B with run A on their shared questions: per headline number B - A, its
    paired cluster-bootstrap interval and p-value; McNemar's exact test on accuracy."""
    from m3kit.report.compare import compare_inputs, comparison_blocks

    result = compare_inputs(runs or [], score=score, data=data, predictions=predictions or [],
                            score_options=parse_key_values(score_option, "--score-option"),
                            system=system, resamples=resamples, level=level, seed=seed)
    for name, labels in (("A", result.systems_only_a), ("B", result.systems_only_b)):
        if labels:
            typer.echo(f"m3kit: systems only in run {name}, left out: {', '.join(labels)}",
                       err=True)
    several = len(result.comparisons) > 1
    for comparison in result.comparisons:
        # with several pairs, each line says which pair it is about
        pair = (comparison.a if comparison.a == comparison.b
                else f"{comparison.a} vs {comparison.b}")
        which = f"{pair}: " if several else ""
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
        typer.echo(json.dumps([c.model_dump(mode="json") for c in result.comparisons],
                              indent=2))
        return
    from m3kit.cli.score import print_blocks

    for index, comparison in enumerate(result.comparisons):
        if index:
            typer.echo("")
        print_blocks(comparison_blocks(comparison))
