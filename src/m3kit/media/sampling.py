"""Frame-sampling policies: which frame indices a benchmark looks at.

Pure functions of the frame count and the frame timestamps; no decoding here.

- ``uniform`` (M3Eval): ``np.linspace(0, N-1, n)`` rounded, plus the last frame when rounding
  left it out; default n = 96.
- ``uniform_inner`` (Video-MME-v2): ``int(i * N / (n + 1))`` for i = 1..n, which skips the first
  and the last frame; default n = 64.
- ``fps``: one frame every ``1 / rate`` seconds (the frame shown at that instant), at most
  ``max_frames`` of them, thinned uniformly when there are more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from m3kit.errors import SamplingError

SamplingPolicy = Literal["uniform", "uniform_inner", "fps"]
POLICIES: tuple[SamplingPolicy, ...] = ("uniform", "uniform_inner", "fps")
DEFAULT_N: dict[str, int] = {"uniform": 96, "uniform_inner": 64}
# Highest rate the fps policy accepts: above any recorded frame rate, and it bounds the instants
# a request enumerates (one hour at this rate: 3.6 million).
MAX_SAMPLING_FPS = 1000.0


def uniform_indices(num_frames: int, n: int) -> list[int]:
    """``round(linspace(0, N-1, n))`` plus ``N-1`` if missing; sorted, without repeats."""
    _check_counts(num_frames, n)
    if n >= num_frames:  # a step of at most one frame: every frame (and no n-sized array)
        return list(range(num_frames))
    picks = np.rint(np.linspace(0, num_frames - 1, n)).astype(np.int64)
    out = sorted(set(picks.tolist()))
    if out[-1] != num_frames - 1:
        out.append(num_frames - 1)
    return out


def uniform_inner_indices(num_frames: int, n: int) -> list[int]:
    """``int(i * N / (n + 1))`` for i = 1..n: n points strictly inside the video.

    When n >= N the points repeat; repeats are kept once (a frame is a frame).
    """
    _check_counts(num_frames, n)
    if n >= num_frames:  # steps under one frame from 0 to N-1: every frame, without n steps
        return list(range(num_frames))
    return sorted({(i * num_frames) // (n + 1) for i in range(1, n + 1)})


def fps_indices(times: Sequence[float] | np.ndarray, rate: float,
                max_frames: int | None = None) -> list[int]:
    """One frame per ``1/rate`` seconds from the first timestamp, capped at ``max_frames``.

    The frame picked for an instant is the one on screen then: the last frame whose timestamp is
    at or before it.
    """
    ts = np.asarray(times, dtype=np.float64)
    if ts.size == 0:
        raise SamplingError("the video has no frames to sample")
    if not np.isfinite(rate) or rate <= 0:
        raise SamplingError(f"fps must be a positive number, got {rate}", field="fps")
    if rate > MAX_SAMPLING_FPS:
        raise SamplingError(f"fps must be at most {MAX_SAMPLING_FPS:g}, got {rate}", field="fps")
    if max_frames is not None and max_frames <= 0:
        raise SamplingError(f"max_frames must be positive, got {max_frames}", field="max_frames")
    span = ts[-1] - ts[0]
    count = int(np.floor(span * rate + 1e-9)) + 1
    instants = ts[0] + np.arange(count, dtype=np.float64) / rate
    picks = np.searchsorted(ts, instants + 1e-9, side="right") - 1
    out = sorted(set(np.clip(picks, 0, ts.size - 1).tolist()))
    if max_frames is not None and len(out) > max_frames:
        keep = np.rint(np.linspace(0, len(out) - 1, max_frames)).astype(np.int64)
        out = [out[k] for k in sorted(set(keep.tolist()))]
    return out


def span_bounds(times: np.ndarray, span: tuple[float, float] | None) -> tuple[int, int]:
    """The frame range ``[lo, hi)`` whose timestamps fall inside ``span`` (seconds)."""
    if span is None:
        return 0, int(times.size)
    t0, t1 = float(span[0]), float(span[1])
    end = float(times[-1]) if times.size else 0.0
    if not (np.isfinite(t0) and np.isfinite(t1)) or t0 < 0 or t1 <= t0:
        raise SamplingError(f"span must satisfy 0 <= start < end, got [{t0}, {t1}]", field="span")
    if t0 > end:
        raise SamplingError(
            f"span [{t0}, {t1}] starts after the last frame (at {end:.3f} s)", field="span"
        )
    lo = int(np.searchsorted(times, t0 - 1e-9, side="left"))
    hi = int(np.searchsorted(times, t1 + 1e-9, side="right"))
    if hi <= lo:
        raise SamplingError(f"span [{t0}, {t1}] holds no frame", field="span")
    return lo, hi


def sample_indices(
    times: Sequence[float] | np.ndarray,
    policy: SamplingPolicy = "uniform",
    n: int | None = None,
    *,
    fps: float | None = None,
    max_frames: int | None = None,
    span: tuple[float, float] | None = None,
) -> list[int]:
    """Frame indices chosen by ``policy`` among frames with timestamps ``times``.

    With ``span``, only frames inside it are considered and the returned indices are still
    indices of the whole video.
    """
    ts = np.asarray(times, dtype=np.float64)
    if ts.size == 0:
        raise SamplingError("the video has no frames to sample")
    lo, hi = span_bounds(ts, span)
    if policy == "uniform":
        local = uniform_indices(hi - lo, DEFAULT_N["uniform"] if n is None else n)
    elif policy == "uniform_inner":
        local = uniform_inner_indices(hi - lo, DEFAULT_N["uniform_inner"] if n is None else n)
    elif policy == "fps":
        if fps is None:
            raise SamplingError("the fps policy needs a rate (fps=...)", field="fps")
        local = fps_indices(ts[lo:hi], fps, max_frames)
    else:
        raise SamplingError(
            f"unknown sampling policy {policy!r}; choose one of {', '.join(POLICIES)}",
            field="policy",
        )
    return [lo + i for i in local]


def _check_counts(num_frames: int, n: int) -> None:
    if n is None or n <= 0:
        raise SamplingError(f"the number of frames to sample must be positive, got {n}", field="n")
    if num_frames <= 0:
        raise SamplingError("the video has no frames to sample")
