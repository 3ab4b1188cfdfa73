"""``m3kit judge-agreement FILE [--judge-model M ...] [--threshold T] [--json]``: how often LLM
judges agree with human correct/incorrect labels (the paper's Table 3).

FILE is JSONL, one item per line::

    {"id": "q1", "question": "...", "gold": "...", "prediction": "...",
     "human": true, "group": "image", "judges": {"qwen-32b": 0.75}}

``human`` is the person's verdict; ``group`` the task family reported separately (optional;
the ``overall`` column counts every item, ``(no group)`` those without a group);
``judges`` scores already given by named judges (optional). Each ``--judge-model`` is run on
every item with the five-level rubric. Scores >= ``--threshold`` count as correct. An id
that appears again is counted once: the first item is kept, later ones are reported skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.options import AsJsonOption, ModelArgsOption, NoCacheOption, parse_key_values

__all__ = ["judge_agreement_command"]


def judge_agreement_command(
    labels_file: Annotated[
        Path,
        typer.Argument(
            help='JSONL of {"id", "question", "gold", "prediction", "human", "group"?, "judges"?}.'
        ),
    ],
    judge_model: Annotated[
        list[str] | None,
        typer.Option("--judge-model", help="inspect model to run as a judge (repeatable)."),
    ] = None,
    model_arg: ModelArgsOption = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help="Judge scores at or above this are correct.")
    ] = 0.75,
    no_cache: NoCacheOption = False,
    as_json: AsJsonOption = False,
) -> None:
    """Judgment counts (correct / incorrect) and accuracy against the human labels, per group."""
    from rich.console import Console
    from rich.table import Table

    from m3kit.benchmarks.m3exam.judge import HumanLabel, judge_agreement_report
    from m3kit.errors import SchemaError
    from m3kit.schema import read_jsonl_lenient

    labels, bad = read_jsonl_lenient(labels_file, HumanLabel)
    err = Console(stderr=True)
    for error in bad:
        err.print(f"m3kit: skipped: {error}", markup=False, highlight=False, soft_wrap=True)
    if not labels:
        raise SchemaError("no usable labelled items", path=labels_file)
    report = judge_agreement_report(
        labels,
        judge_model or [],
        model_args=parse_key_values(model_arg, "-M"),
        threshold=threshold,
        cache=not no_cache,
    )
    report["skipped"] = [str(e) for e in bad] + report["skipped"]
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    # one row per judge and group (the groups grow with the file, so they are not columns:
    # a wide table would be cut at 80 columns)
    table = Table(title=f"Judge agreement with human labels (correct at >= {threshold})")
    table.add_column("judge")
    table.add_column("group")
    table.add_column("correct / incorrect", justify="right")
    table.add_column("agree / count", justify="right")
    table.add_column("acc. (%)", justify="right")
    for name, row in report["table"].items():
        label = "Human verification" if name == "human" else name
        for n, (group, cell) in enumerate(row.items()):
            accuracy = cell["accuracy"]  # None: nothing compared in this cell (0/0)
            shown = "—" if accuracy is None else f"{100 * accuracy:.0f}"
            table.add_row(label if n == 0 else "", group,
                          f"{cell['correct']} / {cell['incorrect']}",
                          f"{cell['agree']} / {cell['count']}", shown,
                          end_section=n == len(row) - 1)
    Console().print(table)
    for line in report["skipped"][len(bad):]:  # the unreadable lines were printed above
        err.print(f"m3kit: skipped: {line}", markup=False, highlight=False, soft_wrap=True)
    for line in report.get("judge_failures", []):
        err.print(f"m3kit: judge: {line}", markup=False, highlight=False, soft_wrap=True)
