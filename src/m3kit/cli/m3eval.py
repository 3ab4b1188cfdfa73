"""``m3kit m3eval``: build an M3Eval-style benchmark from your own videos.

    m3kit m3eval build SOURCES --out ROOT        pair videos, render every probe, save the plan
    m3kit m3eval generate ROOT --model MODEL     captions → questions → checker → review file
    m3kit m3eval review ROOT [--accept ID ...]   show or set review statuses

Each verb is a thin call into ``m3kit.benchmarks.m3eval``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.options import CallAttemptsOption, CallTimeoutOption, QuietOption
from m3kit.cli.progress import StageProgress, model_calls_told
from m3kit.models.backend import DEFAULT_CALL_ATTEMPTS, DEFAULT_CALL_TIMEOUT

_STAGE_LABELS = {"captions": "videos captioned", "questions": "question jobs",
                 "nback": "N-back instances", "build": "pairs and N-back instances built"}

app = typer.Typer(help="Build an M3Eval-style benchmark from your own videos.",
                  no_args_is_help=True)


@app.command("build")
def build(
    sources: Annotated[Path, typer.Argument(
        help="A folder of videos (caption/title in <stem>.txt beside each, else the file name) "
             "or a JSONL of {\"id\", \"video\", \"text\"}.")],
    out: Annotated[Path, typer.Option("--out", help="Benchmark root to write.")],
    swaps: Annotated[int, typer.Option("--swaps", help="Side swaps of the swapping "
                                                       "split-screen.")] = 10,
    segments: Annotated[int, typer.Option("--segments", help="Interleaved segments per "
                                                             "video.")] = 10,
    fps: Annotated[float | None, typer.Option("--fps", help="Output frame rate (default: the "
                                                            "highest source rate).")] = None,
    nback_instances: Annotated[int, typer.Option("--nback-instances",
                                                 help="12-clip N-back instances.")] = 1,
    clip_seconds: Annotated[float, typer.Option("--clip-seconds",
                                                help="N-back clip length.")] = 3.0,
    seed: Annotated[int, typer.Option("--seed")] = 0,
    quiet: QuietOption = False,
) -> None:
    """Pair the videos by caption similarity and render the probes of every paradigm."""
    from m3kit.benchmarks.m3eval.construct.pairing import load_sources
    from m3kit.benchmarks.m3eval.construct.plan import BuildConfig, build_probes

    config = BuildConfig(swaps=swaps, interleave_segments=segments, fps=fps,
                         nback_instances=nback_instances, nback_clip_seconds=clip_seconds,
                         seed=seed)
    from rich.console import Console

    with StageProgress(Console(stderr=True), _STAGE_LABELS, quiet=quiet) as progress:
        def step(done: int, total: int) -> None:
            if done == 1:
                progress.stage("build", total)
            progress.advance("build")

        plan = build_probes(load_sources(sources), out, config=config,
                            progress=progress.message, step=step)
    typer.echo(f"{len(plan.pairs)} pairs, {len(plan.nback)} N-back instances -> {out}")
    for source in plan.unpaired:
        typer.echo(f"unpaired: {source.id}")
    for reason in plan.skipped:
        typer.echo(f"skipped: {reason}")


@app.command("generate")
def generate(
    root: Annotated[Path, typer.Argument(help="A root made by `m3kit m3eval build`.")],
    model: Annotated[str, typer.Option("--model", help="An inspect model, e.g. "
                                                       "openai-api/vllm/Qwen3.5-27B.")],
    model_arg: Annotated[list[str] | None, typer.Option(
        "-M", "--model-arg", help="Model argument key=value (repeatable).")] = None,
    batches: Annotated[int, typer.Option("--batches", help="Caption batches per video.")] = 8,
    frames_per_batch: Annotated[int, typer.Option("--frames-per-batch")] = 4,
    attempts: Annotated[int, typer.Option("--attempts", help="Replies per item before it is "
                                                             "rejected.")] = 3,
    seed: Annotated[int, typer.Option("--seed", help="Option shuffle seed.")] = 0,
    max_connections: Annotated[int, typer.Option(
        "--max-connections", help="Model calls in flight at once.")] = 8,
    call_attempts: CallAttemptsOption = DEFAULT_CALL_ATTEMPTS,
    call_timeout: CallTimeoutOption = DEFAULT_CALL_TIMEOUT,
    quiet: QuietOption = False,
) -> None:
    """Caption, generate, check and shuffle the questions; write the layout and review file.

    Finished work is kept under ROOT/build/generation: run it again after a stop and only the
    unfinished videos, questions and N-back instances call the model."""
    from rich.console import Console

    from m3kit.benchmarks.m3eval.construct.generate import GenerationConfig, generate_questions
    from m3kit.cli.options import parse_key_values
    from m3kit.harness.preflight import check_model
    from m3kit.models.backend import InspectBackend

    # fail in seconds on a missing key / unreachable server, before any video is touched
    resolved = check_model(model, parse_key_values(model_arg or [], "--model-arg"))
    console = Console(stderr=True)
    progress = StageProgress(console, _STAGE_LABELS, quiet=quiet)
    backend = InspectBackend(resolved, max_attempts=call_attempts, attempt_timeout=call_timeout,
                             notify=progress.message)
    config = GenerationConfig(caption_batches=batches, frames_per_batch=frames_per_batch,
                              max_attempts=attempts, seed=seed, max_connections=max_connections)
    with model_calls_told(backend, console), progress:
        report = generate_questions(root, backend, config=config, progress=progress)
    typer.echo(report.summary())
    for item, why in report.rejected.items():
        typer.echo(f"rejected {item}: {why}")
    for item, why in report.pairs_skipped.items():
        typer.echo(f"skipped {item}: {why}")
    typer.echo(f"review: {report.review_csv} (set status to accepted / rejected)")
    hint = report.hint()
    if hint is not None:
        from m3kit.errors import M3kitError

        # nothing usable came out: one line saying why, exit 2 (the review file is written)
        raise M3kitError(hint)


@app.command("review")
def review(
    root: Annotated[Path, typer.Argument(help="The benchmark root.")],
    accept: Annotated[list[str] | None, typer.Option("--accept", help="Accept an id.")] = None,
    reject: Annotated[list[str] | None, typer.Option("--reject", help="Reject an id.")] = None,
    accept_pending: Annotated[bool, typer.Option(
        "--accept-pending", help="Accept every pending item (after reading them!).")] = False,
) -> None:
    """Show the review counts, or set statuses by id."""
    from m3kit.benchmarks.m3eval.construct.review import read_review, review_paths, set_status
    from m3kit.errors import SchemaError

    csv_path, html_path = review_paths(root)
    if not csv_path.is_file():
        raise SchemaError("no review file: run `m3kit m3eval generate` first", path=csv_path)
    statuses = read_review(csv_path)
    changes = {i: "accepted" for i in accept or []} | {i: "rejected" for i in reject or []}
    if accept_pending:
        changes = {i: "accepted" for i, s in statuses.items() if s == "pending"} | changes
    if changes:
        typer.echo(f"{set_status(root, changes)} statuses changed")
        statuses = read_review(csv_path)
    counts = {s: sum(v == s for v in statuses.values()) for s in ("accepted", "rejected",
                                                                 "pending")}
    typer.echo(", ".join(f"{n} {s}" for s, n in counts.items()) + f"  ({html_path})")
