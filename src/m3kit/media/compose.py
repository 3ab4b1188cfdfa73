"""Virtual probe composition: plan which source frame every output frame shows.

The four M3Eval paradigms, each a pure plan over the sources' frame timestamps (no pixel is
decoded except each source's first frame, to prove it decodes):

- ``split_screen``: two sources side by side, playing together, their sides swapped ``k`` times
  at uniformly spaced instants (divided attention);
- ``concatenate``: sources one after the other in any order, repeats allowed (interference);
- ``interleave``: each of two sources cut into ``n`` equal parts, played ``A1 B1 A2 B2 …``;
- ``sequence``: short clips in a row, optionally separated by black gaps (N-back).

The output runs at one frame rate on one canvas. Output frame ``j`` of a block shows, for its
source, the frame on screen at that source time (the last frame whose timestamp is at or before
it), so any rate, variable ones included, resamples to the output rate. Sources of another size
are letterboxed into their tile when rendered (``m3kit.media.render``).

Source times are measured from the source's first frame (``VideoIndex.times``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

from m3kit.errors import CompositionError
from m3kit.media.container import check_video_path
from m3kit.media.decode import VideoDecoder
from m3kit.schema.probe import (
    SIDE_ORDER,
    FrameTile,
    ProbeFrame,
    ProbeKind,
    ProbeManifest,
    ProbeRecipe,
    ProbeSegment,
    ProbeSource,
    Side,
)

__all__ = ["SourceLike", "concatenate", "interleave", "sequence", "split_screen",
           "split_screen_cut"]

SourceLike = str | os.PathLike[str] | ProbeSource

# Slack for float round-off when an output instant lands exactly on a source frame's timestamp
# (1 µs is far below any frame interval).
_EPS = 1e-6
# A span may end this far after the measured duration (container round-off) and still be valid.
_END_SLACK = 1e-3
# Highest output rate: the fastest common capture rate; models sample far below it.
MAX_PROBE_FPS = 240.0
# Most output frames one probe may have: two hours at 30 fps. The manifest keeps a record per
# frame (about 2.6 kB for a split screen in memory), so this bounds it near 0.6 GB.
MAX_PROBE_FRAMES = 216_000


@dataclass(frozen=True)
class _Source:
    """A source opened for planning: its record, frame timestamps and the span used."""

    spec: ProbeSource
    times: np.ndarray
    start: float
    end: float

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def duration(self) -> float:
        return self.end - self.start

    def frame_count(self, fps: float) -> int:
        """Output frames the whole span takes at ``fps``."""
        n = _frames(self.duration, fps)
        if n < 1:
            raise CompositionError(
                f"span of {self.duration:.4f} s is shorter than one output frame at {fps:g} fps",
                path=self.spec.path,
            )
        return n


@dataclass(frozen=True)
class _Block:
    """Output frames ``[frame_start, frame_start + count)`` show ``source`` from ``offset``
    output frames into its span, on ``side``."""

    source: _Source
    side: Side
    segment: int
    part: int
    offset: int
    frame_start: int
    count: int


# -- public API ------------------------------------------------------------------------------------


def split_screen(
    a: SourceLike,
    b: SourceLike,
    *,
    swaps: int = 0,
    fps: float | None = None,
    tile_size: tuple[int, int] | None = None,
    duration: float | None = None,
) -> ProbeManifest:
    """``a`` on the left, ``b`` on the right, both playing; sides exchange at ``swaps`` instants.

    The output lasts as long as the shorter source (or ``duration``). Swap ``j`` of ``k`` happens
    at ``j·D/(k+1)``, snapped up to the next output frame; ``segment`` counts the swaps so far.
    Tiles default to the largest source width × the largest height (even height).
    """
    if not isinstance(swaps, int) or isinstance(swaps, bool) or swaps < 0:
        raise CompositionError(f"swaps must be a whole number >= 0, got {swaps!r}", field="swaps")
    sources, ids = _resolve([a, b])
    src_a, src_b = (sources[i] for i in ids)
    rate = _rate(fps, sources.values())
    length = min(src_a.duration, src_b.duration)
    if duration is not None:
        if not math.isfinite(duration) or duration <= 0 or duration > length + _END_SLACK:
            raise CompositionError(
                f"duration must be in (0, {length:.3f}] s (the shorter source), got {duration}",
                field="duration",
            )
        length = min(float(duration), length)
    n = _frames(length, rate)
    _check_frame_count(n, rate)
    if n < swaps + 1:
        raise CompositionError(
            f"{swaps} swaps need at least {swaps + 1} output frames, the probe has {n}",
            field="swaps",
        )
    # First output frame of each layout: the swap instant snapped up to the frame grid.
    bounds = [0] + [math.ceil(j * length / (swaps + 1) * rate - _EPS) for j in range(1, swaps + 1)]
    bounds.append(n)
    if any(hi <= lo for lo, hi in pairwise(bounds)):
        raise CompositionError(
            f"{swaps} swaps do not fit in {n} output frames at {rate:g} fps", field="swaps"
        )
    blocks: list[_Block] = []
    for k, (lo, hi) in enumerate(pairwise(bounds)):
        left, right = (src_a, src_b) if k % 2 == 0 else (src_b, src_a)
        blocks.append(_Block(left, "left", k, k, lo, lo, hi - lo))
        blocks.append(_Block(right, "right", k, k, lo, lo, hi - lo))
    if tile_size is None:
        tile_w = max(s.spec.width or 0 for s in sources.values())
        tile_h = _even(max(s.spec.height or 0 for s in sources.values()))
    else:
        tile_w, tile_h = _check_size(tile_size, "tile_size", need_even=(False, True))
    return _manifest(
        "split_screen", sources, [src_a.id, src_b.id], blocks, n, rate, 2 * tile_w, tile_h,
        swaps=swaps, swap_times=[round(x / rate, 6) for x in bounds[1:-1]],
        params={"tile_width": tile_w, "tile_height": tile_h},
    )


def concatenate(
    sources: Sequence[SourceLike],
    *,
    fps: float | None = None,
    size: tuple[int, int] | None = None,
) -> ProbeManifest:
    """The sources one after the other, in the order given; a source may repeat
    (``[V1, V1, V2]``), each occurrence its own segment and the same source id."""
    if len(sources) < 2:
        raise CompositionError("concatenation needs at least 2 sources", field="sources")
    opened, ids = _resolve(sources)
    rate = _rate(fps, opened.values())
    blocks = _sequential_blocks([opened[i] for i in ids], rate, gap_frames=0)
    width, height = _canvas(size, opened.values())
    return _manifest("concat", opened, ids, blocks, _end(blocks), rate, width, height)


def interleave(
    a: SourceLike,
    b: SourceLike,
    *,
    segments: int,
    fps: float | None = None,
    size: tuple[int, int] | None = None,
) -> ProbeManifest:
    """Each source cut into ``segments`` equal parts, played ``A1 B1 A2 B2 … An Bn``.

    Part boundaries fall on the output frame grid, so consecutive parts of one source join
    without a lost or repeated frame.
    """
    if not isinstance(segments, int) or isinstance(segments, bool) or segments < 1:
        raise CompositionError(
            f"segments must be a whole number >= 1, got {segments!r}", field="segments"
        )
    opened, ids = _resolve([a, b])
    rate = _rate(fps, opened.values())
    cuts: dict[str, list[int]] = {}
    _check_frame_count(sum(src.frame_count(rate) for src in opened.values()), rate)
    for src in opened.values():
        total = src.frame_count(rate)
        if total < segments:
            raise CompositionError(
                f"{total} output frames cannot be cut into {segments} segments",
                path=src.spec.path, field="segments",
            )
        cuts[src.id] = [p * total // segments for p in range(segments + 1)]
    blocks: list[_Block] = []
    cursor = 0
    for part in range(segments):
        for source_id in ids:
            lo, hi = cuts[source_id][part], cuts[source_id][part + 1]
            blocks.append(_Block(opened[source_id], "full", len(blocks), part, lo, cursor, hi - lo))
            cursor += hi - lo
    width, height = _canvas(size, opened.values())
    return _manifest(
        "interleave", opened, [blk.source.id for blk in blocks], blocks, cursor, rate, width,
        height, segments_per_source=segments,
    )


def sequence(
    clips: Sequence[SourceLike],
    *,
    fps: float | None = None,
    size: tuple[int, int] | None = None,
    gap: float = 0.0,
) -> ProbeManifest:
    """Clips one after the other (an N-back trial), ``gap`` seconds of black between them.

    Clips are usually spans (``ProbeSource(start=, end=)``) of longer videos; gap frames carry
    no tile.
    """
    if len(clips) < 1:
        raise CompositionError("a sequence needs at least 1 clip", field="clips")
    if not math.isfinite(gap) or gap < 0:
        raise CompositionError(f"gap must be >= 0 seconds, got {gap}", field="gap")
    opened, ids = _resolve(clips)
    rate = _rate(fps, opened.values())
    gap_frames = _frames(gap, rate)
    blocks = _sequential_blocks([opened[i] for i in ids], rate, gap_frames=gap_frames)
    width, height = _canvas(size, opened.values())
    return _manifest(
        "sequence", opened, ids, blocks, _end(blocks), rate, width, height,
        params={"gap": float(gap), "gap_frames": gap_frames},
    )


# -- sources ---------------------------------------------------------------------------------------


def _resolve(items: Sequence[SourceLike]) -> tuple[dict[str, _Source], list[str]]:
    """Open each distinct source once; return them by id and the id of every item.

    The same file (and span) given twice is one source. Ids default to the file stem, made
    unique (``clip``, ``clip_2``) when different sources share a stem; explicit ids are kept.
    """
    specs: list[ProbeSource] = []
    explicit: list[bool] = []
    for n, item in enumerate(items):
        if isinstance(item, ProbeSource):
            specs.append(item)
            explicit.append(True)
        elif isinstance(item, (str, os.PathLike)):
            p = Path(item)
            specs.append(ProbeSource(id=p.stem or p.name or "source", path=str(item)))
            explicit.append(False)
        else:
            raise CompositionError(
                f"a source must be a path or a ProbeSource, got {type(item).__name__}",
                record=n, field="sources",
            )
    # ``explicit`` holds one flag per spec
    taken = {s.id for s, e in zip(specs, explicit, strict=True) if e}
    by_key: dict[tuple[Any, ...], str] = {}
    opened: dict[str, _Source] = {}
    ids: list[str] = []
    for spec, is_explicit in zip(specs, explicit, strict=True):
        # A missing file, a symbolic link loop or a directory is named before it is resolved.
        check_video_path(spec.path)
        key = (str(Path(spec.path).resolve()), spec.start, spec.end,
               spec.id if is_explicit else None)
        if key in by_key:
            ids.append(by_key[key])
            continue
        source_id = spec.id
        if is_explicit:
            if source_id in opened:
                raise CompositionError(
                    f"source id {source_id!r} names two different sources", path=spec.path,
                    field="id",
                )
        else:
            source_id = _unique(spec.id, taken | set(opened))
        opened[source_id] = _open(spec.model_copy(update={"id": source_id}))
        by_key[key] = source_id
        ids.append(source_id)
    return opened, ids


def _unique(stem: str, taken: set[str]) -> str:
    if stem not in taken:
        return stem
    n = 2
    while f"{stem}_{n}" in taken:
        n += 1
    return f"{stem}_{n}"


def _open(spec: ProbeSource) -> _Source:
    """Read the frame timestamps and prove the first frame decodes; check the span.

    Unreadable files raise the decoder's typed media error, which names the file.
    """
    with VideoDecoder(spec.path) as decoder:
        times = np.array(decoder.times, dtype=np.float64)
        info = decoder.info
        decoder.get_frames([0])
    length = info.duration
    start = 0.0 if spec.start is None else float(spec.start)
    end = length if spec.end is None else float(spec.end)
    if start >= length:
        raise CompositionError(
            f"span starts at {start} s, at or after the end of the video ({length:.3f} s)",
            path=spec.path, field="start",
        )
    if end > length + _END_SLACK:
        raise CompositionError(
            f"span ends at {end} s, after the end of the video ({length:.3f} s)",
            path=spec.path, field="end",
        )
    filled = spec.model_copy(update={
        "frame_count": len(times), "width": info.width, "height": info.height,
        "fps": round(info.fps, 6),
    })
    return _Source(spec=filled, times=times, start=start, end=min(end, length))


def _rate(fps: float | None, sources: Any) -> float:
    """The output rate: ``fps``, or the highest source rate snapped to a simple fraction."""
    if fps is None:
        fps = max(s.spec.fps or 0.0 for s in sources)
    if not isinstance(fps, (int, float)) or not math.isfinite(fps) or fps <= 0:
        raise CompositionError(f"fps must be a positive number, got {fps!r}", field="fps")
    if fps > MAX_PROBE_FPS:
        raise CompositionError(f"fps must be at most {MAX_PROBE_FPS:g}, got {fps!r}", field="fps")
    # Measured rates carry round-off (24.99999); the encoder stores rates as small fractions.
    return float(Fraction(float(fps)).limit_denominator(1001))


def _check_frame_count(n: int, rate: float) -> None:
    if n > MAX_PROBE_FRAMES:
        raise CompositionError(
            f"the probe would have {n} output frames ({n / rate:.0f} s at {rate:g} fps), more "
            f"than the {MAX_PROBE_FRAMES} a probe may have: shorten the sources or lower --fps",
            field="fps",
        )


def _frames(seconds: float, rate: float) -> int:
    """Output frames that ``seconds`` take at ``rate``, halves rounded up (62.5 → 63)."""
    return math.floor(seconds * rate + 0.5)


def _even(n: int) -> int:
    return n + n % 2  # H.264 (yuv420p) needs even sizes; one black row/column pads


def _check_size(size: Any, field: str, *, need_even: tuple[bool, bool]) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in size)
    except (TypeError, ValueError):
        raise CompositionError(f"{field} must be (width, height), got {size!r}",
                               field=field) from None
    if w <= 0 or h <= 0:
        raise CompositionError(f"{field} must be positive, got {w}x{h}", field=field)
    if (need_even[0] and w % 2) or (need_even[1] and h % 2):
        raise CompositionError(f"{field} {w}x{h} must be even (H.264)", field=field)
    return w, h


def _canvas(size: tuple[int, int] | None, sources: Any) -> tuple[int, int]:
    """``size``, or the largest source by area rounded up to even dimensions."""
    if size is not None:
        return _check_size(size, "size", need_even=(True, True))
    biggest = max(sources, key=lambda s: (s.spec.width or 0) * (s.spec.height or 0))
    return _even(biggest.spec.width or 2), _even(biggest.spec.height or 2)


# -- planning --------------------------------------------------------------------------------------


def _sequential_blocks(order: list[_Source], rate: float, *, gap_frames: int) -> list[_Block]:
    """Whole spans one after the other; ``part`` counts each source's occurrences."""
    blocks: list[_Block] = []
    seen: dict[str, int] = {}
    cursor = 0
    for n, src in enumerate(order):
        if n:
            cursor += gap_frames
        count = src.frame_count(rate)
        blocks.append(_Block(src, "full", n, seen.get(src.id, 0), 0, cursor, count))
        seen[src.id] = seen.get(src.id, 0) + 1
        cursor += count
    return blocks


