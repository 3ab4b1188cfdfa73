"""``m3kit score m3eval --data ROOT --predictions FILE [--json]``: another harness's raw outputs
scored with M3Eval's strict parsing and the paper's tables.

FILE is JSON Lines of ``{"id": ..., "prediction": "<raw model text>"}`` (N-Back ids are the
records' ``question_id``). Thin: reading in ``m3kit.benchmarks.m3eval.load``
(``load_m3eval``, ``read_predictions``), numbers in
``m3kit.benchmarks.m3eval.score.score_predictions``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

__all__ = ["score_m3eval"]


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}"


def _print_tables(result: dict[str, Any]) -> None:
    da, mi, il, nb = (result["divided_attention"], result["memory_interference"],
                      result["interleaved"], result["nback"])
    lines = ["Divided attention (acc %)     source  order  content"]
    for key, label in (("no_swap", "no swap"), ("swap", "swap")):
        row = da[key]
        lines.append(f"  {label:<28}{_fmt(row['source_identification']):>7}"
                     f"{_fmt(row['order_understanding']):>7}{_fmt(row['content_retention']):>9}")
    lines.append(f"  spatial source grounding    {_fmt(da['spatial_source_grounding']):>7}")
    lines.append("Memory interference           acc %   intrusion %")
    for key in ("proactive", "retroactive", "delta", "repeat_target", "repeat_interferer"):
        if key in mi:
            lines.append(f"  {key:<28}{_fmt(mi[key]['accuracy']):>7}"
                         f"{_fmt(mi[key]['intrusion_rate']):>12}")
    lines.append("Interleaved events (acc %)")
    for key, value in il.items():
        lines.append(f"  {key:<28}{_fmt(value):>7}")
    lines.append(f"N-Back (acc %)                {_fmt(nb['accuracy']):>7}")
    for group in ("by_attribute", "by_n", "by_k"):
        cells = ", ".join(f"{k}: {_fmt(v)}" for k, v in nb[group].items())
        lines.append(f"  {group:<28}{cells}")
    lines.append(f"invalid {result['n_invalid']}, excluded {result['n_excluded']}, "
                 f"missing {result['n_missing']}, scored {result['n_scored']}")
    typer.echo("\n".join(lines))


def score_m3eval(
    data: Annotated[Path, typer.Option("--data", help="The released M3Eval folder (qa_root/, "
                                       "questions/).")],
    predictions: Annotated[Path, typer.Option("--predictions", help="JSONL of {\"id\", "
                                              "\"prediction\"}.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    review: Annotated[Path | None, typer.Option("--review", help="Review file: score only "
                                                "accepted questions.")] = None,
    excluded: Annotated[list[str] | None, typer.Option("--exclude", help="A question id whose "
                                                       "video could not be read (repeatable)."
                                                       )] = None,
) -> None:
    """Score raw model outputs on M3Eval (values in percent, like the paper)."""
    from m3kit.benchmarks.m3eval.load import load_m3eval, read_predictions
    from m3kit.benchmarks.m3eval.score import score_predictions
    from m3kit.errors import SchemaError

    loaded = load_m3eval(data, review=review)
    preds, problems = read_predictions(predictions)
    known = {q.id for q in loaded.questions}
    unknown = sorted(set(preds) - known)
    for problem in [*(str(s) for s in loaded.skipped), *problems]:
        typer.echo(f"m3kit: skipped: {problem}", err=True)
    if unknown:
        shown = ", ".join(unknown[:5]) + (" ..." if len(unknown) > 5 else "")
        typer.echo(f"m3kit: {len(unknown)} predictions match no question: {shown}", err=True)
    # Nothing to score is an error, not a table of dashes with exit 0: the skipped records
    # above say why.
    if not loaded.questions:
        raise SchemaError(f"no question could be loaded ({len(loaded.skipped)} records "
                          "skipped, see above): nothing to score", path=data)
    if not set(preds) & known:
        raise SchemaError(f"none of the {len(preds)} predictions matches a question id of "
                          f"{data} ({len(known)} questions; N-Back ids are question_id)",
                          path=predictions)
    card = score_predictions(loaded.questions, preds, excluded=set(excluded or ()))
    result = card.model_copy(update={"n_skipped_records": len(loaded.skipped),
                                     "n_unmatched_predictions": len(unknown)}).model_dump()
    if as_json:
        typer.echo(json.dumps(result, indent=2))
    else:
        _print_tables(result)
