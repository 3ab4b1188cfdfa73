"""Frame-exact, index-based decoding with a per-request strategy.

``VideoDecoder(path).get_frames([i, j, ...])`` returns the frames a full sequential decode yields
at those indices. How it gets there is planned per request from the keyframe layout
(``plan_decode``): for each wanted frame, either keep decoding from where the decoder is, or seek
to the keyframe that opens the wanted frame's group of pictures, whichever decodes fewer frames.
Dense requests become one sequential pass; sparse requests on long videos touch only the GOPs that
hold wanted frames. All indices of one request are served in one pass over the file.

Two savings on top of the plan: only wanted frames are converted to RGB, and packets of frames that
no other frame references (non-reference B-frames) are skipped unless wanted, which changes no
other frame.

The runs of a plan that start with a seek are independent of each other: with ``workers`` > 1 they
are decoded on a pool of threads, each thread with a decoder of its own (PyAV releases the GIL
while FFmpeg demuxes and decodes), and frames still come out in index order. One decoder with
FFmpeg's frame threads cannot do that on sparse requests: after every seek its threads refill
from the keyframe, so a cold request used about one core (issue 25).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

import av
import av.error
import numpy as np

from m3kit.errors import CorruptMediaError, DecodeTimeoutError, SamplingError
from m3kit.media.budget import check_frames_fit, frame_bytes, usable_cpus
from m3kit.media.container import check_not_still, open_video
from m3kit.media.index import VideoIndex, scan_index
from m3kit.media.info import VideoInfo, info_from_index
from m3kit.media.ordered import in_order
from m3kit.media.resize import Resize
from m3kit.media.swscale import reformat

# A seek costs about as much as decoding this many frames (demuxer reset, decoder flush, threads
# refilling). Measured on 720p H.264 with 2 cores; it only shifts the seek/continue break-even.
SEEK_COST_FRAMES = 12
# Time bound of one request: a fixed allowance plus a floor decode speed far below any real decoder
# (per frame of up to 1920x1080; larger frames get proportionally more).
BASE_TIMEOUT_S = 30.0
PER_FRAME_TIMEOUT_S = 0.02
TIMEOUT_REFERENCE_PIXELS = 1920 * 1080
# Frame threading keeps a frame in flight per thread; past this many bytes in flight (8000x8000
# on 3 threads: 288 MB) the decoder uses slice threads, which hold no extra frame.
FRAME_THREADS_MAX_BYTES = 256 * 2**20

# Parallel runs: at most this many decoder threads per request (more rarely pays: a request
# holds 64-96 targets, so a few GOPs per thread), and each thread may be this many runs ahead of
# the one being returned.
MAX_DECODE_WORKERS = 8
RUNS_AHEAD_PER_WORKER = 2
# Decoded frames (yuv420p) held by runs finished ahead of the consumer stay under this; a request
# that would hold more (huge frames, dense runs) is decoded by one decoder.
PARALLEL_MAX_BYTES_AHEAD = 512 * 2**20

# Frames a decoder may hold back for reordering (H.264 allows 16 in its picture buffer): how far
# past a refused packet a damaged frame is looked for.
_REORDER_SLACK = 17
_SOUGHT = -2
_DRAINED = -3

Strategy = Literal["sequential", "seek", "mixed"]
Converted = TypeVar("Converted")  # what a request turns each decoded frame into


@dataclass(frozen=True)
class DecodeRun:
    """Frames decoded in one sweep: ``seek_to`` is the keyframe index sought first (None: go on
    from where the decoder stands), ``targets`` the wanted indices in the sweep."""

    seek_to: int | None
    targets: tuple[int, ...]


@dataclass(frozen=True)
class DecodePlan:
    runs: tuple[DecodeRun, ...]
    estimated_frames: int  # frames the decoder works through, by the plan's cost model

    @property
    def seeks(self) -> int:
        return sum(run.seek_to is not None for run in self.runs)

    @property
    def strategy(self) -> Strategy:
        if self.seeks == 0:
            return "sequential"
        return "seek" if self.seeks == len(self.runs) else "mixed"


@dataclass
class DecodeStats:
    """What the last request cost."""

    strategy: Strategy = "sequential"
    seeks: int = 0
    packets: int = 0  # packets sent to the decoder
    frames: int = 0  # frames the decoder returned
    converted: int = 0  # frames turned into RGB arrays
    seconds: float = 0.0
    planned_frames: int = 0
    reseeks: list[int] = field(default_factory=list)  # targets that needed an earlier keyframe
    workers: int = 1  # decoders that worked on the request at once (1: one sequential pass)

    def add(self, run: DecodeStats) -> None:
        """Count one parallel run's work into the request's."""
        self.seeks += run.seeks
        self.packets += run.packets
        self.frames += run.frames
        self.reseeks += run.reseeks


def plan_decode(
    index: VideoIndex,
    targets: Sequence[int],
    *,
    seek_cost: int = SEEK_COST_FRAMES,
    position: int = -1,
) -> DecodePlan:
    """Choose, for each wanted frame in ascending order, to continue decoding or to seek.

    Continuing from position ``p`` to target ``t`` decodes ``t - p`` frames; seeking decodes from
    the GOP start ``g`` of ``t``: ``t - g + 1`` frames plus ``seek_cost``. A target inside the GOP
    the decoder is already in never seeks. ``position`` is the last frame the decoder returned
    (-1: it stands at the start of the file); a target at or before it needs a seek.
    """
    wanted = sorted({int(t) for t in targets})
    if not wanted:
        return DecodePlan(runs=(), estimated_frames=0)
    gops = index.gop_starts(np.asarray(wanted, dtype=np.int64)).tolist() if index.has_timestamps \
        else [0] * len(wanted)
    runs: list[DecodeRun] = []
    current: list[int] = []
    seek_to: int | None = None
    cost = 0
    for target, gop in zip(wanted, gops, strict=True):
        go_on = target - position
        jump = target - gop + 1 + seek_cost
        behind = target <= position  # decoders only go forward
        if not index.has_timestamps or (not behind and (position >= gop or go_on <= jump)):
            cost += go_on
        else:
            if current:
                runs.append(DecodeRun(seek_to=seek_to, targets=tuple(current)))
            current, seek_to = [], gop
            cost += jump
        current.append(target)
        position = target
    runs.append(DecodeRun(seek_to=seek_to, targets=tuple(current)))
    return DecodePlan(runs=tuple(runs), estimated_frames=cost)


class _DecodeClock:
    """Time spent decoding one request, not counting the time a consumer holds a yielded frame
    (a renderer encoding between frames must not run the decoder out of time)."""

    def __init__(self, budget: float, path: Path) -> None:
        self.budget = budget
        self.path = path
        self.spent = 0.0
        self._since = time.perf_counter()

    def pause(self) -> None:
        self.spent += time.perf_counter() - self._since

    def resume(self) -> None:
        self._since = time.perf_counter()

    def check(self) -> None:
        if self.spent + (time.perf_counter() - self._since) > self.budget:
            raise DecodeTimeoutError(f"decoding took more than {self.budget:.0f} s", path=self.path)


class VideoDecoder:
    """Index-based frame access to one video file.

    The frame index is read from the packets when the decoder opens (or handed in, e.g. from the
    frame store's cache). ``get_frames`` is frame-exact: frame ``i`` equals the ``i``-th frame of a
    full sequential decode, also when the file stores frames out of presentation order.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        index: VideoIndex | None = None,
        threads: int = 0,
        timeout_s: float | None = None,
        seek_cost: int = SEEK_COST_FRAMES,
        skip_nonref: bool = True,
        workers: int | None = None,
    ) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.seek_cost = seek_cost
        self.skip_nonref = skip_nonref
        # Decoders working on one request's independent runs (None: one per usable CPU).
        self.workers = min(MAX_DECODE_WORKERS, usable_cpus()) if workers is None else workers
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        self._threads = threads
        self._helpers: list[VideoDecoder] = []  # decoders of parallel runs, kept for reuse
        # The process that opened the container: FFmpeg's frame threads are its own, so a
        # forked child opens the file again (``_own_process``; m3kit.forks).
        self._pid = os.getpid()
        self._inherited: list[Any] = []
        self._container, self._stream = open_video(self.path)
        try:
            if index is None:
                index = scan_index(self._container, self._stream, self.path)
                check_not_still(len(index), self._stream, self.path)
                self._reopen()
            self.index = index
            self._configure_codec()
        except BaseException:
            self._container.close()
            raise
        self._pts_to_index = index.index_of_pts()
        self._info: VideoInfo | None = None
        self.last_stats = DecodeStats()

    # -- metadata -------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.index)

    @property
    def info(self) -> VideoInfo:
        """Metadata; the rotation field is not measured here (``probe`` decodes for it)."""
        if self._info is None:
            self._info = info_from_index(self.index, self._container, self._stream, rotation=0)
        return self._info

    @property
    def times(self) -> np.ndarray:
        return self.index.times

    @property
    def frame_size(self) -> tuple[int, int]:
        """``(width, height)`` of the decoded frames, from the stream header."""
        cc = self._stream.codec_context
        return int(cc.width or self._stream.width or 0), int(cc.height or self._stream.height or 0)

    def output_size(self, resize: Resize | None) -> tuple[int, int]:
        """``(width, height)`` of the frames ``get_frames`` returns with ``resize``."""
        width, height = self.frame_size
        return (width, height) if resize is None else resize.size_for(width, height)

    # -- access -----------------------------------------------------------------------------------

    def get_frames(
        self,
        indices: Sequence[int],
        *,
        resize: Resize | None = None,
        on_frame: Callable[[int], None] | None = None,
        memory_budget: int | None = None,
    ) -> list[np.ndarray]:
        """RGB ``uint8`` arrays (H, W, 3) for ``indices``, in the order asked (repeats allowed).

        ``on_frame(index)`` is called as each distinct frame is ready (for progress bars). A
        request whose frames cannot all be held in ``memory_budget`` bytes (default: half the
        usable memory) is refused before decoding (``MediaTooLargeError``); ``iter_frames``
        holds one frame at a time.
        """
        wanted = self._validate(indices)
        check_frames_fit(len(set(wanted)), self.output_size(resize), self.frame_size,
                         budget_bytes=memory_budget, path=self.path)
        out: dict[int, np.ndarray] = {}
        # converted where decoded: on the decoding threads when runs go in parallel
        for i, rgb in self._decoded(wanted, lambda frame: frame_to_rgb(frame, resize)):
            out[i] = rgb
            self.last_stats.converted += 1
            if on_frame is not None:
                on_frame(i)
        return [out[i] for i in wanted]

    def get_frame(self, index: int, *, resize: Resize | None = None) -> np.ndarray:
        return self.get_frames([index], resize=resize)[0]

    def iter_frames(self, indices: Sequence[int]) -> Iterator[tuple[int, av.VideoFrame]]:
        """Yield ``(index, frame)`` for the wanted indices in ascending order, one pass."""
        return self._decoded(indices, _as_decoded)

    def _decoded(
        self, indices: Sequence[int], convert: Callable[[av.VideoFrame], Converted]
    ) -> Iterator[tuple[int, Converted]]:
        """``(index, convert(frame))`` for the wanted indices in ascending order."""
        self._own_process()
        wanted = sorted(set(self._validate(indices)))
        # Every request plans from the start of the file, never from where the last one stopped:
        # frames that the last request's final packet produced, or that it skipped as
        # unreferenced, are gone from the decoder, so going on could lose a wanted frame.
        plan = plan_decode(self.index, wanted, seek_cost=self.seek_cost)
        stats = DecodeStats(strategy=plan.strategy, planned_frames=plan.estimated_frames)
        self.last_stats = stats
        budget = self.timeout_s
        if budget is None:
            width, height = self.frame_size
            per_frame = PER_FRAME_TIMEOUT_S * max(1.0, width * height / TIMEOUT_REFERENCE_PIXELS)
            budget = BASE_TIMEOUT_S + per_frame * (plan.estimated_frames + len(wanted))
        clock = _DecodeClock(budget, self.path)
        if self.index.has_timestamps and self._parallel_pays(plan):
            yield from self._parallel_runs(plan, stats, clock, convert)
        else:
            frames = (self._count_frames(wanted, stats, clock) if not self.index.has_timestamps
                      else (f for run in plan.runs for f in self._run(run, stats, clock)))
            for i, frame in frames:
                yield i, convert(frame)
        stats.seconds = clock.spent

    # -- parallel runs ----------------------------------------------------------------------------

    def _parallel_pays(self, plan: DecodePlan) -> bool:
        """Several decoders for this plan: more than one independent run, and the frames runs
        finished ahead of the consumer would hold stay bounded."""
        if self.workers < 2 or plan.seeks < 2:
            return False
        width, height = self.frame_size
        largest = max(len(run.targets) for run in plan.runs)
        ahead = self.workers * RUNS_AHEAD_PER_WORKER
        # RGB at the source size: the most a converted frame takes (yuv420p takes half)
        return ahead * largest * frame_bytes(width, height) <= PARALLEL_MAX_BYTES_AHEAD

    def _parallel_runs(
        self, plan: DecodePlan, stats: DecodeStats, clock: _DecodeClock,
        convert: Callable[[av.VideoFrame], Converted],
    ) -> Iterator[tuple[int, Converted]]:
        """The plan's runs decoded (and their frames converted) on a thread pool, frames
        yielded in index order.

        A run without a seek (from the start of the file) is decoded by this decoder; every run
        that seeks goes to a helper decoder (one FFmpeg thread each: the parallelism is
        across runs). Each run is timed against the whole request's budget. A damaged frame
        raises when its run's turn comes, after every frame before it, as a sequential pass
        would.
        """
        pool = _DecoderPool(self, limit=min(self.workers, plan.seeks))
        workers = min(self.workers, len(plan.runs))
        stats.workers = workers

        def decode(run: DecodeRun) -> tuple[list[tuple[int, Converted]], DecodeStats]:
            decoder = pool.take(primary=run.seek_to is None)
            run_stats = DecodeStats()
            try:
                frames = [(i, convert(frame)) for i, frame in
                          decoder._run(run, run_stats, _DecodeClock(clock.budget, self.path))]
            finally:
                pool.give(decoder)
            return frames, run_stats

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="m3kit-decode") as pool_:
            for frames, run_stats in in_order(pool_, decode, plan.runs,
                                              ahead=workers * RUNS_AHEAD_PER_WORKER):
                stats.add(run_stats)
                for i, frame in frames:
                    clock.pause()
                    yield i, frame
                    clock.resume()

    def _helper(self) -> VideoDecoder:
        """A new decoder of the same file for parallel runs (the index is shared, not rescanned)."""
        helper = VideoDecoder(self.path, index=self.index, threads=1, workers=1,
                              timeout_s=self.timeout_s, seek_cost=self.seek_cost,
                              skip_nonref=self.skip_nonref)
        self._helpers.append(helper)
        return helper

    # -- internals --------------------------------------------------------------------------------

    def _validate(self, indices: Sequence[int]) -> list[int]:
        wanted = [int(i) for i in indices]
        n = len(self.index)
        bad = [i for i in wanted if i < 0 or i >= n]
        if bad:
            raise SamplingError(
                f"frame index {bad[0]} is outside the video (0..{n - 1})", path=self.path
            )
        return wanted

    def _configure_codec(self) -> None:
        cc = self._stream.codec_context
        threads = self._threads or (os.cpu_count() or 1) + 1  # FFmpeg's automatic count
        in_flight = (cc.width or 0) * (cc.height or 0) * 3 // 2 * threads  # yuv420p frames
        cc.thread_type = "SLICE" if in_flight > FRAME_THREADS_MAX_BYTES else "AUTO"
        cc.thread_count = self._threads

    def _own_process(self) -> None:
        """In a child forked after this decoder opened: leave the parent's container and
        helpers as they are (their FFmpeg threads do not exist here: closing them would wait on
        those threads forever; m3kit.forks) and open the file again."""
        if self._pid == os.getpid():
            return
        self._inherited += [self._container, *self._helpers]
        self._helpers = []
        self._container, self._stream = open_video(self.path)
        self._configure_codec()
        self._position, self._eof_sent = -1, False
        self._pid = os.getpid()

    def _reopen(self) -> None:
        self._container.close()
        self._container, self._stream = open_video(self.path)
        self._configure_codec()
        self._position = -1
        self._eof_sent = False

    # Index of the last frame the decoder returned; -1: at the start; _SOUGHT: just after a seek,
    # not known until a frame comes out; _DRAINED: the end of the file was reached.
    _position: int = -1
    _eof_sent: bool = False  # the decoder got its end-of-stream packet: it must be reset to go on

    def _seek(self, keyframe_index: int) -> None:
        pts = int(self.index.pts[keyframe_index])
        try:
            self._container.seek(pts, stream=self._stream, backward=True, any_frame=False)
        except av.error.FFmpegError:
            self._reopen()  # an unseekable file: start over and decode forward
            return
        self._stream.codec_context.flush_buffers()
        self._position = _SOUGHT
        self._eof_sent = False

    def _run(
        self, run: DecodeRun, stats: DecodeStats, clock: _DecodeClock
    ) -> Iterator[tuple[int, av.VideoFrame]]:
        targets = list(run.targets)
        if run.seek_to is not None:
            self._seek(run.seek_to)
            stats.seeks += 1
        elif self._position != -1 or self._eof_sent:
            # A run without a seek starts at the start of the file: a decoder that has decoded
            # anything (an earlier request) starts over.
            self._reopen()
        seek_to = run.seek_to
        k = 0
        while True:
            overshoot = False
            after_seek = self._position == _SOUGHT
            for i, frame in self._decode_forward(targets[k:], stats, clock):
                if after_seek:
                    after_seek = False
                    if i > targets[k]:
                        overshoot = True  # landed after the target: an earlier keyframe is needed
                        break
                if i == targets[k]:
                    yield i, frame
                    k += 1
                    if k == len(targets):
                        return
                elif i > targets[k]:
                    raise CorruptMediaError(
                        f"frame {targets[k]} did not come out of the decoder (damaged data)",
                        path=self.path, record=f"frame {targets[k]}",
                    )
            if not overshoot:
                raise CorruptMediaError(
                    f"the stream ends before frame {targets[k]} (truncated or damaged)",
                    path=self.path, record=f"frame {targets[k]}",
                )
            stats.reseeks.append(targets[k])
            earlier = self._keyframe_before(seek_to if seek_to is not None else targets[k])
            if earlier is None:
                self._reopen()
                seek_to = None
            else:
                self._seek(earlier)
                seek_to = earlier

    def _first_undecodable(self, good: int, failed_at: int | None) -> int:
        """The first frame after ``good`` (a frame that decoded; -1: none known) that a plain
        sequential decode fails on: decoded again from ``good``'s keyframe in a fresh container,
        nothing skipped, up to a little past ``failed_at`` (the frame whose packet the decoder
        refused). ``good + 1`` when the failure does not recur there."""
        start = int(self.index.gop_starts(np.asarray([max(good, 0)]))[0])
        stop = min(len(self.index) - 1,
                   max(good, failed_at if failed_at is not None else start) + _REORDER_SLACK)
        container, stream = open_video(self.path)
        last = start - 1
        try:
            cc = stream.codec_context
            cc.thread_type, cc.thread_count = self._stream.codec_context.thread_type, self._threads
            if start > 0:
                container.seek(int(self.index.pts[start]), stream=stream, backward=True,
                               any_frame=False)
            for packet in container.demux(stream):
                for frame in cc.decode(packet):
                    i = self._pts_to_index.get(frame.pts if frame.pts is not None else -1)
                    if i is not None:
                        last = max(last, i)
                if last >= stop:
                    break
        except av.error.FFmpegError:
            return last + 1
        finally:
            container.close()
        return good + 1

    def _keyframe_before(self, index: int) -> int | None:
        keys = self.index.keyframe_indices
        earlier = keys[keys < index]
        return int(earlier[-1]) if earlier.size else None

    def _decode_forward(
        self, targets: list[int], stats: DecodeStats, clock: _DecodeClock
    ) -> Iterator[tuple[int, av.VideoFrame]]:
        """Demux and decode from the current position, yielding ``(index, frame)``."""
        cc = self._stream.codec_context
        target_pts = {int(self.index.pts[t]) for t in targets}
        skip = self.skip_nonref
        packet_pts: int | None = None
        try:
            for packet in self._container.demux(self._stream):
                packet_pts = packet.pts if packet.pts is not None else packet_pts
                if skip and packet.pts is not None:
                    cc.skip_frame = "DEFAULT" if packet.pts in target_pts else "NONREF"
                elif skip:
                    cc.skip_frame = "DEFAULT"  # the flush packet: drain everything
                if packet.size == 0:
                    self._eof_sent = True
                stats.packets += 1
                for frame in cc.decode(packet):
                    stats.frames += 1
                    i = self._pts_to_index.get(frame.pts if frame.pts is not None else -1)
                    if i is None:
                        continue  # a frame the index does not list (cut by an edit list)
                    self._position = i
                    clock.pause()
                    yield i, frame
                    clock.resume()
                if stats.packets % 64 == 0:
                    clock.check()
            self._position = _DRAINED
        except av.error.EOFError:
            self._position = _DRAINED
        except av.error.FFmpegError as exc:
            # With frames skipped, or just after a seek, the last frame out is not the last good
            # one: find the first frame a plain sequential decode cannot produce, the index
            # every verb reports.
            good = self._position if self._position >= 0 else -1
            exact = not skip and self._position >= -1
            failed_at = self._pts_to_index.get(packet_pts if packet_pts is not None else -1)
            bad = good + 1 if exact else self._first_undecodable(good, failed_at)
            raise damaged_frame_error(self.path, bad, _ffmpeg_reason(exc)) from None
        finally:
            if skip:
                cc.skip_frame = "DEFAULT"

    def _count_frames(
        self, wanted: list[int], stats: DecodeStats, clock: _DecodeClock
    ) -> Iterator[tuple[int, av.VideoFrame]]:
        """Streams without timestamps: one sequential decode, frames counted as they come."""
        self._reopen()
        remaining = set(wanted)
        count = -1
        try:
            for packet in self._container.demux(self._stream):
                stats.packets += 1
                for frame in self._stream.codec_context.decode(packet):
                    stats.frames += 1
                    count += 1
                    self._position = count
                    if count in remaining:
                        remaining.discard(count)
                        clock.pause()
                        yield count, frame
                        clock.resume()
                        if not remaining:
                            return
                if stats.packets % 64 == 0:
                    clock.check()
        except av.error.FFmpegError as exc:
            raise damaged_frame_error(self.path, count + 1, _ffmpeg_reason(exc)) from None
        if remaining:
            raise CorruptMediaError(
                f"frame {min(remaining)} never came out of the decoder", path=self.path,
                record=f"frame {min(remaining)}",
            )

    # -- lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        if self._pid != os.getpid():  # a forked child's copy: the parent's to close (above)
            return
        for helper in self._helpers:
            helper.close()
        self._helpers.clear()
        self._container.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _DecoderPool:
    """The decoders one parallel request may use, each by one thread at a time: the primary
    (which decodes the run from the start of the file, if any) and up to ``limit`` helpers,
    opened on first need and kept by the primary for its later requests."""

    def __init__(self, primary: VideoDecoder, *, limit: int) -> None:
        self._primary = primary
        self._free = list(primary._helpers)
        self._primary_free = True
        self._opened = len(self._free)
        self._limit = limit
        self._changed = threading.Condition()

    def take(self, *, primary: bool) -> VideoDecoder:
        with self._changed:
            while True:
                if primary and self._primary_free:
                    self._primary_free = False
                    return self._primary
                if not primary and self._free:
                    return self._free.pop()
                if not primary and self._opened < self._limit:
                    self._opened += 1
                    break
                self._changed.wait()
        try:
            return self._primary._helper()
        except BaseException:
            with self._changed:
                self._opened -= 1
                self._changed.notify_all()
            raise

    def give(self, decoder: VideoDecoder) -> None:
        with self._changed:
            if decoder is self._primary:
                self._primary_free = True
            else:
                self._free.append(decoder)
            self._changed.notify_all()


