"""``m3kit supermemory``: SuperMemory-VQA helpers.

    m3kit supermemory synth [--out DIR] [--persons N] [--sessions N] [--seed S]
        a synthetic egocentric suite in the released layout (``m3kit.synth.ego``)
    m3kit supermemory stats --data ROOT [--json]
        the data set's statistics (the paper's appendix E), no predictions needed
    m3kit supermemory annotate captions|questions ...
        the two-stage annotation pipeline on your own recordings (``m3kit.cli.annotate``)
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli import annotate

app = typer.Typer(help="SuperMemory-VQA: a synthetic suite in the released layout, and the "
                       "annotation pipeline for your own recordings.", no_args_is_help=True)
app.add_typer(annotate.app, name="annotate")


@app.command("synth")
def synth(
    out: Annotated[Path | None, typer.Option(
        "--out", help="Dataset root to write: a new or empty folder, or one holding this "
                      "config's suite (default: the m3kit cache, named by the config).")]
        = None,
    persons: Annotated[int | None, typer.Option("--persons", help="Persons (default 10).")]
        = None,
    sessions: Annotated[int | None, typer.Option(
        "--sessions", help="Sessions (days) per person (default 3).")] = None,
    segments: Annotated[int | None, typer.Option(
        "--segments", help="Scenes of 6 s per session (default 8).")] = None,
    size: Annotated[int | None, typer.Option("--size", help="Frame width = height (default "
                                                             "256).")] = None,
    fps: Annotated[float | None, typer.Option("--fps", help="Frame rate (default 2).")] = None,
    seed: Annotated[int, typer.Option("--seed")] = 0,
) -> None:
    """Build (or reuse) a seeded synthetic egocentric suite; print its counts and root."""
    from pydantic import ValidationError

    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite
    from m3kit.synth.errors import SynthError

    given = {"persons": persons, "sessions": sessions, "segments": segments, "size": size,
             "fps": fps}
    try:
        config = EgoSuiteConfig.model_validate(
            {"seed": seed, **{k: v for k, v in given.items() if v is not None}})
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SynthError(err["msg"], field=".".join(str(x) for x in err["loc"]) or None) from None
    suite = build_ego_suite(out, config)
    counts = ", ".join(f"{k} {v}" for k, v in sorted(suite.manifest.counts.items()))
    answerable = sum(q.is_answerable for q in suite.questions)
    typer.echo(f"{len(suite.questions)} questions ({answerable} answerable): {counts}")
    typer.echo(str(suite.root))


@app.command("stats")
def stats(
    data: Annotated[Path, typer.Option(
        "--data",
        help="The SuperMemory-VQA folder (holding data/json/all_qa.json) or all_qa.json.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Questions per skill, answerable share, evidence counts and durations, and the temporal
    gap between evidence and question (appendix E); skipped records are named."""
    from m3kit.benchmarks.supermemory.load import load_supermemory
    from m3kit.benchmarks.supermemory.stats import dataset_stats, stats_tables
    from m3kit.cli.score import print_blocks

    loaded = load_supermemory(data)
    figures = dataset_stats(loaded.questions)
    if as_json:
        typer.echo(figures.model_dump_json(indent=2))
    else:
        print_blocks(stats_tables(figures))
    for record in loaded.skipped:
        typer.echo(f"m3kit: skipped {record}", err=True)
