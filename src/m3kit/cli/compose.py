"""``m3kit compose``: build M3Eval-style probes from source videos, rendered or virtual."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from m3kit.cli.progress import progress_bar

if TYPE_CHECKING:
    from m3kit.schema.probe import ProbeManifest

app = typer.Typer(help="Compose probes: split-screen, concatenation, interleaving, clip sequences.",
                  no_args_is_help=True)

Out = Annotated[Path, typer.Option("--out", help="Output P.mp4 (P.json is written beside it).")]
Fps = Annotated[float | None, typer.Option(
    "--fps", help="Output frame rate (default: the highest source rate).")]
Virtual = Annotated[bool, typer.Option(
    "--virtual", help="Write only P.json (frames and provenance), no video.")]


def _composition():
    from m3kit.media import compose

    return compose


def _finish(manifest: ProbeManifest, out: Path, virtual: bool) -> None:
    from m3kit.media.render import render_probe

    if virtual:
        json_path = manifest.save(out.with_suffix(".json"))
        typer.echo(manifest.summary())
        typer.echo(f"manifest: {json_path}")
        return
    console = Console(stderr=True)
    with progress_bar(f"rendering {out.name}", len(manifest.frames), console) as advance:
        done = [0]

        def on_progress(finished: int, _total: int) -> None:
            advance(finished - done[0])
            done[0] = finished

        video_path, json_path = render_probe(manifest, out, progress=on_progress)
    typer.echo(manifest.summary())
    typer.echo(f"video: {video_path}\nmanifest: {json_path}")


@app.command("split")
def split(
    a: Annotated[Path, typer.Argument(help="Source shown on the left first.")],
    b: Annotated[Path, typer.Argument(help="Source shown on the right first.")],
    out: Out,
    swaps: Annotated[int, typer.Option(
        "--swaps", help="Position swaps at uniformly spaced times.")] = 0,
    duration: Annotated[float | None, typer.Option(
        "--duration", help="Probe length in seconds, at most the shorter source's (default: "
        "the shorter source's; the end of the longer one is cut, with a notice).")] = None,
    fps: Fps = None,
    virtual: Virtual = False,
) -> None:
    """Two sources side by side, trading places SWAPS times, for as long as both play."""
    compose = _composition()
    manifest = compose.split_screen(a, b, swaps=swaps, fps=fps, duration=duration)
    # asked for with --duration, a cut is the user's choice; by default it is said
    for source, length in compose.split_screen_cut(manifest) if duration is None else []:
        typer.echo(f"m3kit: notice: {source.path} plays {length:.2f} s; the probe shows its "
                   f"first {manifest.duration:.2f} s, the shorter source's length (--duration "
                   "sets it)", err=True)
    _finish(manifest, out, virtual)


@app.command("concat")
def concat(
    sources: Annotated[list[Path], typer.Argument(help="Sources in play order; repeats allowed.")],
    out: Out,
    fps: Fps = None,
    virtual: Virtual = False,
) -> None:
    """Sources one after another, in the order given (e.g. A B, B A, A A B)."""
    _finish(_composition().concatenate(sources, fps=fps), out, virtual)


@app.command("interleave")
def interleave(
    a: Annotated[Path, typer.Argument(help="First source.")],
    b: Annotated[Path, typer.Argument(help="Second source.")],
    out: Out,
    segments: Annotated[int, typer.Option("--segments", help="Parts each source is cut into.")] = 2,
    fps: Fps = None,
    virtual: Virtual = False,
) -> None:
    """Alternate parts of two sources: A1 B1 A2 B2 ... An Bn."""
    _finish(_composition().interleave(a, b, segments=segments, fps=fps), out, virtual)


@app.command("sequence")
def sequence(
    clips: Annotated[list[Path], typer.Argument(help="Short clips in order (N-back).")],
    out: Out,
    fps: Fps = None,
    virtual: Virtual = False,
) -> None:
    """Short clips one after another, for N-back probes."""
    _finish(_composition().sequence(clips, fps=fps), out, virtual)
