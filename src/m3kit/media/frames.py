"""``sample_frames``: a sampling policy applied to a video, frames decoded (or fetched from the
frame store), ready for a model; ``write_frames``: the same frames written to image files as they
are decoded, holding one at a time."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from PIL import Image

from m3kit.errors import FrameStoreError, MediaError, MediaRequestError, SamplingError
from m3kit.files import atomic_file, atomic_write_text
from m3kit.media.budget import check_frames_fit
from m3kit.media.decode import VideoDecoder, frame_to_rgb
from m3kit.media.resize import Resize
from m3kit.media.sampling import SamplingPolicy, sample_indices

if TYPE_CHECKING:
    from m3kit.media.store import FrameStore, ImageFormat

_SUFFIXES: dict[str, str] = {"jpeg": "jpg", "png": "png"}


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
    memory_budget: int | None = None,
) -> SampledFrames:
    """Pick frames of ``path`` by ``policy`` and return them decoded.

    With a ``store`` the frame index and the frames come from (and go to) the frame store, so a
    repeated request decodes nothing. All frames are held in memory: a request past
    ``memory_budget`` bytes (default: half the usable memory) is refused with
    ``MediaTooLargeError`` before decoding; ``write_frames`` holds one frame at a time.
    """
    choose = _chooser(path, policy, n, fps, max_frames, span)
    if store is not None:
        times = store.index_for(path).times
        indices = choose(times)
        frames = store.get_frames(path, indices, resize=resize)
    else:
        with VideoDecoder(path) as decoder:
            times = decoder.times
            indices = choose(times)
            frames = decoder.get_frames(indices, resize=resize, on_frame=on_frame,
                                        memory_budget=memory_budget)
    return SampledFrames(
        path=str(path), policy=policy, indices=indices,
        times=[float(times[i]) for i in indices], frames=frames,
    )


def export_frames(
    sampled: SampledFrames,
    out_dir: str | Path,
    *,
    image_format: ImageFormat = "jpeg",
    jpeg_quality: int = 90,
) -> Path:
    """Write each frame as ``frame_<index>.jpg|png`` plus ``frames.json`` (index, time, file).

    Returns the path of ``frames.json``.
    """
    out = _output_dir(out_dir, image_format)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for index, time_s, frame in zip(sampled.indices, sampled.times, sampled.frames, strict=True):
        name = _frame_name(index, image_format)
        _save_image(Image.fromarray(frame), out / name, image_format, jpeg_quality)
        rows.append({"index": index, "time": round(time_s, 6), "file": name})
    return _write_manifest(out, sampled.path, sampled.policy, rows)


def write_frames(
    path: str | Path,
    out_dir: str | Path,
    policy: SamplingPolicy = "uniform",
    n: int | None = None,
    *,
    fps: float | None = None,
    max_frames: int | None = None,
    span: tuple[float, float] | None = None,
    resize: Resize | None = None,
    store: FrameStore | None = None,
    image_format: ImageFormat = "jpeg",
    jpeg_quality: int = 90,
    on_frame: Callable[[int], None] | None = None,
    memory_budget: int | None = None,
) -> Path:
    """Pick frames of ``path`` by ``policy`` and write each as ``frame_<index>.jpg|png`` as soon
    as it is decoded (and resized), plus ``frames.json`` (index, time, file); returns its path.

    Memory holds one decoded frame at the source size and one at the output size, whatever the
    count; a single frame past ``memory_budget`` bytes is refused (``MediaTooLargeError``).

    With a ``store``, the files are copies of the stored images, so a repeated request gives the
    same bytes and decodes nothing; the store's format must be ``image_format`` (and its
    quality ``jpeg_quality``).
    """
    out = _output_dir(out_dir, image_format)
    choose = _chooser(path, policy, n, fps, max_frames, span)
    rows: list[dict[str, object]] = []

    def row(index: int, time_s: float) -> Path:
        name = _frame_name(index, image_format)
        rows.append({"index": index, "time": round(time_s, 6), "file": name})
        return out / name

    if store is not None:
        _check_store_format(store, image_format, jpeg_quality)
        times = store.index_for(path).times
        indices = choose(times)
        stored = store.get_paths(path, indices, resize, on_frame=on_frame)
        out.mkdir(parents=True, exist_ok=True)
        for index, source in zip(indices, stored, strict=True):
            target = row(index, float(times[index]))
            try:
                _copy_file(source, target)
            except FileNotFoundError:  # evicted by another process meanwhile: store it again
                _copy_file(store.get_paths(path, [index], resize)[0], target)
    else:
        with VideoDecoder(path) as decoder:
            times = decoder.times
            indices = choose(times)
            check_frames_fit(1, decoder.output_size(resize), decoder.frame_size,
                             budget_bytes=memory_budget, path=path)
            out.mkdir(parents=True, exist_ok=True)
            for index, frame in decoder.iter_frames(indices):
                # The array is dropped once Pillow has its copy: one frame alive at a time.
                image = Image.fromarray(frame_to_rgb(frame, resize))
                del frame
                _save_image(image, row(index, float(times[index])), image_format, jpeg_quality)
                del image
                if on_frame is not None:
                    on_frame(index)
    return _write_manifest(out, str(path), policy, rows)


def _chooser(
    path: str | Path,
    policy: SamplingPolicy,
    n: int | None,
    fps: float | None,
    max_frames: int | None,
    span: tuple[float, float] | None,
) -> Callable[[np.ndarray], list[int]]:
    def choose(times: np.ndarray) -> list[int]:
        try:
            return sample_indices(times, policy, n, fps=fps, max_frames=max_frames, span=span)
        except SamplingError as exc:  # the pure policy does not know the file: name it here
            raise SamplingError(exc.reason, path=path, field=exc.field) from None

    return choose


def _output_dir(out_dir: str | Path, image_format: str) -> Path:
    if image_format not in _SUFFIXES:
        raise MediaRequestError(f"unknown image format {image_format!r}; choose jpeg or png",
                                field="image_format")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise MediaError("output exists and is not a directory", path=out)
    return out


def _frame_name(index: int, image_format: str) -> str:
    return f"frame_{index:07d}.{_SUFFIXES[image_format]}"


def _save_image(image: Image.Image, target: Path, image_format: str, jpeg_quality: int) -> None:
    """Encode ``image`` to ``target`` atomically (the settings the frame store uses)."""
    with atomic_file(target, "wb", durable=False) as fh:
        if image_format == "jpeg":
            image.save(fh, format="JPEG", quality=jpeg_quality)
        else:
            image.save(fh, format="PNG", compress_level=1)


def _copy_file(source: Path, target: Path) -> None:
    with source.open("rb") as src, atomic_file(target, "wb", durable=False) as dst:
        shutil.copyfileobj(src, dst)


def _check_store_format(store: FrameStore, image_format: str, jpeg_quality: int) -> None:
    if store.image_format != image_format or (
        image_format == "jpeg" and store.jpeg_quality != jpeg_quality
    ):
        raise FrameStoreError(
            f"the store keeps {store.image_format} frames, the request is for {image_format}"
            + (f" (quality {jpeg_quality})" if image_format == "jpeg" else "")
            + ": open the store with the same image_format",
            path=store.root,
        )


def _write_manifest(out: Path, video: str, policy: str, rows: list[dict[str, object]]) -> Path:
    manifest = {"video": video, "policy": policy, "frames": rows}
    target = out / "frames.json"
    atomic_write_text(target, json.dumps(manifest, indent=1))
    return target
