"""``sample_frames``: a sampling policy applied to a video, frames decoded (or fetched from the
frame store), ready for a model or for files on disk."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np
from PIL import Image

from m3kit.errors import MediaError, SamplingError
from m3kit.media.decode import VideoDecoder
from m3kit.media.resize import Resize
from m3kit.media.sampling import SamplingPolicy, sample_indices

if TYPE_CHECKING:
    from m3kit.media.store import FrameStore


@dataclass(frozen=True)
class SampledFrames:
    """Frames chosen by a policy: their indices in the video, timestamps (s) and RGB pixels."""

    path: str
    policy: str
    indices: list[int]
    times: list[float]
    frames: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.indices)


def sample_frames(
    path: str | Path,
    policy: SamplingPolicy = "uniform",
    n: int | None = None,
    *,
    fps: float | None = None,
    max_frames: int | None = None,
    span: tuple[float, float] | None = None,
    resize: Resize | None = None,
    store: FrameStore | None = None,
    on_frame: Callable[[int], None] | None = None,
) -> SampledFrames:
    """Pick frames of ``path`` by ``policy`` and return them decoded.

    With a ``store`` the frame index and the frames come from (and go to) the frame store, so a
    repeated request decodes nothing.
    """
    def choose(times: np.ndarray) -> list[int]:
        try:
            return sample_indices(times, policy, n, fps=fps, max_frames=max_frames, span=span)
        except SamplingError as exc:  # the pure policy does not know the file: name it here
            raise SamplingError(exc.reason, path=path, field=exc.field) from None

    if store is not None:
        times = store.index_for(path).times
        indices = choose(times)
        frames = store.get_frames(path, indices, resize=resize)
    else:
        with VideoDecoder(path) as decoder:
            times = decoder.times
            indices = choose(times)
            frames = decoder.get_frames(indices, resize=resize, on_frame=on_frame)
    return SampledFrames(
        path=str(path), policy=policy, indices=indices,
        times=[float(times[i]) for i in indices], frames=frames,
    )


def export_frames(
    sampled: SampledFrames,
    out_dir: str | Path,
    *,
    image_format: Literal["jpeg", "png"] = "jpeg",
    jpeg_quality: int = 90,
) -> Path:
    """Write each frame as ``frame_<index>.jpg|png`` plus ``frames.json`` (index, time, file).

    Returns the path of ``frames.json``.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise MediaError("output exists and is not a directory", path=out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "jpg" if image_format == "jpeg" else "png"
    rows = []
    for index, time_s, frame in zip(sampled.indices, sampled.times, sampled.frames, strict=True):
        name = f"frame_{index:07d}.{suffix}"
        image = Image.fromarray(frame)
        if image_format == "jpeg":
            image.save(out / name, format="JPEG", quality=jpeg_quality)
        else:
            image.save(out / name, format="PNG", compress_level=1)
        rows.append({"index": index, "time": round(time_s, 6), "file": name})
    manifest = {"video": sampled.path, "policy": sampled.policy, "frames": rows}
    target = out / "frames.json"
    tmp = target.with_suffix(".json.part")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, target)
    return target
