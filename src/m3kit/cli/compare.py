"""``m3kit compare A B``: run B against run A on the same questions, per headline number the
difference with its paired cluster-bootstrap interval and p-value, and McNemar's exact test.

Two forms, one result: ``m3kit compare LOG_A LOG_B`` for eval logs (a log, or a folder of one
system's logs), ``m3kit compare --score VERB --data DIR --predictions A --predictions B`` for
two other harnesses' predictions on the same data. Thin: everything happens in
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
        help="Run A, then run B: an eval log (.eval/.json) or a folder of one system's logs.",
        show_default=False)] = None,
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
        "--json", help="Print the comparison as JSON (full precision).")] = False,
) -> None:
    """Compare run B with run A on their shared questions: per headline number B - A, its
    paired cluster-bootstrap interval and p-value; McNemar's exact test on accuracy."""
    from m3kit.report.compare import compare_inputs, comparison_blocks

    comparison = compare_inputs(runs or [], score=score, data=data,
                                predictions=predictions or [],
                                score_options=parse_key_values(score_option, "--score-option"),
                                resamples=resamples, level=level, seed=seed)
    if comparison.card_differences:
        typer.echo("m3kit: warning: the runs' cards differ in "
                   f"{', '.join(comparison.card_differences)}: the difference may not be the "
                   "model's alone", err=True)
    for name, ids in (("A", comparison.only_a), ("B", comparison.only_b)):
        if ids:
            more = " ..." if len(ids) > SHOW_ONLY else ""
            typer.echo(f"m3kit: {len(ids)} questions only in run {name}, left out: "
                       f"{', '.join(ids[:SHOW_ONLY])}{more}", err=True)
    if as_json:
        typer.echo(json.dumps(comparison.model_dump(mode="json"), indent=2))
        return
    from m3kit.cli.score import print_blocks

    print_blocks(comparison_blocks(comparison))
