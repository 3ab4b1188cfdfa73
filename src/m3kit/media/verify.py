"""Decoding a whole video to find where it breaks.

``video_info`` reads the packets and decodes the first frame; a file damaged further in (a lost or
corrupted packet) passes it. ``video_info_verified`` also decodes every frame, in order and without
skipping any, and reports the first frame that does not decode: the same index the decoder
names when a request reaches that frame (``CorruptMediaError.record``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from m3kit.errors import CorruptMediaError
from m3kit.media.decode import VideoDecoder
from m3kit.media.info import VideoInfo, video_info


def first_undecodable_frame(
    path: str | Path, *, on_frame: Callable[[int], None] | None = None
) -> tuple[int | None, str | None]:
    """``(index, reason)`` of the first frame a full sequential decode of ``path`` fails on,
    ``(None, None)`` when every frame decodes. ``on_frame(index)`` follows the progress."""
    with VideoDecoder(path, skip_nonref=False) as decoder:
        try:
            for i, _frame in decoder.iter_frames(range(len(decoder))):
                if on_frame is not None:
                    on_frame(i)
        except CorruptMediaError as exc:
            index = int(str(exc.record).removeprefix("frame ")) if exc.record else 0
            return index, exc.reason
    return None, None


def video_info_verified(
    path: str | Path, *, on_frame: Callable[[int], None] | None = None
) -> VideoInfo:
    """``video_info(path)`` with every frame decoded: ``decodable_frames`` is set, and a warning
    says at which frame decoding fails when it does."""
    return with_decode_check(video_info(path), on_frame=on_frame)


def with_decode_check(
    info: VideoInfo, *, on_frame: Callable[[int], None] | None = None
) -> VideoInfo:
    """``info`` after decoding every frame of its file (see ``video_info_verified``)."""
    bad, reason = first_undecodable_frame(info.path, on_frame=on_frame)
    if bad is None:
        return info.model_copy(update={"decodable_frames": info.frame_count})
    warning = f"frame {bad} of {info.frame_count} {reason}"
    return info.model_copy(update={"decodable_frames": bad,
                                   "warnings": [*info.warnings, warning]})
