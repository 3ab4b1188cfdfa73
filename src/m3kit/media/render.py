"""Turning a probe manifest into pixels: ``materialize`` (frames in memory) and
``render_probe`` (an H.264 mp4 plus its manifest JSON beside it).

Rendering streams: every source is decoded forward in passes ("runs") during which its frame
index never goes back, one output frame is composed at a time, so memory stays bounded by a few
frames per open source whatever the length. A split screen or an interleaving is one run per
source (a source paused while the other plays keeps its place); a source that restarts (a
concatenation with repeats) starts a new run on a freshly opened decoder.

Every source is opened and checked before any output file exists; the mp4 writer is atomic and
the JSON is written only after the mp4 is complete, so a failure — also a source that opens but
breaks mid-decode — leaves no output file behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from m3kit.errors import CompositionError
from m3kit.media.decode import VideoDecoder, frame_to_rgb
from m3kit.media.encode import VideoWriter
from m3kit.media.index import VideoIndex
from m3kit.media.letterbox import letterbox
from m3kit.schema.probe import ProbeFrame, ProbeManifest, ProbeRecipe

__all__ = ["FrameSource", "ProgressFn", "compose_frame", "materialize", "render_probe"]

ProgressFn = Callable[[int, int], None]
# Frames fetched per store call while rendering: bounded memory, few calls.
STORE_CHUNK = 32


class FrameSource(Protocol):
    """Anything that serves RGB frames by index, like ``m3kit.media.store.FrameStore``."""

    def get_frames(self, video: Any, indices: Sequence[int],
                   resize: Any = None) -> list[np.ndarray]: ...


def render_probe(
    manifest: ProbeManifest,
    out_path: str | Path,
    *,
    store: FrameSource | None = None,
    progress: ProgressFn | None = None,
    crf: int = 23,
) -> tuple[Path, Path]:
    """Write the probe to ``out_path`` (mp4) and its manifest to the same stem ``.json``.

    Returns ``(mp4_path, json_path)``. ``progress(done, total)`` is called after each frame.
    """
    out = Path(out_path)
    json_path = out.with_suffix(".json")
    if json_path == out:
        raise CompositionError("the video output must not be a .json file", path=out)
    recipe = manifest.recipe
    indexes = _check_sources(manifest)
    runs, tile_runs = _plan_runs(manifest)
    total = manifest.frame_count
    feeds = _Feeds(manifest, runs, indexes, store)
    try:
        with VideoWriter(out, recipe.width, recipe.height, recipe.fps, crf=crf) as writer:
            # ``_plan_runs`` gives one run list per frame, one run per tile
            for frame, run_ids in zip(manifest.frames, tile_runs, strict=True):
                images = [feeds.get(r, t.source_index)
                          for r, t in zip(run_ids, frame.tiles, strict=True)]
                writer.write(compose_frame(recipe, frame, images))
                feeds.release_finished(frame.index)
                if progress is not None:
                    progress(frame.index + 1, total)
    finally:
        feeds.close()
    try:
        manifest.save(json_path)
    except BaseException:
        out.unlink(missing_ok=True)  # a probe without its provenance is no probe
        raise
    return out, json_path


def materialize(
    manifest: ProbeManifest,
    output_indices: Sequence[int],
    *,
    store: FrameSource | None = None,
) -> list[np.ndarray]:
    """The output frames at ``output_indices`` composed in memory, no encoding.

    Each source is read in one pass over the union of the source frames those outputs need.
    """
    n = manifest.frame_count
    wanted = [int(j) for j in output_indices]
    bad = [j for j in wanted if not 0 <= j < n]
    if bad:
        raise CompositionError(f"output frame {bad[0]} is outside the probe (0..{n - 1})",
                               record=bad[0], field="output_indices")
    frames = [manifest.frames[j] for j in wanted]
    _check_sources(manifest)
    needed: dict[str, set[int]] = {}
    for f in frames:
        for t in f.tiles:
            needed.setdefault(t.source, set()).add(t.source_index)
    pixels: dict[tuple[str, int], np.ndarray] = {}
    for source_id, indices in needed.items():
        path = manifest.recipe.source(source_id).path
        order = sorted(indices)
        if store is not None:
            images = store.get_frames(path, order)
        else:
            with VideoDecoder(path) as decoder:
                images = decoder.get_frames(order)
        pixels.update(((source_id, i), img) for i, img in zip(order, images, strict=True))
    return [
        compose_frame(manifest.recipe, f, [pixels[(t.source, t.source_index)] for t in f.tiles])
        for f in frames
    ]


def compose_frame(recipe: ProbeRecipe, frame: ProbeFrame,
                  images: Sequence[np.ndarray]) -> np.ndarray:
    """The output canvas of ``frame``: each tile's source image letterboxed into its region."""
    canvas = np.zeros((recipe.height, recipe.width, 3), dtype=np.uint8)
    for tile, image in zip(frame.tiles, images, strict=True):
        x, y, w, h = recipe.region(tile.side)
        canvas[y : y + h, x : x + w] = letterbox(image, w, h)
    return canvas


# -- checks ----------------------------------------------------------------------------------------


