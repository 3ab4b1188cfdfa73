"""``video_info``: what a video file really holds (container, codec, frame count, rate)."""

from __future__ import annotations

from pathlib import Path

import av.error
import numpy as np
from pydantic import BaseModel, ConfigDict

from m3kit.errors import CorruptMediaError
from m3kit.media.container import check_not_still, open_video
from m3kit.media.index import VideoIndex, scan_index

# Frame intervals further than this fraction from the median mark the video as variable-rate.
_VFR_TOLERANCE = 0.2


class VideoInfo(BaseModel):
    """Metadata of one video stream, measured from its packets where the container may lie."""

    model_config = ConfigDict(frozen=True)

    path: str
    container: str
    codec: str
    width: int
    height: int
    rotation: int  # degrees, from the display matrix; frames are returned as stored
    fps: float  # measured from the frame timestamps (container rate when there are none)
    container_fps: float | None  # what the container header declares
    duration: float  # seconds, first frame to the end of the last frame
    container_duration: float | None
    frame_count: int  # counted from the packets: what a sequential decode yields
    container_frame_count: int | None  # what the header declares (None: not declared)
    variable_frame_rate: bool
    has_timestamps: bool
    keyframe_count: int
    mean_keyframe_interval: float | None  # frames between keyframes
    warnings: list[str] = []  # where the header and the packets disagree, or decoding fails
    # Frames a full sequential decode yields before the first one that fails (frame_count when
    # all decode); None: not checked (``m3kit.media.verify.video_info_verified`` checks).
    decodable_frames: int | None = None

    def summary(self) -> str:
        vfr = "variable" if self.variable_frame_rate else "constant"
        return (
            f"{Path(self.path).name}: {self.width}x{self.height} {self.codec} in {self.container}, "
            f"{self.frame_count} frames, {self.duration:.2f} s at {self.fps:.3f} fps ({vfr} rate)"
        )


def video_info(path: str | Path, *, timeout_s: float = 120.0) -> VideoInfo:
    """Read the metadata of ``path`` and check that its first frame decodes.

    The frame count is the number of frame packets, not the header's claim; the rate is measured
    from the timestamps. Raises a typed ``MediaError`` naming ``path`` for unusable input.
    """
    container, stream = open_video(path)
    try:
        index = scan_index(container, stream, path, timeout_s=timeout_s)
        if len(index) == 0:
            raise CorruptMediaError("the video stream holds no frames", path=path)
        check_not_still(len(index), stream, path)
        rotation = _first_frame_rotation(path)
        return info_from_index(index, container, stream, rotation)
    finally:
        container.close()


def info_from_index(index: VideoIndex, container, stream, rotation: int) -> VideoInfo:
    """Combine the packet index with the header's claims."""
    times = index.times
    intervals = np.diff(times)
    declared_rate = stream.average_rate or stream.guessed_rate
    container_fps = float(declared_rate) if declared_rate else None
    if index.has_timestamps and intervals.size > 0 and times[-1] > 0:
        median = float(np.median(intervals))
        fps = (len(index) - 1) / float(times[-1])
        vfr = bool(np.any(np.abs(intervals - median) > _VFR_TOLERANCE * median))
        duration = float(times[-1]) + median
    else:
        fps = container_fps or 25.0
        vfr = False
        duration = len(index) / fps
    keys = index.keyframe_indices
    cc = stream.codec_context
    declared_frames = int(stream.frames) if stream.frames else None
    container_duration = None
    if stream.duration is not None and stream.time_base is not None:
        container_duration = float(stream.duration * stream.time_base)
    elif container.duration is not None:
        container_duration = container.duration / 1_000_000
    warnings = []
    if declared_frames is not None and declared_frames != len(index):
        warnings.append(f"the header declares {declared_frames} frames; {len(index)} were found")
    if container_duration is not None and container_duration > duration + 1.0:
        warnings.append(
            f"the header declares {container_duration:.2f} s; the frames span {duration:.2f} s "
            "(truncated?)"
        )
    if vfr:
        warnings.append("variable frame rate: frame times are taken from the timestamps")
    return VideoInfo(
        path=str(index.path),
        container=container.format.name,
        codec=cc.name,
        width=int(cc.width or stream.width),
        height=int(cc.height or stream.height),
        rotation=rotation,
        fps=float(fps),
        container_fps=container_fps,
        duration=float(duration),
        container_duration=container_duration,
        frame_count=len(index),
        container_frame_count=declared_frames,
        variable_frame_rate=vfr,
        has_timestamps=index.has_timestamps,
        keyframe_count=int(keys.size),
        mean_keyframe_interval=float(len(index) / keys.size) if keys.size else None,
        warnings=warnings,
    )


def _first_frame_rotation(path: str | Path) -> int:
    """Decode the first frame (proving the stream decodes at all) and read its rotation."""
    container, stream = open_video(path)
    try:
        for frame in container.decode(stream):
            return round(getattr(frame, "rotation", 0) or 0) % 360
    except av.error.FFmpegError as exc:
        raise CorruptMediaError(f"the first frame cannot be decoded ({exc})", path=path) from None
    finally:
        container.close()
    raise CorruptMediaError("no frame can be decoded", path=path)
