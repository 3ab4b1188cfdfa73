"""Keyframes by scene change: a static stretch of video is read once.

Video-RAG reads OCR and detections on keyframes (its released code picks them by CLIP
similarity to the query; the SuperMemory-VQA adaptation precomputes per session, before any
query). A query-free choice that keeps what changes is a scene-change test: a frame is a
keyframe when its small grey thumbnail differs from the last keyframe's by more than
``threshold`` (mean absolute difference, 0..1), or when ``max_gap`` seconds passed since it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

THUMB_SIDE = 32  # thumbnail side in pixels: enough to see a cut, blind to noise and compression


def thumbnail(image: np.ndarray, side: int = THUMB_SIDE) -> np.ndarray:
    """A ``side`` x ``side`` grey float32 thumbnail of an RGB ``uint8`` image, in [0, 1]
    (box filter: every pixel counts, no aliasing)."""
    from PIL import Image

    small = Image.fromarray(np.ascontiguousarray(image)).convert("L").resize(
        (side, side), Image.Resampling.BOX)
    return np.asarray(small, dtype=np.float32) / 255.0


class KeyframePicker:
    """Scene-change keyframes, one frame at a time (a stream never held whole): ``offer`` says
    whether a frame is a keyframe, i.e. the first one, or one that differs from the last
    keyframe by more than ``threshold`` or comes ``max_gap`` seconds or more after it."""

    def __init__(self, *, threshold: float = 0.08, max_gap: float | None = 60.0) -> None:
        self.threshold = threshold
        self.max_gap = max_gap
        self._thumb: np.ndarray | None = None
        self._time = 0.0

    def offer(self, thumb: np.ndarray, time: float) -> bool:
        if self._thumb is not None:
            changed = float(np.abs(thumb - self._thumb).mean()) > self.threshold
            stale = self.max_gap is not None and time - self._time >= self.max_gap
            if not (changed or stale):
                return False
        self._thumb, self._time = thumb, time
        return True


def scene_keyframes(thumbs: Sequence[np.ndarray], times: Sequence[float], *,
                    threshold: float = 0.08, max_gap: float | None = 60.0) -> list[int]:
    """Positions of the keyframes among ``thumbs`` (time order), by ``KeyframePicker``."""
    if len(thumbs) != len(times):
        raise ValueError(f"got {len(thumbs)} thumbnails but {len(times)} times")
    picker = KeyframePicker(threshold=threshold, max_gap=max_gap)
    return [n for n, (thumb, t) in enumerate(zip(thumbs, times, strict=True))
            if picker.offer(thumb, t)]