def _check_sources(manifest: ProbeManifest) -> dict[str, VideoIndex]:
    """Open every source (typed media errors name the file) and check that the manifest's frame
    indices exist in it and that it still has the frame count it was composed with."""
    highest: dict[str, int] = {}
    for f in manifest.frames:
        for t in f.tiles:
            highest[t.source] = max(highest.get(t.source, -1), t.source_index)
    indexes: dict[str, VideoIndex] = {}
    for src in manifest.recipe.sources:
        with VideoDecoder(src.path) as decoder:
            indexes[src.id] = decoder.index
        count = len(indexes[src.id])
        if src.frame_count is not None and count != src.frame_count:
            raise CompositionError(
                f"holds {count} frames, the probe was composed from {src.frame_count}: "
                "the file changed since", path=src.path, record=src.id, field="frame_count",
            )
        if highest.get(src.id, -1) >= count:
            raise CompositionError(
                f"the probe needs frame {highest[src.id]}, the video has {count}",
                path=src.path, record=src.id, field="source_index",
            )
    return indexes


# -- streaming -------------------------------------------------------------------------------------


@dataclass
class _Run:
    """One forward pass over a source: ascending frame indices, used until ``last_frame``."""

    source: str
    indices: list[int] = field(default_factory=list)
    last_frame: int = 0


def _plan_runs(manifest: ProbeManifest) -> tuple[list[_Run], list[list[int]]]:
    """Split each source's requests (in output order) into forward runs; return the runs and,
    per output frame, the run serving each tile.

    A request continues the run that last served its source on that side when it can; else it
    joins the run of its source that stands furthest along without passing it, so a source that
    changes sides, is resumed after a pause or is shown twice at once (``A | A``) keeps decoding
    forward. Only a jump back opens a new run.
    """
    runs: list[_Run] = []
    by_source: dict[str, list[int]] = {}
    last_on_side: dict[tuple[str, str], int] = {}
    tile_runs: list[list[int]] = []
    for f in manifest.frames:
        ids: list[int] = []
        for t in f.tiles:
            idx = t.source_index
            r = last_on_side.get((t.source, t.side), -1)
            if r < 0 or runs[r].indices[-1] > idx:
                fits = [k for k in by_source.get(t.source, []) if runs[k].indices[-1] <= idx]
                r = max(fits, key=lambda k: runs[k].indices[-1]) if fits else -1
            if r < 0:
                r = len(runs)
                runs.append(_Run(t.source))
                by_source.setdefault(t.source, []).append(r)
            last_on_side[(t.source, t.side)] = r
            run = runs[r]
            if not run.indices or run.indices[-1] != idx:
                run.indices.append(idx)
            run.last_frame = f.index
            ids.append(r)
        tile_runs.append(ids)
    return runs, tile_runs


class _Feed:
    """Frames of one run, handed out in non-decreasing index order (repeats served from the
    last frame: an output faster than its source shows a frame twice)."""

    def __init__(self, frames: Iterator[tuple[int, np.ndarray]], closer: Callable[[], None]):
        self._frames = frames
        self._closer = closer
        self._index = -1
        self._image: np.ndarray | None = None

    def get(self, index: int) -> np.ndarray:
        while self._index != index:
            self._index, self._image = next(self._frames)
        assert self._image is not None
        return self._image

    def close(self) -> None:
        close = getattr(self._frames, "close", None)
        if close is not None:
            close()
        self._closer()


class _Feeds:
    """Opens each run's feed at its first use and closes it after its last output frame."""

    def __init__(self, manifest: ProbeManifest, runs: list[_Run],
                 indexes: dict[str, VideoIndex], store: FrameSource | None):
        self._recipe = manifest.recipe
        self._runs = runs
        self._indexes = indexes
        self._store = store
        self._open: dict[int, _Feed] = {}

    def get(self, run_id: int, index: int) -> np.ndarray:
        feed = self._open.get(run_id)
        if feed is None:
            feed = self._open[run_id] = self._start(self._runs[run_id])
        return feed.get(index)

    def release_finished(self, frame_index: int) -> None:
        for run_id in [r for r in self._open if self._runs[r].last_frame <= frame_index]:
            self._open.pop(run_id).close()

    def close(self) -> None:
        while self._open:
            self._open.popitem()[1].close()

    def _start(self, run: _Run) -> _Feed:
        path = self._recipe.source(run.source).path
        if self._store is not None:
            return _Feed(_store_frames(self._store, path, run.indices), lambda: None)
        # The index scanned by the up-front check is reused: no second packet scan per run.
        decoder = VideoDecoder(path, index=self._indexes[run.source])
        frames = ((i, frame_to_rgb(f)) for i, f in decoder.iter_frames(run.indices))
        return _Feed(frames, decoder.close)


def _store_frames(store: FrameSource, path: str,
                  indices: list[int]) -> Iterator[tuple[int, np.ndarray]]:
    for lo in range(0, len(indices), STORE_CHUNK):
        chunk = indices[lo : lo + STORE_CHUNK]
        yield from zip(chunk, store.get_frames(path, chunk), strict=True)
