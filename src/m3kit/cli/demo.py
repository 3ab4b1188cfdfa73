"""``m3kit demo``: the README's first command until the quickstart exists.

With no VIDEO it uses the project's shared pancake video, found from any working folder:
``$M3KIT_SHARED_DATA/videos/flipping_a_pancake.mkv``, else ``shared/data`` beside the
repository checkout this package runs from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from m3kit.cli.compose import _composition, _finish
from m3kit.errors import M3kitError, MediaNotFoundError
from m3kit.media.generate import write_pattern_video
from m3kit.media.info import video_info

SHARED_VIDEO = ("videos", "flipping_a_pancake.mkv")
DEFAULT_OUT = Path("m3kit-demo")
# src/m3kit/cli/demo.py -> the checkout root is three folders above the package's cli/ folder
_CHECKOUT = Path(__file__).resolve().parents[3]


def demo_video_candidates(environ: Mapping[str, str] | None = None,
                          checkout: Path = _CHECKOUT) -> list[Path]:
    """Where the shared pancake video is looked for, in order."""
    env = os.environ if environ is None else environ
    found: list[Path] = []
    if env.get("M3KIT_SHARED_DATA"):
        found.append(Path(env["M3KIT_SHARED_DATA"]).expanduser().joinpath(*SHARED_VIDEO))
    found.append(checkout.parent.joinpath("shared", "data", *SHARED_VIDEO))
    return found


def find_demo_video(environ: Mapping[str, str] | None = None,
                    checkout: Path = _CHECKOUT) -> Path:
    """The shared pancake video (see the module doc), else a one-line error naming what to
    pass."""
    candidates = demo_video_candidates(environ, checkout)
    for path in candidates:
        if path.is_file():
            return path
    looked = ", ".join(str(p) for p in candidates)
    raise MediaNotFoundError(
        f"no VIDEO given and the shared demo video is not in {looked}: pass a video "
        "(m3kit demo PATH/TO/VIDEO.mp4) or set M3KIT_SHARED_DATA to the shared data folder"
    )


def demo(
    video: Annotated[Path | None, typer.Argument(
        help="A real video for the left side (default: the shared pancake video, from "
             "$M3KIT_SHARED_DATA or shared/data beside the checkout).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Folder the probe is written to.")]
    = DEFAULT_OUT,
    out_dir: Annotated[Path | None, typer.Option(
        "--out-dir", hidden=True, help="Deprecated: --out.")] = None,
    swaps: Annotated[int, typer.Option("--swaps", help="Position swaps.")] = 3,
) -> None:
    """Compose a split-screen probe of VIDEO and a generated video; print its manifest summary."""
    if out_dir is not None:
        # every other verb names its output --out; the old spelling still works, once warned
        typer.echo("m3kit: warning: --out-dir is deprecated, use --out", err=True)
        if out != DEFAULT_OUT and out != out_dir:
            raise M3kitError(f"--out {out} and --out-dir {out_dir} disagree: give --out only",
                             field="out")
        out = out_dir
    out_dir = out
    if video is None:
        video = find_demo_video()
    info = video_info(video)
    generated = write_pattern_video(
        out_dir / "generated.mp4", seconds=info.duration, fps=25.0,
        width=info.width - info.width % 2, height=info.height - info.height % 2,
    )
    manifest = _composition().split_screen(video, generated, swaps=swaps)
    _finish(manifest, out_dir / "split_probe.mp4", virtual=False)
