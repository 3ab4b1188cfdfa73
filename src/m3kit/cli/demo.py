"""``m3kit demo``: the README's first command until the quickstart exists."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.compose import _composition, _finish
from m3kit.media.generate import write_pattern_video
from m3kit.media.probe import probe

DEFAULT_VIDEO = Path("../shared/data/videos/flipping_a_pancake.mkv")


def demo(
    video: Annotated[Path, typer.Argument(help="A real video for the left side.")] = DEFAULT_VIDEO,
    out_dir: Annotated[Path, typer.Option("--out-dir", help="Where the probe is written.")] = Path("m3kit-demo"),
    swaps: Annotated[int, typer.Option("--swaps", help="Position swaps.")] = 3,
) -> None:
    """Compose a split-screen probe of VIDEO and a generated video; print its manifest summary."""
    info = probe(video)
    generated = write_pattern_video(
        out_dir / "generated.mp4", seconds=info.duration, fps=25.0,
        width=info.width - info.width % 2, height=info.height - info.height % 2,
    )
    manifest = _composition().split_screen(video, generated, swaps=swaps)
    _finish(manifest, out_dir / "split_probe.mp4", virtual=False)
