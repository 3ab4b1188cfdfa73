"""Generated test videos whose frames say which frame they are.

Each frame shows a drifting colour gradient, a moving box and a row of black/white blocks that
spell the frame index in binary, large enough to survive H.264. ``read_frame_code`` reads the
index back from a decoded frame, so a test or a benchmark can check which source frame ended up
where without trusting any metadata.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from m3kit.errors import MediaRequestError
from m3kit.media.encode import VideoWriter

CODE_BITS = 20  # up to ~1M frames: a 60-minute video at 25 fps is 90 000
_MARGIN = 4


def _block_size(width: int, height: int) -> int:
    return max(4, min(width // (CODE_BITS + 2), height // 6))


def pattern_frame(index: int, width: int, height: int, hue: float = 0.0) -> np.ndarray:
    """The RGB frame number ``index`` of the pattern; ``hue`` in [0, 1) tints the gradient."""
    y = np.linspace(0.0, 1.0, height, dtype=np.float32)[:, None]
    x = np.linspace(0.0, 1.0, width, dtype=np.float32)[None, :]
    phase = index * 0.01 + hue
    r = 0.5 + 0.5 * np.sin(2 * np.pi * (x + phase))
    g = 0.5 + 0.5 * np.sin(2 * np.pi * (y + 0.5 * phase + 1 / 3))
    b = 0.5 + 0.5 * np.sin(2 * np.pi * (x + y - phase + 2 / 3))
    frame = (np.stack(np.broadcast_arrays(r, g, b), axis=-1) * 200).astype(np.uint8)
    box = max(8, min(width, height) // 6)
    bx = int((width - box) * (0.5 + 0.5 * np.sin(index * 0.05)))
    by = int((height - box) * (0.5 + 0.5 * np.cos(index * 0.03)))
    frame[by : by + box, bx : bx + box] = (255, 255, 0)
    draw_frame_code(frame, index)
    return frame


def draw_frame_code(frame: np.ndarray, index: int) -> None:
    """Write ``index`` as CODE_BITS blocks along the bottom edge (white = 1)."""
    height, width = frame.shape[:2]
    size = _block_size(width, height)
    top = height - size - _MARGIN
    frame[top - _MARGIN : height, :] = 128
    for bit in range(CODE_BITS):
        value = 255 if (index >> bit) & 1 else 0
        left = _MARGIN + bit * size
        frame[top : top + size, left : left + size] = value


def read_frame_code(frame: np.ndarray) -> int:
    """The index a ``pattern_frame`` carries, read from a (possibly re-encoded) frame."""
    height, width = frame.shape[:2]
    size = _block_size(width, height)
    top = height - size - _MARGIN
    index = 0
    for bit in range(CODE_BITS):
        left = _MARGIN + bit * size
        pad = size // 4
        block = frame[top + pad : top + size - pad, left + pad : left + size - pad]
        if block.mean() > 128:
            index |= 1 << bit
    return index


def write_pattern_video(
    path: str | Path,
    *,
    seconds: float = 10.0,
    fps: float = 25.0,
    width: int = 320,
    height: int = 240,
    hue: float = 0.0,
    keyint: int = 250,
    bframes: int = 3,
    crf: int = 23,
    preset: str = "veryfast",
) -> Path:
    """Encode a pattern video of ``seconds`` at ``fps`` to ``path`` (H.264 in mp4).

    Out-of-range settings are refused with a ``MediaRequestError`` naming the field: a rate or
    length that is not a positive number, a size or keyframe interval under 1, more frames than
    the frame code can number (2**CODE_BITS).
    """
    for field, value in (("fps", fps), ("seconds", seconds)):
        if not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            raise MediaRequestError(f"must be a positive number, got {value!r}", path=path,
                                    field=field)
    for field, count in (("width", width), ("height", height), ("keyint", keyint)):
        if count < 1:
            raise MediaRequestError(f"must be at least 1, got {count}", path=path, field=field)
    frames = max(1, round(seconds * fps))
    if frames > 2**CODE_BITS:
        raise MediaRequestError(
            f"{seconds} s at {fps} fps is {frames} frames; a pattern video holds at most "
            f"{2**CODE_BITS} (its frame code has {CODE_BITS} bits)", path=path, field="seconds",
        )
    with VideoWriter(path, width, height, fps, crf=crf, preset=preset, keyint=keyint,
                     bframes=bframes) as writer:
        for i in range(frames):
            writer.write(pattern_frame(i, width, height, hue))
    return Path(path)
