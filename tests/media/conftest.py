"""Real media files for the media tests: generated videos and deliberately broken inputs."""

from __future__ import annotations

import shutil
from pathlib import Path

import av
import numpy as np
import pytest
from PIL import Image

from m3kit.media.generate import write_pattern_video


@pytest.fixture(scope="session")
def media_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("media")


@pytest.fixture(scope="session")
def bframe_video(media_dir: Path) -> Path:
    """40 s at 25 fps, a keyframe every 50 frames, 3 B-frames: stored out of display order."""
    return write_pattern_video(media_dir / "bframes.mp4", seconds=40, fps=25, width=192,
                               height=144, keyint=50, bframes=3)


@pytest.fixture(scope="session")
def truncated_mp4(media_dir: Path, bframe_video: Path) -> Path:
    """The first 40 % of an mp4 whose index (moov) sits at the end: unreadable container."""
    data = bframe_video.read_bytes()
    path = media_dir / "truncated.mp4"
    path.write_bytes(data[: int(len(data) * 0.4)])
    return path


@pytest.fixture(scope="session")
def truncated_mkv(media_dir: Path, pancake: Path) -> Path:
    """A Matroska file cut in the middle: it opens, and its second half is gone."""
    data = pancake.read_bytes()
    path = media_dir / "truncated.mkv"
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.fixture(scope="session")
def audio_only(media_dir: Path) -> Path:
    """One second of a 440 Hz tone in an m4a (AAC) file: no video stream."""
    path = media_dir / "tone.m4a"
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("aac", rate=44100)
        stream.layout = "mono"
        samples = (0.3 * np.sin(2 * np.pi * 440 * np.arange(44100) / 44100)).astype(np.float32)
        for start in range(0, samples.size, 1024):
            chunk = samples[start : start + 1024]
            frame = av.AudioFrame.from_ndarray(chunk[None, :], format="fltp", layout="mono")
            frame.sample_rate = 44100
            frame.pts = start
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    return path


@pytest.fixture(scope="session")
def image_file(media_dir: Path) -> Path:
    path = media_dir / "still.png"
    Image.fromarray(np.full((48, 64, 3), 200, dtype=np.uint8)).save(path)
    return path


@pytest.fixture(scope="session")
def text_file(media_dir: Path) -> Path:
    path = media_dir / "notes.mp4"  # a video name on something that is not one
    path.write_text("these are not the frames you are looking for\n" * 50)
    return path


@pytest.fixture(scope="session")
def empty_file(media_dir: Path) -> Path:
    path = media_dir / "empty.mp4"
    path.write_bytes(b"")
    return path


@pytest.fixture()
def copy_of(tmp_path: Path):
    def _copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        shutil.copyfile(src, dst)
        return dst

    return _copy
