"""Fixtures shared by all test folders: small generated videos, made once per session."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from m3kit.media.generate import write_pattern_video

REPO_ROOT = Path(__file__).resolve().parents[1]

def _register_fakeserver() -> None:
    """Make ``tests/fakeserver.py`` (the scripted OpenAI-compatible server) importable as
    ``fakeserver``: tests are not a package, and this conftest runs before any of them."""
    if "fakeserver" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location("fakeserver",
                                                  Path(__file__).with_name("fakeserver.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fakeserver"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)


_register_fakeserver()

# Tests never read or fill the user's caches (frames, OCR, suites): one fresh cache per session.
os.environ["M3KIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="m3kit-test-cache-")


def shared_data_path(*parts: str) -> Path:
    """A path under the project's shared data (``../shared/data`` beside the repository, or
    ``$M3KIT_SHARED_DATA``); the calling test is skipped when it is not there."""
    root = Path(os.environ.get("M3KIT_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    path = root.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture(scope="session")
def pancake() -> Path:
    """A real 10 s H.264 video in Matroska, 426x240, 30 fps (310 frames)."""
    return shared_data_path("videos", "flipping_a_pancake.mkv")


@pytest.fixture(scope="session")
def unordered() -> Path:
    """A tiny mov whose frames are stored out of presentation order."""
    return shared_data_path("videos", "unordered.mov")


@pytest.fixture(scope="session")
def corrupted() -> Path:
    """A deliberately corrupted mp4: opens, then fails to decode at frame 28."""
    return shared_data_path("videos", "corrupted.mp4")


@pytest.fixture(scope="session")
def m3exam_persona() -> Path:
    """One real M3Exam persona folder in the released layout."""
    return shared_data_path("m3exam", "Alex_Veterinarian")


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
