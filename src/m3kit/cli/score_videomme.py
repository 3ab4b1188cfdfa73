"""``m3kit score videomme-v2 --data DIR --predictions FILE [--json]``: score any harness's raw
Video-MME-v2 replies (lmms-eval, VLMEvalKit, the released script, your own) with the official
answer extraction and the grouped non-linear scores.

Thin: reading in ``benchmarks.videomme_v2.load``, scoring in ``benchmarks.videomme_v2.score``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

__all__ = ["score_videomme_v2"]


def _cell(value: float | None) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.2f}"


def score_videomme_v2(
    data: Annotated[Path, typer.Option("--data", help="The Video-MME-v2 folder, or its "
                                       "test.parquet / .jsonl / .tsv table.")],
    predictions: Annotated[Path, typer.Option("--predictions", "-p", help="JSONL or TSV with "
                                              "question_id and prediction (raw model text); an "
                                              "lmms-eval samples JSONL works too.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the leaderboard numbers as "
                                          "JSON.")] = False,
) -> None:
    """Score external Video-MME-v2 predictions exactly as the official evaluation does."""
    from m3kit.benchmarks.videomme_v2.load import load_videomme_v2, read_predictions
    from m3kit.benchmarks.videomme_v2.score import score_predictions

    loaded = load_videomme_v2(data)
    replies, bad_records = read_predictions(predictions)
    result = score_predictions(loaded, replies)
    err = Console(stderr=True)
    for error in [*loaded.skipped, *bad_records]:
        err.print(f"skipped: {error}", markup=False, highlight=False, soft_wrap=True)
    if result.n_missing:
        err.print(f"{result.n_missing} question(s) have no prediction: scored as failed "
                  "extractions", markup=False, highlight=False)
    if as_json:
        typer.echo(json.dumps(result.leaderboard(), indent=2))
        return
    console = Console()
    table = Table(title=f"Video-MME-v2 · {result.n_groups} groups · {predictions.name}")
    table.add_column("metric")
    table.add_column("score", justify="right")
    for key in ("total", "level_1", "level_2", "level_3", "relevance_score",
                "relevance_linear_score", "logic_score", "avg_acc", "non_lin_over_avg_acc"):
        table.add_row(key, _cell(getattr(result, key)))
    table.add_row("n_failed_extraction", str(result.n_failed_extraction))
    console.print(table)
    for title, heads in (("second head", result.second_head), ("third head", result.third_head)):
        if heads:
            sub = Table(title=title)
            sub.add_column("name")
            sub.add_column("score", justify="right")
            for name, value in heads.items():
                sub.add_row(name, _cell(value))
            console.print(sub)
