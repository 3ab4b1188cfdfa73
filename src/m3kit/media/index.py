"""The frame index of a video: every frame's timestamp in presentation order and where its
group of pictures (GOP) starts, read from the packets without decoding any of them.

Frame index ``i`` in m3kit always means the ``i``-th frame a full sequential decode yields.
Containers store frames in decode order (B-frames come after the frames they reference), so the
packet timestamps are sorted to get presentation order. Counting packets instead of trusting the
container's frame count keeps m3kit honest when the header lies.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av
import av.error
import numpy as np

from m3kit.errors import CorruptMediaError, DecodeTimeoutError


@dataclass(frozen=True)
class VideoIndex:
    """Presentation-order frame timestamps and keyframe positions of one video stream."""

    path: str
    time_base: Fraction
    pts: np.ndarray  # int64, sorted, one per frame
    keyframe: np.ndarray  # bool, per frame (presentation order)
    has_timestamps: bool  # False: packets carry no pts, frames are counted in decode order

    def __len__(self) -> int:
        return int(self.pts.shape[0])

    @property
    def times(self) -> np.ndarray:
        """Seconds since the first frame, one per frame."""
        if len(self) == 0:
            return np.zeros(0, dtype=np.float64)
        return (self.pts - self.pts[0]).astype(np.float64) * float(self.time_base)

    @property
    def keyframe_indices(self) -> np.ndarray:
        return np.flatnonzero(self.keyframe)

    def gop_starts(self, indices: np.ndarray) -> np.ndarray:
        """For each frame index, the index of the last keyframe at or before it."""
        keys = self.keyframe_indices
        if keys.size == 0 or keys[0] != 0:
            keys = np.concatenate([[0], keys])
        pos = np.searchsorted(keys, indices, side="right") - 1
        return keys[np.clip(pos, 0, None)]

    def index_of_pts(self) -> dict[int, int]:
        return {int(p): i for i, p in enumerate(self.pts.tolist())}

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays, for caching an index on disk (``np.savez``)."""
        return {
            "pts": self.pts,
            "keyframe": self.keyframe,
            "time_base": np.array([self.time_base.numerator, self.time_base.denominator]),
            "has_timestamps": np.array([self.has_timestamps]),
        }

    @classmethod
    def from_arrays(cls, path: str, arrays: dict[str, np.ndarray]) -> VideoIndex:
        num, den = (int(x) for x in arrays["time_base"])
        return cls(
            path=path,
            time_base=Fraction(num, den),
            pts=np.asarray(arrays["pts"], dtype=np.int64),
            keyframe=np.asarray(arrays["keyframe"], dtype=bool),
            has_timestamps=bool(arrays["has_timestamps"][0]),
        )


def scan_index(
    container: av.container.InputContainer,
    stream: av.video.stream.VideoStream,
    path: str | Path,
    *,
    timeout_s: float = 120.0,
) -> VideoIndex:
    """Demux every packet of ``stream`` (no decoding) and build its presentation-order index.

    Packets flagged discard (edit lists cut them) and empty packets (flush markers) yield no frame
    in a sequential decode, so they are left out. The container is left at its end: callers seek
    or reopen.
    """
    deadline = time.monotonic() + timeout_s
    pts_list: list[int] = []
    key_list: list[bool] = []
    missing_pts = 0
    try:
        for n, packet in enumerate(container.demux(stream)):
            if packet.size == 0 or packet.is_discard:
                continue
            if packet.pts is None:
                missing_pts += 1
                pts_list.append(n)
            else:
                pts_list.append(packet.pts)
            key_list.append(packet.is_keyframe)
            if n % 512 == 0 and time.monotonic() > deadline:
                raise DecodeTimeoutError(
                    f"reading the packet index took more than {timeout_s:.0f} s", path=path
                )
    except av.error.FFmpegError as exc:
        if not pts_list:
            raise CorruptMediaError(f"no packet can be read ({exc})", path=path) from None
        # A damaged tail: keep the packets read so far; decoding reports the damage precisely.
    has_timestamps = missing_pts == 0
    pts = np.asarray(pts_list, dtype=np.int64)
    keyframe = np.asarray(key_list, dtype=bool)
    if has_timestamps:
        order = np.argsort(pts, kind="stable")
        pts = pts[order]
        keyframe = keyframe[order]
        _, first = np.unique(pts, return_index=True)
        if first.size != pts.size:  # duplicate timestamps: a sequential decode yields one each
            pts, keyframe = pts[np.sort(first)], keyframe[np.sort(first)]
    else:
        # Without timestamps the only frame order we know is the decode order.
        pts = np.arange(len(pts_list), dtype=np.int64)
    time_base = stream.time_base or Fraction(1, 1)
    if not has_timestamps:
        rate = stream.average_rate or stream.guessed_rate or Fraction(25, 1)
        time_base = Fraction(1, 1) / Fraction(rate)
    return VideoIndex(
        path=str(path), time_base=Fraction(time_base), pts=pts, keyframe=keyframe,
        has_timestamps=has_timestamps,
    )


def rewind(container: av.container.InputContainer, stream: av.video.stream.VideoStream) -> None:
    """Seek back to the start of the file."""
    # Some containers refuse seeking at all; callers reopen instead.
    with contextlib.suppress(av.error.FFmpegError):
        container.seek(0, backward=True, any_frame=False)
    if stream.codec_context is not None:
        stream.codec_context.flush_buffers()
