"""``m3kit score m3exam --data DIR --predictions FILE [--judge-model M] [--json]``: score another
harness's free-text answers with M3Exam's metrics (graded EM, F1, BLEU-1, LLM judge, Overall)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = [
    "AsJsonOption",
    "ModelArgsOption",
    "NoCacheOption",
    "load_benchmark_data",
    "score_m3exam",
]

# The judge options ``m3kit score m3exam`` and ``m3kit judge-agreement`` share.
ModelArgsOption = Annotated[
    list[str] | None, typer.Option("-M", help="Judge model argument key=value (repeatable).")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Do not reuse cached judge replies.")
]
AsJsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
SHOW_SKIPPED = 5  # skip lines printed on stderr; --json lists them all


def load_benchmark_data(path: Path):  # -> M3ExamData
    """M3Exam persona folder(s), or LoCoMo when ``path`` is (or holds) ``locomo*.json``."""
    from m3kit.benchmarks.m3exam.load import is_persona_folder, load_m3exam
    from m3kit.benchmarks.m3exam.locomo import load_locomo

    if path.is_file() or (
        path.is_dir() and not is_persona_folder(path) and any(path.glob("locomo*.json"))
    ):
        return load_locomo(path)
    return load_m3exam(path)


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, float) else "-" if value is None else str(value)


def score_m3exam(
    data: Annotated[
        Path, typer.Option("--data", help="A persona folder, a folder of them, or locomo10.json.")
    ],
    predictions: Annotated[
        Path, typer.Option("--predictions", help='JSONL of {"id", "prediction", "judge"?}.')
    ],
    judge_model: Annotated[
        str | None,
        typer.Option("--judge-model", help="inspect model that fills missing judge scores."),
    ] = None,
    model_arg: ModelArgsOption = None,
    no_cache: NoCacheOption = False,
    fj_letter: Annotated[
        bool,
        typer.Option("--fj-letter", help="Score fj by the option letter the answer states "
                     "(m3kit's addition; default: the whole answer, as the paper)."),
    ] = False,
    as_json: AsJsonOption = False,
) -> None:
    """Per-type and TOTAL EM / F1 / BLEU-1 / LLM-J and the Overall Score, on the 0-1 scale."""
    from rich.console import Console
    from rich.table import Table

    from m3kit.benchmarks.m3exam.score import read_predictions
    from m3kit.benchmarks.m3exam.score import score_m3exam as score
    from m3kit.cli.options import parse_key_values

    dataset = load_benchmark_data(data)
    records, bad = read_predictions(predictions)
    err = Console(stderr=True)
    result = score(
        dataset,
        records,
        judge_model=judge_model,
        judge_model_args=parse_key_values(model_arg, "-M"),
        cache=not no_cache,
        fj_rule="letter" if fj_letter else "exact",
    )
    # every skip, in the JSON: the prediction file's bad lines, the data's, the scorer's
    result["skipped"] = [str(i) for i in bad] + result["skipped"]
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        _print_skipped(err, result)
        return
    table = Table(title=f"M3Exam scores: {predictions.name} (fj EM: {result['fj_rule']})")
    for column in ("type", "count", "EM", "F1", "BLEU-1", "LLM-J", "Overall"):
        table.add_column(column, justify="left" if column == "type" else "right")
    for qtype, row in result["per_type"].items():
        table.add_row(
            qtype, str(row["count"]), _fmt(row["em"]), _fmt(row.get("f1")),
            _fmt(row.get("bleu1")), _fmt(row.get("llm_judge")), "",
        )  # fmt: skip
    total = result["total"]
    table.add_row(
        "TOTAL", str(total["count"]), _fmt(total["em"]), _fmt(total["f1"]),
        _fmt(total["bleu1"]), _fmt(total["llm_judge"]), _fmt(total["overall"]),
    )  # fmt: skip
    Console().print(table)
    _print_skipped(err, result)


def _print_skipped(err: Any, result: dict[str, Any]) -> None:
    """The first ``SHOW_SKIPPED`` skips on stderr, then how many more (all are in ``--json``),
    as ``m3kit eval`` prints a loader's skips."""
    skipped = result["skipped"]
    for line in skipped[:SHOW_SKIPPED]:
        err.print(f"m3kit: skipped: {line}", markup=False, highlight=False, soft_wrap=True)
    if len(skipped) > SHOW_SKIPPED:
        err.print(f"m3kit: ... and {len(skipped) - SHOW_SKIPPED} more skipped (all are listed "
                  "under \"skipped\" in --json)", markup=False, highlight=False)
    if result["missing"]:
        err.print(f"m3kit: {result['missing']} questions have no prediction", markup=False)