def decode_frames(
    path: str | Path, indices: Sequence[int], *, resize: Resize | None = None
) -> list[np.ndarray]:
    """Open ``path``, return the frames at ``indices`` (RGB uint8), close."""
    with VideoDecoder(path) as decoder:
        return decoder.get_frames(indices, resize=resize)


def damaged_frame_error(path: str | Path, index: int, reason: str) -> CorruptMediaError:
    """The error for a stream whose frame ``index`` does not decode (frames before it do)."""
    index = max(index, 0)
    before = f"; frames 0..{index - 1} decode" if index else ""
    return CorruptMediaError(f"does not decode ({reason}){before}", path=path,
                             record=f"frame {index}")


def frame_to_rgb(frame: av.VideoFrame, resize: Resize | None = None) -> np.ndarray:
    """A decoded frame as an RGB ``uint8`` array, resized by swscale when asked (on the
    calling thread: ``m3kit.media.swscale``)."""
    if resize is None:
        return reformat(frame, "rgb24").to_ndarray()
    width, height = resize.size_for(frame.width, frame.height)
    return reformat(frame, "rgb24", width, height, interpolation="AREA").to_ndarray()


def _as_decoded(frame: av.VideoFrame) -> av.VideoFrame:
    return frame


def _ffmpeg_reason(exc: Exception) -> str:
    return str(getattr(exc, "strerror", None) or exc)
