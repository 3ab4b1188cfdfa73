"""Fitting a frame into a box without distorting it: scale to fit, pad black, centre."""

from __future__ import annotations

import numpy as np
from PIL import Image


def letterbox_box(src_width: int, src_height: int, width: int,
                  height: int) -> tuple[int, int, int, int]:
    """``(x, y, w, h)`` of the content area when a ``src_width`` × ``src_height`` frame is
    letterboxed into ``width`` × ``height``. Tests use it to crop the content back out."""
    if min(src_width, src_height, width, height) <= 0:
        raise ValueError(
            f"sizes must be positive, got {src_width}x{src_height} into {width}x{height}"
        )
    scale = min(width / src_width, height / src_height)
    w = min(width, max(1, round(src_width * scale)))
    h = min(height, max(1, round(src_height * scale)))
    return (width - w) // 2, (height - h) // 2, w, h


def letterbox(rgb: np.ndarray, width: int, height: int) -> np.ndarray:
    """``rgb`` (H, W, 3) scaled to fit ``width`` × ``height`` keeping its aspect, padded black.

    A frame that already has the size is returned as is (no copy, no resampling), so a probe of
    same-size sources carries the source pixels unchanged.
    """
    src_h, src_w = rgb.shape[:2]
    if (src_w, src_h) == (width, height):
        return rgb
    x, y, w, h = letterbox_box(src_w, src_h, width, height)
    content = rgb
    if (w, h) != (src_w, src_h):
        content = np.asarray(Image.fromarray(rgb).resize((w, h), Image.Resampling.BILINEAR))
    out = np.zeros((height, width, 3), dtype=np.uint8)
    out[y : y + h, x : x + w] = content
    return out
