"""``m3kit video``: inspect a video, sample its frames, generate a test video."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from m3kit.cli.progress import progress_bar
from m3kit.media.frames import write_frames
from m3kit.media.generate import write_pattern_video
from m3kit.media.info import video_info
from m3kit.media.resize import resize_for
from m3kit.media.sampling import DEFAULT_N, POLICIES
from m3kit.media.verify import with_decode_check

app = typer.Typer(help="Inspect videos and sample frames.", no_args_is_help=True)


@app.command("info")
def info(
    path: Annotated[Path, typer.Argument(help="A video file.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    quick: Annotated[bool, typer.Option(
        "--quick", help="Read the packets and the first frame only; skip decoding every frame."
    )] = False,
) -> None:
    """Duration, frame rate, frame count, size, codec and rotation, measured from the packets;
    every frame is decoded to find where a damaged file stops decoding (unless --quick)."""
    result = video_info(path)
    if not quick:
        with progress_bar(f"decoding {path.name}", result.frame_count,
                          Console(stderr=True)) as advance:
            result = with_decode_check(result, on_frame=lambda _i: advance(1))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
        return
    table = Table(title=str(path), show_header=False)
    for key, value in result.model_dump().items():
        if key == "warnings":
            continue
        table.add_row(key, f"{value:.3f}" if isinstance(value, float) else str(value))
    console = Console()
    console.print(table)
    for warning in result.warnings:
        console.print(f"[yellow]warning:[/] {warning}")


@app.command("frames")
def frames(
    path: Annotated[Path, typer.Argument(help="A video file.")],
    out: Annotated[Path, typer.Option("--out", help="Directory for the frames and frames.json.")],
    n: Annotated[int | None, typer.Option(
        "--n", help="Frames to sample (uniform: 96, uniform_inner: 64).")] = None,
    policy: Annotated[str, typer.Option(
        "--policy", help=f"One of {', '.join(POLICIES)}.")] = "uniform",
    fps: Annotated[float | None, typer.Option("--fps", help="Rate for the fps policy.")] = None,
    max_frames: Annotated[int | None, typer.Option(
        "--max-frames", help="Cap for the fps policy.")] = None,
    span: Annotated[tuple[float, float] | None, typer.Option(
        "--span", help="Only frames between T0 and T1 seconds.")] = None,
    max_side: Annotated[int | None, typer.Option(
        "--max-side", help="Shrink so the longer side fits.")] = None,
    image_format: Annotated[str, typer.Option("--format", help="jpeg or png.")] = "jpeg",
    store: Annotated[Path | None, typer.Option(
        "--store", help="Frame store directory to reuse decoded frames.")] = None,
) -> None:
    """Sample frames by a named policy and write them as images plus frames.json.

    Each frame is written as soon as it is decoded: memory holds about one frame, whatever --n.
    """
    from m3kit.errors import SamplingError
    from m3kit.media.store import IMAGE_FORMATS

    if policy not in POLICIES:
        raise SamplingError(f"unknown policy {policy!r}; choose one of {', '.join(POLICIES)}",
                            path=path)
    if image_format not in IMAGE_FORMATS:
        raise SamplingError(f"unknown image format {image_format!r}; choose jpeg or png")
    resize = resize_for(max_side=max_side)
    frame_store = None
    if store is not None:
        from m3kit.media.store import FrameStore

        frame_store = FrameStore(store, image_format=image_format)
    console = Console(stderr=True)
    total = n if n is not None else DEFAULT_N.get(policy, max_frames or 0)
    try:
        with progress_bar(f"decoding {path.name}", total or 1, console) as advance:
            manifest = write_frames(
                path, out, policy, n, fps=fps, max_frames=max_frames,
                span=span, resize=resize, store=frame_store,
                image_format=image_format,
                on_frame=lambda _i: advance(1),
            )
    finally:
        if frame_store is not None:
            frame_store.close()
    count = len(json.loads(manifest.read_text())["frames"])
    typer.echo(f"{count} frames ({policy}) of {path} -> {manifest}")


@app.command("generate")
def generate(
    out: Annotated[Path, typer.Argument(help="Output .mp4 path.")],
    seconds: Annotated[float, typer.Option(help="Length in seconds.")] = 10.0,
    fps: Annotated[float, typer.Option(help="Frame rate.")] = 25.0,
    width: Annotated[int, typer.Option(help="Width (even).")] = 320,
    height: Annotated[int, typer.Option(help="Height (even).")] = 240,
    keyint: Annotated[int, typer.Option(help="Frames between keyframes.")] = 250,
) -> None:
    """Write a test video whose frames show their own index (H.264, mp4)."""
    path = write_pattern_video(out, seconds=seconds, fps=fps, width=width, height=height,
                               keyint=keyint)
    typer.echo(json.dumps({"path": str(path), "frames": video_info(path).frame_count}))
