"""Fixtures shared by all test folders: small generated videos, made once per session."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from m3kit.media.generate import write_pattern_video


@pytest.fixture(scope="session")
def pattern_video_factory(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``make(seconds=, fps=, width=, height=, keyint=, bframes=, hue=)`` -> a pattern video.

    Each distinct set of parameters is encoded once per session; frames carry their own index
    (``m3kit.media.generate.read_frame_code``). Defaults: 4 s at 25 fps, 160x120, a keyframe
    every 25 frames, 2 B-frames (100 frames, stored out of display order).
    """
    folder = tmp_path_factory.mktemp("pattern_videos")
    made: dict[tuple[float, ...], Path] = {}

    def make(
        *,
        seconds: float = 4.0,
        fps: float = 25.0,
        width: int = 160,
        height: int = 120,
        keyint: int = 25,
        bframes: int = 2,
        hue: float = 0.0,
    ) -> Path:
        key = (seconds, fps, width, height, keyint, bframes, hue)
        if key not in made:
            name = "pattern_" + "_".join(f"{k:g}" for k in key) + ".mp4"
            made[key] = write_pattern_video(
                folder / name, seconds=seconds, fps=fps, width=width, height=height,
                keyint=keyint, bframes=bframes, hue=hue,
            )
        return made[key]

    return make


@pytest.fixture(scope="session")
def small_video(pattern_video_factory: Callable[..., Path]) -> Path:
    """100 frames, 160x120, 25 fps, a keyframe every 25 frames, 2 B-frames."""
    return pattern_video_factory()