def _end(blocks: list[_Block]) -> int:
    return max(b.frame_start + b.count for b in blocks)


def _manifest(
    kind: ProbeKind,
    sources: dict[str, _Source],
    order: list[str],
    blocks: list[_Block],
    n_frames: int,
    rate: float,
    width: int,
    height: int,
    *,
    swaps: int = 0,
    swap_times: list[float] | None = None,
    segments_per_source: int | None = None,
    params: dict[str, Any] | None = None,
) -> ProbeManifest:
    """Turn blocks into per-frame provenance and segment records."""
    _check_frame_count(n_frames, rate)
    tiles: list[list[FrameTile]] = [[] for _ in range(n_frames)]
    segments: list[ProbeSegment] = []
    for blk in blocks:
        src = blk.source
        local = np.arange(blk.offset, blk.offset + blk.count, dtype=np.float64)
        # Source time from integer frame offsets (not accumulated) keeps parts of one source
        # joined exactly.
        when = src.start + local / rate
        picks = np.searchsorted(src.times, when + _EPS, side="right") - 1
        picks = np.clip(picks, 0, src.times.size - 1)
        for m, (t, i) in enumerate(zip(when.tolist(), picks.tolist(), strict=True)):
            tiles[blk.frame_start + m].append(FrameTile(
                source=src.id, source_time=round(t, 6), source_index=i, side=blk.side,
                segment=blk.segment,
            ))
        end = blk.frame_start + blk.count
        segments.append(ProbeSegment(
            segment=blk.segment, source=src.id, part=blk.part, side=blk.side,
            source_start=round(src.start + blk.offset / rate, 6),
            source_end=round(src.start + (blk.offset + blk.count) / rate, 6),
            out_start=round(blk.frame_start / rate, 6), out_end=round(end / rate, 6),
            frame_start=blk.frame_start, frame_end=end,
        ))
    frames = [
        ProbeFrame(index=j, time=round(j / rate, 6),
                   tiles=sorted(ts, key=lambda t: SIDE_ORDER[t.side]))
        for j, ts in enumerate(tiles)
    ]
    segments.sort(key=lambda s: (s.segment, SIDE_ORDER[s.side]))
    recipe = ProbeRecipe(
        kind=kind, sources=[s.spec for s in sources.values()], order=order, swaps=swaps,
        swap_times=swap_times or [], segments_per_source=segments_per_source, fps=rate,
        width=width, height=height, params=params or {},
    )
    return ProbeManifest(recipe=recipe, duration=round(n_frames / rate, 6), segments=segments,
                         frames=frames)


def split_screen_cut(manifest: ProbeManifest) -> list[tuple[ProbeSource, float]]:
    """The sources of a split-screen probe that play longer than the probe, each with its own
    length in seconds: both sides play at once, so the probe stops with the shorter source
    (or at its ``duration``) and the end of a longer one is never shown. Empty when neither
    is cut by more than one output frame."""
    if manifest.recipe.kind != "split_screen":
        return []
    frame = 1.0 / manifest.recipe.fps if manifest.recipe.fps else 0.0
    cut: list[tuple[ProbeSource, float]] = []
    for source in manifest.recipe.sources:
        if source.start is not None and source.end is not None:
            length = source.end - source.start
        elif source.frame_count and source.fps:
            length = source.frame_count / source.fps - (source.start or 0.0)
        else:
            continue
        if length > manifest.duration + frame + _EPS:
            cut.append((source, length))
    return cut
