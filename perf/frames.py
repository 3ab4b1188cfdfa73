"""Frame-sampling benchmark: m3kit against decord and a decode-everything loop.

Generates (once, cached) synthetic 1280x720 H.264 videos with a keyframe every 250 frames, then
samples frames with the ``uniform`` (96 frames) and ``uniform_inner`` (64 frames) policies:

* ``m3kit cold``   -- ``m3kit.media.VideoDecoder(path).get_frames(indices)``, opening included:
                      the GOPs that hold wanted frames decoded on one thread per usable CPU;
* ``m3kit cold, 1 decoder`` -- the same with ``workers=1``: one decoder, FFmpeg's own threads;
* ``decord``       -- ``decord.VideoReader(path, ctx=cpu(0)).get_batch(indices)``, opening included;
* ``torchcodec``   -- ``torchcodec.decoders.VideoDecoder(path, num_ffmpeg_threads=0,
                      seek_mode="exact").get_frames_at(indices)`` (lmms-eval's reader), opening
                      included, where a CPU build loads beside the installed torch;
* ``full decode``  -- decode with PyAV from the start up to the last wanted frame and keep the
                      wanted ones (lmms-eval's PyAV reader);
* ``limit``        -- decode only the GOPs that hold wanted frames, each from its keyframe up to
                      its last wanted frame (and a tighter variant that also skips unwanted
                      non-reference frames): the floor for a keyframe-seeking decoder;
* ``store cold``   -- ``m3kit.media.FrameStore.get_frames`` on an empty store (decode + write);
* ``m3kit warm``   -- the same request again from the filled store (decodes nothing).

Every contender's frames are checked against the decode-everything frames. Medians and ratios
come from one run and are printed as a rich table and written as Markdown (``--markdown``).

Run from the repository root::

    python perf/frames.py                 # 10- and 60-minute videos
    python perf/frames.py --quick         # 1-minute video, smoke test

Videos are generated on first use into ``perf/.cache/`` (about 11-15 s per video minute
on 2 cores) and reused.

"Cold" means nothing of m3kit's is cached; the video file itself is read once before timing so
that every contender finds it in the OS page cache and none pays the disk for the others.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import av
import numpy as np
from PIL import Image
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

if TYPE_CHECKING:
    from m3kit.media import FrameStore

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
try:
    import m3kit  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without `pip install -e .`: use its src/
    sys.path.insert(0, str(REPO_ROOT / "src"))

# after the fallback above puts a checkout's src/ on the path
from m3kit.media.sampling import uniform_indices, uniform_inner_indices  # noqa: E402

# Not a terminal (a log file, CI): wide enough that the tables do not wrap.
console = Console(width=None if sys.stdout.isatty() else 180)

# --------------------------------------------------------------------------------------------
# Synthetic videos
# --------------------------------------------------------------------------------------------

WIDTH, HEIGHT, FPS = 1280, 720, 25
GOP = 250
# Bump when the pattern or the encoder settings change, so cached files are regenerated.
GENERATOR_VERSION = 1
ENCODER_OPTIONS = {
    # superfast encodes ~100-140 fps at 720p on 2 cores and still uses CABAC, B-frames, deblocking
    # and motion search like ordinary footage; crf 23 is x264's default quality (~3.6 Mbit/s here).
    "preset": "superfast",
    "crf": "23",
    # A keyframe exactly every GOP frames (no scene-cut keyframes) and up to 3 B-frames, so the
    # GOP layout -- what a seeking decoder pays for -- is known exactly.
    "x264-params": f"keyint={GOP}:min-keyint={GOP}:scenecut=0:bframes=3",
}
BARCODE_BITS = 20  # 2**20 frames > 11 hours at 25 fps
BARCODE_CELL = 32  # pixels per bit, large enough to survive compression


class SyntheticPattern:
    """Deterministic frames that cost an H.264 encoder/decoder about what real footage does.

    Two smooth textures scroll in different directions and are summed, so no single motion
    vector predicts a block and every frame carries residual; a few shapes move on curved paths.
    Pure noise is avoided: it would make the video incompressible and its decoding unrealistically
    slow. Each frame is built from precomputed planes by slicing and one add (well under 1 ms), in
    yuv420p directly, so the encoder needs no colour conversion. The frame index is drawn as a
    barcode in the top-left corner, which lets the benchmark check that decoders are frame-exact.
    """

    def __init__(self, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        h2, w2 = 2 * HEIGHT, 2 * WIDTH  # double size: any window offset mod (H, W) fits
        far = 0.75 * _smooth_noise(rng, h2, w2, 96) + 0.25 * _smooth_noise(rng, h2, w2, 24)
        self._far = (far * 170 / 255).astype(np.uint8)  # 0..170
        self._near = (_smooth_noise(rng, h2, w2, 6) * 70 / 255).astype(np.uint8)  # 0..70
        hc, wc = HEIGHT, WIDTH  # chroma planes are (H/2, W/2); double that again for scrolling
        self._cb = (_smooth_noise(rng, hc, wc, 48) * 0.35 + 83).astype(np.uint8)  # 83..172
        self._cr = (_smooth_noise(rng, hc, wc, 48) * 0.35 + 83).astype(np.uint8)
        self._buf = np.empty((HEIGHT * 3 // 2, WIDTH), dtype=np.uint8)

    def frame(self, i: int) -> np.ndarray:
        """Frame ``i`` as a (H*3/2, W) yuv420p array (valid until the next call)."""
        buf = self._buf
        y = buf[:HEIGHT]
        fy, fx = (2 * i) % HEIGHT, (4 * i) % WIDTH  # background drifts down-right
        ny, nx = (-3 * i) % HEIGHT, (1 * i) % WIDTH  # detail layer drifts up
        np.add(
            self._far[fy : fy + HEIGHT, fx : fx + WIDTH],
            self._near[ny : ny + HEIGHT, nx : nx + WIDTH],
            out=y,
        )
        self._draw_shapes(y, i)
        cy, cx = fy // 2, fx // 2
        quarter = HEIGHT // 4  # a (H/2, W/2) chroma plane stored as (H/4, W) rows in yuv420p
        buf[HEIGHT : HEIGHT + quarter] = self._cb[
            cy : cy + HEIGHT // 2, cx : cx + WIDTH // 2
        ].reshape(quarter, WIDTH)
        buf[HEIGHT + quarter :] = self._cr[cy : cy + HEIGHT // 2, cx : cx + WIDTH // 2].reshape(
            quarter, WIDTH
        )
        self._draw_barcode(buf, i)
        return buf

    @staticmethod
    def _draw_shapes(y: np.ndarray, i: int) -> None:
        for k, size in enumerate((200, 140, 90)):
            t = i / (37.0 + 11 * k)
            top = int((HEIGHT - size - 80) * (0.5 + 0.5 * np.sin(t + k))) + 80
            left = int((WIDTH - size) * (0.5 + 0.5 * np.sin(0.7 * t + 2 * k)))
            block = y[top : top + size, left : left + size]
            np.subtract(255, block, out=block)  # invert: a hard-edged moving object

    @staticmethod
    def _draw_barcode(buf: np.ndarray, i: int) -> None:
        c = BARCODE_CELL
        for bit in range(BARCODE_BITS):
            buf[0:c, bit * c : (bit + 1) * c] = 235 if (i >> bit) & 1 else 16
        quarter = HEIGHT // 4
        width_c = BARCODE_BITS * c // 2  # grey chroma under the barcode: (c/2 rows, width_c cols)
        for plane in (HEIGHT, HEIGHT + quarter):
            rows = buf[plane : plane + c // 4]  # c/2 chroma rows = c/4 buffer rows of width W
            rows.reshape(c // 2, WIDTH // 2)[:, :width_c] = 128


def _smooth_noise(rng: np.random.Generator, h: int, w: int, scale: int) -> np.ndarray:
    """Random values on a coarse grid, bicubically upsampled to (h, w): a smooth texture 0..255."""
    small = rng.integers(0, 256, (h // scale + 2, w // scale + 2), dtype=np.uint8)
    big = Image.fromarray(small).resize((w + 2 * scale, h + 2 * scale), Image.Resampling.BICUBIC)
    return np.asarray(big, dtype=np.float32)[scale : scale + h, scale : scale + w]


def read_barcode(rgb: np.ndarray) -> int:
    """The frame index drawn by ``SyntheticPattern`` into an RGB frame."""
    c = BARCODE_CELL
    cells = rgb[c // 4 : 3 * c // 4, : BARCODE_BITS * c, 1].reshape(c // 2, BARCODE_BITS, c)
    bits = cells[:, :, c // 4 : 3 * c // 4].mean(axis=(0, 2)) > 128
    return int(sum(1 << b for b, on in enumerate(bits) if on))


def video_path(cache_dir: Path, minutes: float) -> Path:
    label = f"{minutes:g}".replace(".", "p")
    return (
        cache_dir
        / f"synthetic_{WIDTH}x{HEIGHT}_{FPS}fps_gop{GOP}_{label}min_v{GENERATOR_VERSION}.mp4"
    )


def ensure_video(cache_dir: Path, minutes: float, log: list[str] | None = None) -> Path:
    """Return the cached video of ``minutes`` length, generating it first if missing.

    A line on how long generation took is printed and appended to ``log``.
    """
    path = video_path(cache_dir, minutes)
    if path.exists():
        console.print(f"[dim]using cached {path}[/dim]")
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    num_frames = round(minutes * 60 * FPS)
    # Written under a private name and renamed when complete: an interrupted or concurrent
    # generation never leaves a half-written file under the cached name.
    partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.mp4")
    start = time.perf_counter()
    try:
        write_video(partial, num_frames, f"generating {path.name}")
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    elapsed = time.perf_counter() - start
    partial.replace(path)
    size_mb = path.stat().st_size / 1e6
    line = (
        f"generated {path.name}: {num_frames} frames in {elapsed:.1f} s "
        f"({elapsed / minutes:.1f} s per video minute, {num_frames / elapsed:.0f} fps), "
        f"{size_mb:.1f} MB ({size_mb * 8 / (minutes * 60):.2f} Mbit/s)"
    )
    console.print(line)
    if log is not None:
        log.append(line)
    return path


def write_video(path: Path, num_frames: int, description: str) -> None:
    pattern = SyntheticPattern()
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.options = dict(ENCODER_OPTIONS)
        # Frame threads, not x264's default-in-libav sliced threads: one slice per frame, as in
        # ordinary footage (slices would also change how a decoder can parallelise).
        stream.thread_type = "FRAME"
        with _progress() as progress:
            task = progress.add_task(description, total=num_frames)
            for i in range(num_frames):
                frame = av.VideoFrame.from_ndarray(pattern.frame(i), format="yuv420p")
                frame.pts = i
                container.mux(stream.encode(frame))
                if i % 250 == 0:
                    progress.update(task, completed=i)
            progress.update(task, completed=num_frames)
        container.mux(stream.encode(None))  # flush the B-frames the encoder still holds


def _progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


@dataclass(frozen=True)
class VideoLayout:
    """Presentation-order timestamps and keyframe positions, read from packets (no decoding)."""

    path: Path
    pts: np.ndarray  # int64, one per frame, sorted
    keyframes: np.ndarray  # frame indices of keyframes
    reordered: int  # packets stored after a later frame: B-frames

    @property
    def num_frames(self) -> int:
        return int(self.pts.size)


def scan_layout(path: Path) -> VideoLayout:
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        packets = [(p.pts, p.is_keyframe) for p in container.demux(stream) if p.size > 0]
    pts = np.array([p for p, _ in packets], dtype=np.int64)
    key = np.array([k for _, k in packets], dtype=bool)
    order = np.argsort(pts, kind="stable")  # decode order -> presentation order
    reordered = int(np.count_nonzero(pts[1:] < np.maximum.accumulate(pts)[:-1]))
    return VideoLayout(
        path=path, pts=pts[order], keyframes=np.flatnonzero(key[order]), reordered=reordered
    )


def check_layout(layout: VideoLayout, minutes: float) -> str:
    """Fail unless the video has the expected frames, a keyframe exactly every GOP frames and
    B-frames; return a one-line summary."""
    expected_frames = round(minutes * 60 * FPS)
    expected_keys = np.arange(0, expected_frames, GOP)
    where = layout.path.name
    if layout.num_frames != expected_frames:
        raise SystemExit(f"{where}: {layout.num_frames} frames, expected {expected_frames}")
    if not np.array_equal(layout.keyframes, expected_keys):
        raise SystemExit(f"{where}: keyframes at {layout.keyframes[:8]}..., expected every {GOP}")
    if layout.reordered == 0:
        raise SystemExit(f"{where}: no B-frames")
    return (
        f"{layout.num_frames} frames; keyframes exactly at 0, {GOP}, {2 * GOP}, ... "
        f"({layout.keyframes.size}); {layout.reordered} B-frames"
    )


def warm_page_cache(path: Path) -> None:
    """Read the file once so no contender pays the disk for the ones timed after it."""
    with path.open("rb") as fh:
        while fh.read(1 << 23):
            pass


# --------------------------------------------------------------------------------------------
# Sampling policies
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    name: str
    n: int
    indices: Callable[[int, int], list[int]]


POLICIES = (
    Policy("uniform", 96, uniform_indices),
    Policy("uniform_inner", 64, uniform_inner_indices),
)


# --------------------------------------------------------------------------------------------
# Contenders. Each returns the wanted frames (RGB uint8, HxWx3, in request order) and the seconds
# its timed part took; set-up that is not part of a request (emptying a store) is left out.
# --------------------------------------------------------------------------------------------


@dataclass
class Sample:
    frames: list[np.ndarray]
    seconds: float
    decoded: int | None = None  # frames the decoder produced, where the contender can tell


def full_decode(path: Path, indices: Sequence[int]) -> Sample:
    """Decode frames in order from the start and keep the wanted ones (lmms-eval's PyAV reader).

    lmms-eval's ``read_video_pyav`` decodes sequentially until the last wanted frame; for webm/mkv
    it even collects *every* decoded frame first, which would not fit in memory for 60 minutes of
    720p (90 000 frames, ~125 GB as yuv420p). Here only the wanted frames are converted and kept,
    and a set replaces lmms-eval's ``i in indices`` array scan: the pattern at its best.
    """
    start = time.perf_counter()
    wanted, last = set(indices), max(indices)
    kept: dict[int, np.ndarray] = {}
    decoded = 0
    with av.open(str(path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for i, frame in enumerate(container.decode(stream)):
            decoded += 1
            if i in wanted:
                kept[i] = frame.to_ndarray(format="rgb24")
            if i >= last:
                break
    frames = [kept[i] for i in indices]
    return Sample(frames, time.perf_counter() - start, decoded)


def gop_limit(layout: VideoLayout, indices: Sequence[int], *, skip_nonref: bool = False) -> Sample:
    """Decode only the GOPs that hold wanted frames: for each, seek to its keyframe and decode up
    to its last wanted frame, converting only the wanted frames to RGB.

    With ``skip_nonref`` the decoder also drops the frames no other frame references (x264's
    non-reference B-frames) unless they are wanted -- they change no other frame, so this is the
    tighter floor: the keyframe and the reference frames up to each wanted frame. Reading the
    packet index (``layout``) is done beforehand and not timed: this is decode work alone.
    """
    wanted = sorted(set(indices))
    gop_starts = layout.keyframes[np.searchsorted(layout.keyframes, wanted, side="right") - 1]
    groups: dict[int, list[int]] = {}
    for key, i in zip(gop_starts.tolist(), wanted, strict=True):
        groups.setdefault(key, []).append(i)
    index_of_pts = {int(p): i for i, p in enumerate(layout.pts.tolist())}
    wanted_pts = {int(layout.pts[i]) for i in wanted}

    start = time.perf_counter()
    kept: dict[int, np.ndarray] = {}
    decoded = 0
    with av.open(str(layout.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        codec = stream.codec_context
        for key, members in groups.items():
            container.seek(int(layout.pts[key]), stream=stream, backward=True, any_frame=False)
            codec.flush_buffers()
            targets, last = set(members), members[-1]
            for packet in container.demux(stream):
                if skip_nonref:  # the flush packet (pts None) must drain everything
                    keep = packet.pts is None or packet.pts in wanted_pts
                    codec.skip_frame = "DEFAULT" if keep else "NONREF"
                done = False
                for frame in codec.decode(packet):
                    i = index_of_pts[frame.pts]
                    decoded += 1
                    if i in targets:
                        kept[i] = frame.to_ndarray(format="rgb24")
                    done = i >= last
                if done:
                    break
        codec.skip_frame = "DEFAULT"
    frames = [kept[i] for i in indices]
    return Sample(frames, time.perf_counter() - start, decoded)


def decord_batch(path: Path, indices: Sequence[int]) -> Sample:
    import decord  # optional peer: only needed when it is benchmarked

    start = time.perf_counter()
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    batch = reader.get_batch(list(indices)).asnumpy()
    seconds = time.perf_counter() - start
    return Sample(list(batch), seconds)


def torchcodec_unavailable() -> str | None:
    """Why TorchCodec cannot be a peer here (None: it loads). PyPI's torchcodec wheels link the
    CUDA build of torch (libtorch_cuda, libnvrtc); beside a CPU torch they fail to load."""
    try:
        from torchcodec.decoders import VideoDecoder  # noqa: F401
    except ImportError as exc:
        return f"not installed ({exc})"
    except OSError as exc:
        cause = exc.__cause__ or exc
        return f"does not load beside torch {_version('torch')}: {cause}"
    return None


def torchcodec_batch(path: Path, indices: Sequence[int]) -> Sample:
    from torchcodec.decoders import VideoDecoder

    start = time.perf_counter()
    decoder = VideoDecoder(str(path), dimension_order="NHWC", num_ffmpeg_threads=0,
                           seek_mode="exact")
    batch = decoder.get_frames_at(list(indices)).data.numpy()
    seconds = time.perf_counter() - start
    return Sample(list(batch), seconds)


def m3kit_cold(path: Path, indices: Sequence[int], workers: int | None = None) -> Sample:
    from m3kit.media import VideoDecoder

    start = time.perf_counter()
    decoder = VideoDecoder(path, workers=workers)
    frames = decoder.get_frames(list(indices))
    seconds = time.perf_counter() - start
    decoder.close()
    return Sample(list(frames), seconds, decoded=decoder.last_stats.frames)


class StoreRuns:
    """FrameStore contenders for one video: a cold call on an empty store, and warm calls.

    Stores live under the cache directory, not /tmp, so they sit on the same disk as the videos
    (``/tmp`` may be RAM-backed, which would flatter the warm numbers). ``image_format`` None
    keeps the store's default (jpeg: warm frames are the stored, lossy copies).
    """

    def __init__(self, root: Path, budget_bytes: int, image_format: str | None) -> None:
        self._root = root
        self._budget = budget_bytes
        self._format_args = {} if image_format is None else {"image_format": image_format}
        self._filled: dict[tuple[str, tuple[int, ...]], Path] = {}

    def cold(self, path: Path, indices: Sequence[int]) -> Sample:
        """First request on an empty store: decode, return, write the frames."""
        store_root = self._new_root()
        start = time.perf_counter()
        store = self._open(store_root)
        frames = store.get_frames(path, list(indices))
        seconds = time.perf_counter() - start
        decoded = store.stats.frames_decoded
        store.close()
        key = (str(path), tuple(indices))
        if key in self._filled:
            shutil.rmtree(store_root, ignore_errors=True)
        else:  # keep one filled store: the warm contender reads it
            self._filled[key] = store_root
        return Sample(list(frames), seconds, decoded)

    def warm(self, path: Path, indices: Sequence[int]) -> Sample:
        """Serve a request already in the store, from a fresh ``FrameStore`` on its root -- as a
        second evaluation run would -- so in-memory state of the filling call does not help."""
        key = (str(path), tuple(indices))
        if key not in self._filled:  # untimed: filling is the store-cold contender's job
            self.cold(path, indices)
        start = time.perf_counter()
        store = self._open(self._filled[key])
        frames = store.get_frames(path, list(indices))
        seconds = time.perf_counter() - start
        stats = store.stats
        store.close()
        if stats.frames_decoded or stats.misses or stats.decode_passes:
            raise SystemExit(f"m3kit warm decoded frames: {stats}")
        return Sample(list(frames), seconds, decoded=stats.frames_decoded)

    def cleanup(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)
        self._filled.clear()

    def _open(self, root: Path) -> FrameStore:
        from m3kit.media import FrameStore

        return FrameStore(root, self._budget, **self._format_args)

    def _new_root(self) -> Path:
        self._root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="store-", dir=self._root))


# --------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------

FULL, LIMIT, LIMIT_REF, DECORD, TORCHCODEC, COLD, COLD_ONE, STORE_COLD, WARM = (
    "full decode",
    "limit: GOPs",
    "limit: GOPs, ref frames",
    "decord",
    "torchcodec",
    "m3kit cold",
    "m3kit cold, 1 decoder",
    "m3kit store cold",
    "m3kit warm",
)


@dataclass
class Contender:
    name: str
    run: Callable[[Sequence[int]], Sample]
    repeats: int
    # Must equal the reference bit for bit. False for decord (it converts colour with its own
    # FFmpeg) and for a jpeg store's warm frames (lossy copies): those must show the right frame
    # indices, and their pixel difference is reported.
    exact: bool


@dataclass
class Result:
    name: str
    seconds: list[float] = field(default_factory=list)
    decoded: int | None = None
    checks: list[str] = field(default_factory=list)  # one verdict per run

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def check(self) -> str:
        return "; ".join(dict.fromkeys(self.checks))  # distinct verdicts, in order


@dataclass
class Case:
    minutes: float
    num_frames: int
    policy: Policy
    num_indices: int
    results: dict[str, Result]

    def median(self, name: str) -> float | None:
        r = self.results.get(name)
        return r.median if r is not None and r.seconds else None

    def ratio(self, num: str, den: str) -> float | None:
        a, b = self.median(num), self.median(den)
        return a / b if a is not None and b else None


def run_case(
    minutes: float, layout: VideoLayout, policy: Policy, contenders: list[Contender], repeats: int
) -> Case:
    """Time every contender ``repeats`` times, interleaved so drift hits all alike; check frames.

    The decode-everything peer runs first: its frames are the reference the others must match.
    """
    indices = policy.indices(layout.num_frames, policy.n)
    results = {c.name: Result(c.name) for c in contenders}
    reference: list[np.ndarray] | None = None
    for r in range(repeats):
        for c in contenders:
            if r >= c.repeats:
                continue
            gc.collect()  # free the previous contender's frames outside the timed region
            console.print(
                f"  [dim]{minutes:g} min · {policy.name} · {c.name} · run {r + 1}[/dim]", end=""
            )
            sample = c.run(indices)
            console.print(f"[dim] {sample.seconds:.3f} s[/dim]")
            res = results[c.name]
            res.seconds.append(sample.seconds)
            res.decoded = sample.decoded if sample.decoded is not None else res.decoded
            if reference is None:
                reference = sample.frames
                check_barcodes(c.name, reference, indices)
                res.checks.append("reference (frame indices checked)")
            else:
                verdict = compare(c, sample.frames, reference, indices)
                if not (
                    c is contenders[0] and verdict == "= reference"
                ):  # a rerun of the reference
                    res.checks.append(verdict)
            del sample
    return Case(minutes, layout.num_frames, policy, len(indices), results)


def check_barcodes(name: str, frames: list[np.ndarray], indices: Sequence[int]) -> None:
    """Each synthetic frame shows its own index: the reference must be frame-exact."""
    read = [read_barcode(f) for f in frames]
    wrong = [(i, got) for i, got in zip(indices, read, strict=True) if i != got]
    if wrong:
        raise SystemExit(f"{name}: wrong frames (wanted, got): {wrong[:5]}")


def compare(
    c: Contender, frames: list[np.ndarray], reference: list[np.ndarray], indices: Sequence[int]
) -> str:
    if len(frames) != len(reference):
        return _fail(c, f"returned {len(frames)} frames, expected {len(reference)}")
    if c.exact:
        for i, got, want in zip(indices, frames, reference, strict=True):
            if got.dtype != np.uint8 or got.shape != want.shape or not np.array_equal(got, want):
                return _fail(c, f"frame {i} differs from the decode-everything frame")
        return "= reference"
    # Not bit-exact by design: still require the right frames, and report the pixel difference.
    wrong = [i for i, f in zip(indices, frames, strict=True) if read_barcode(f) != i]
    if wrong:
        return f"WRONG FRAMES at {wrong[:5]}"
    diffs = [
        np.abs(f.astype(np.int16) - g.astype(np.int16))
        for f, g in zip(frames, reference, strict=True)
    ]
    worst = max(int(d.max()) for d in diffs)
    mean = float(np.mean([d.mean() for d in diffs]))
    return "= reference" if worst == 0 else f"right frames; abs diff max {worst}, mean {mean:.2f}"


def _fail(c: Contender, message: str) -> str:
    if c.exact:
        raise SystemExit(f"{c.name}: {message}")
    return message


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------

# Issue 25: with every core on one video, m3kit cold at least 2.5x faster than decord and at
# most 0.6x the GOP limit (one decoder); warm at least 20x faster than cold.
GOAL_COLD_VS_DECORD = 2.5
GOAL_COLD_VS_LIMIT = 0.6
GOAL_COLD_VS_WARM = 20.0
RATIOS = (
    # label, numerator, denominator, goal or None, whether the ratio must stay at most the goal
    ("decord / m3kit cold", DECORD, COLD, GOAL_COLD_VS_DECORD, False),
    ("torchcodec / m3kit cold", TORCHCODEC, COLD, None, False),
    ("1 decoder / m3kit cold", COLD_ONE, COLD, None, False),
    ("m3kit cold / warm", COLD, WARM, GOAL_COLD_VS_WARM, False),
    ("store cold / warm", STORE_COLD, WARM, None, False),
    ("m3kit cold / limit", COLD, LIMIT, GOAL_COLD_VS_LIMIT, True),
    ("m3kit cold / ref-frame limit", COLD, LIMIT_REF, None, False),
    ("full decode / m3kit cold", FULL, COLD, None, False),
)


def machine_info() -> list[tuple[str, str]]:
    import numpy

    return [
        ("CPU", cpu_model()),
        ("CPUs usable", f"{len(os.sched_getaffinity(0))} (os.cpu_count() = {os.cpu_count()})"),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        (
            "PyAV",
            f"{av.__version__} "
            f"(libavcodec {'.'.join(map(str, av.library_versions['libavcodec']))})",
        ),
        ("decord", _version("decord")),
        ("torchcodec", torchcodec_unavailable() or _version("torchcodec")),
        ("numpy", numpy.__version__),
        ("m3kit", _version("m3kit")),
        ("git commit", git_commit()),
    ]


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str:
    try:
        return str(getattr(__import__(module), "__version__", "version unknown"))
    except ImportError:
        return "not installed"


def git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout.strip() + (" (dirty tree)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _fmt_s(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def _fmt_ratio(x: float | None, goal: float | None = None, at_most: bool = False) -> str:
    if x is None:
        return "—"
    text = f"{x:.1f}×" if x >= 10 else f"{x:.2f}×"
    if goal is not None:
        met = x <= goal if at_most else x >= goal
        text += " ✓" if met else " ✗"
    return text


def result_rows(cases: list[Case]) -> list[list[str]]:
    rows = []
    for case in cases:
        cold = case.median(COLD)
        for res in case.results.values():
            if not res.seconds:
                continue
            rows.append(
                [
                    f"{case.minutes:g} min",
                    f"{case.policy.name} ({case.num_indices})",
                    res.name,
                    _fmt_s(res.median),
                    str(len(res.seconds)),
                    "—" if res.decoded is None else str(res.decoded),
                    _fmt_ratio(res.median / cold if cold else None),
                    res.check,
                ]
            )
    return rows


RESULT_HEADER = [
    "video",
    "policy (frames)",
    "contender",
    "median s",
    "runs",
    "frames decoded",
    "÷ m3kit cold",
    "check",
]
RATIO_HEADER = ["video", "policy (frames)", *(label for label, *_ in RATIOS)]


def ratio_rows(cases: list[Case]) -> list[list[str]]:
    return [
        [f"{c.minutes:g} min", f"{c.policy.name} ({c.num_indices})"]
        + [_fmt_ratio(c.ratio(num, den), goal, at_most) for _, num, den, goal, at_most in RATIOS]
        for c in cases
    ]


def print_tables(cases: list[Case]) -> None:
    for title, header, rows in (
        ("Frame sampling: median seconds per request", RESULT_HEADER, result_rows(cases)),
        ("Ratios (medians of the same run; ✓/✗ = goal met)", RATIO_HEADER, ratio_rows(cases)),
    ):
        table = Table(title=title)
        for h in header:
            table.add_column(
                h, justify="right" if h not in ("contender", "check", "policy (frames)") else "left"
            )
        for row in rows:
            table.add_row(*row)
        console.print(table)


@dataclass
class RunInfo:
    """When the run happened and how busy the machine was: timings from a loaded machine lie."""

    started: str = field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S %Z"))
    load_start: tuple[float, float, float] = field(default_factory=os.getloadavg)
    load_end: tuple[float, float, float] | None = None
    generated: list[str] = field(default_factory=list)  # one line per video generated this run

    def lines(self) -> list[tuple[str, str]]:
        def load(x: tuple[float, float, float] | None) -> str:
            return "—" if x is None else " / ".join(f"{v:.2f}" for v in x)

        return [
            ("started", self.started),
            ("load average (1/5/15 min) at start", load(self.load_start)),
            ("load average (1/5/15 min) at end", load(self.load_end)),
        ]


def markdown_report(
    cases: list[Case],
    videos: list[tuple[float, Path, str]],
    args: argparse.Namespace,
    run: RunInfo,
) -> str:
    def table(header: list[str], rows: list[list[str]]) -> list[str]:
        return [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows),
        ]

    store_format = args.store_format or "the store's default (jpeg)"
    lines = [
        "# Frame-sampling benchmark",
        "",
        "Produced by `perf/frames.py`; all numbers are from one run.",
        "",
        "Command (from the repository root):",
        "",
        "```",
        shlex.join(["python", *sys.argv]),
        "```",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in [*machine_info(), *run.lines()]),
        "",
        "## Videos",
        "",
        (
            f"Synthetic {WIDTH}×{HEIGHT}, {FPS} fps, yuv420p, H.264 (libx264 preset "
            f"{ENCODER_OPTIONS['preset']}, crf {ENCODER_OPTIONS['crf']}, "
            f"`{ENCODER_OPTIONS['x264-params']}`): two scrolling textures, moving shapes and the "
            "frame index as a barcode."
        ),
        "",
        *(
            f"- {m:g} min: `{p.name}`, {p.stat().st_size / 1e6:.1f} MB; {layout}"
            for m, p, layout in videos
        ),
        *(f"- {line}" for line in run.generated),
        "",
        "## Method",
        "",
        (
            f"- Policies: `uniform` {POLICIES[0].n} frames (plus the last frame if missing), "
            f"`uniform_inner` {POLICIES[1].n} frames."
        ),
        (
            f"- Each contender runs {args.repeats} times per video and policy (decode-everything: "
            f"{_full_repeats_text(args)}), interleaved; tables show the median."
        ),
        (
            "- Every timed call includes opening the file. The video is read once beforehand, so "
            "every contender finds it in the OS page cache; *cold* means no m3kit cache."
        ),
        (
            '- *full decode*: PyAV, `thread_type="AUTO"`, decode from the start up to the last '
            "wanted frame, converting only the wanted frames to RGB: lmms-eval's PyAV reader, "
            "without keeping every frame in memory."
        ),
        (
            '- *limit: GOPs*: PyAV, `thread_type="AUTO"`; for each GOP that holds wanted frames, '
            "seek to its keyframe and decode up to its last wanted frame. "
            "*limit: GOPs, ref frames*: the same, but frames no other frame references "
            "(non-reference B-frames) are skipped unless wanted. The packet index is read "
            "beforehand (untimed)."
        ),
        "- *decord*: `VideoReader(path, ctx=cpu(0)).get_batch(indices).asnumpy()`.",
        (
            "- *torchcodec*: `VideoDecoder(path, dimension_order='NHWC', num_ffmpeg_threads=0, "
            "seek_mode='exact').get_frames_at(indices)` (lmms-eval's reader); left out where it "
            "does not load (see Machine)."
        ),
        (
            "- *m3kit cold*: `VideoDecoder(path).get_frames(indices)`: the GOPs that hold wanted "
            "frames on one decoder thread per usable CPU. *m3kit cold, 1 decoder*: the same with "
            "`workers=1` (one decoder with FFmpeg's own threads, the path before issue 25). "
            "*store cold*: "
            "`FrameStore(empty root).get_frames(path, indices)` (decode, return, write). *warm*: "
            "the same request from a new `FrameStore` on the filled root; it must decode nothing "
            f"(checked). Store image format: {store_format}."
        ),
        (
            "- Check: frames must equal the decode-everything frames (`np.array_equal`), whose "
            "barcodes must show the wanted indices. Where equality is not expected (decord's own "
            "colour conversion, a lossy store), the barcodes are checked and the pixel difference "
            "is reported."
        ),
        "",
        "## Results (median seconds per request)",
        "",
        *table(RESULT_HEADER, result_rows(cases)),
        "",
        "## Ratios",
        "",
        (
            f"Goals: decord / m3kit cold ≥ {GOAL_COLD_VS_DECORD:g}, m3kit cold / limit ≤ "
            f"{GOAL_COLD_VS_LIMIT:g} (the limit is one decoder on the GOPs that hold the wanted "
            f"frames), m3kit cold / warm ≥ {GOAL_COLD_VS_WARM:g}."
        ),
        "",
        *table(RATIO_HEADER, ratio_rows(cases)),
        "",
    ]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--videos",
        default="10,60",
        help="video lengths in minutes, comma-separated (default 10,60)",
    )
    p.add_argument(
        "--quick", action="store_true", help="smoke test: one 1-minute video (overrides --videos)"
    )
    p.add_argument("--repeats", type=int, default=3, help="timed runs per contender (default 3)")
    p.add_argument(
        "--full-decode-repeats",
        type=int,
        default=None,
        help="runs of the decode-everything peer (default: --repeats up to 10 min, 1 beyond)",
    )
    p.add_argument(
        "--cache-dir", type=Path, default=BENCH_DIR / ".cache", help="where videos are cached"
    )
    p.add_argument(
        "--markdown",
        type=Path,
        default=BENCH_DIR / "results" / "frames.md",
        help="Markdown report path (default perf/results/frames.md)",
    )
    p.add_argument(
        "--store-budget-gb", type=float, default=8.0, help="FrameStore budget in GB (default 8)"
    )
    p.add_argument(
        "--store-format",
        choices=("jpeg", "png"),
        default=None,
        help="FrameStore image format (default: the store's own default)",
    )
    args = p.parse_args(argv)
    args.minutes = [1.0] if args.quick else [float(m) for m in args.videos.split(",") if m.strip()]
    if args.repeats < 1 or (args.full_decode_repeats is not None and args.full_decode_repeats < 1):
        p.error("repeats must be at least 1 (the decode-everything frames are the reference)")
    return args


def _full_repeats(args: argparse.Namespace, minutes: float) -> int:
    if args.full_decode_repeats is not None:
        return min(args.full_decode_repeats, args.repeats)
    return args.repeats if minutes <= 10 else 1


def _full_repeats_text(args: argparse.Namespace) -> str:
    return ", ".join(f"{_full_repeats(args, m)} on {m:g} min" for m in args.minutes)


def build_contenders(
    layout: VideoLayout,
    minutes: float,
    args: argparse.Namespace,
    with_decoder: bool,
    stores: StoreRuns | None,
) -> list[Contender]:
    """The contenders in running order; the decode-everything peer first (it is the reference)."""
    path, n = layout.path, args.repeats
    contenders = [
        Contender(FULL, lambda idx: full_decode(path, idx), _full_repeats(args, minutes), True),
        Contender(LIMIT, lambda idx: gop_limit(layout, idx), n, True),
        Contender(LIMIT_REF, lambda idx: gop_limit(layout, idx, skip_nonref=True), n, True),
    ]
    if _version("decord") != "not installed":
        contenders.append(Contender(DECORD, lambda idx: decord_batch(path, idx), n, exact=False))
    if torchcodec_unavailable() is None:
        contenders.append(Contender(TORCHCODEC, lambda idx: torchcodec_batch(path, idx), n,
                                    exact=False))
    if with_decoder:
        contenders += [
            Contender(COLD, lambda idx: m3kit_cold(path, idx), n, exact=True),
            Contender(COLD_ONE, lambda idx: m3kit_cold(path, idx, workers=1), n, exact=True),
        ]
    if stores is not None:
        lossless = args.store_format == "png"
        contenders += [
            Contender(STORE_COLD, lambda idx: stores.cold(path, idx), n, exact=True),
            Contender(WARM, lambda idx: stores.warm(path, idx), n, exact=lossless),
        ]
    return contenders


def m3kit_parts() -> tuple[bool, bool]:
    """Whether m3kit's decoder and its frame store can be benchmarked (both: a full run)."""
    import m3kit.media

    found = [hasattr(m3kit.media, name) for name in ("VideoDecoder", "FrameStore")]
    for name, ok in zip(("VideoDecoder", "FrameStore"), found, strict=True):
        if not ok:
            console.print(f"[bold red]m3kit.media.{name} not available: left out[/bold red]")
    return found[0], found[1]


def bench_video(
    minutes: float, args: argparse.Namespace, run: RunInfo, with_decoder: bool, with_store: bool
) -> tuple[list[Case], tuple[float, Path, str]]:
    path = ensure_video(args.cache_dir, minutes, run.generated)
    layout = scan_layout(path)
    layout_text = check_layout(layout, minutes)
    console.print(f"[green]keyframe check[/green] {path.name}: {layout_text}")
    warm_page_cache(path)
    budget = int(args.store_budget_gb * 1e9)
    stores = StoreRuns(args.cache_dir / "stores", budget, args.store_format) if with_store else None
    try:
        contenders = build_contenders(layout, minutes, args, with_decoder, stores)
        cases = [run_case(minutes, layout, p, contenders, args.repeats) for p in POLICIES]
    finally:
        if stores is not None:
            stores.cleanup()
    return cases, (minutes, path, layout_text)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    run = RunInfo()
    with_decoder, with_store = m3kit_parts()
    cases: list[Case] = []
    videos: list[tuple[float, Path, str]] = []
    for minutes in args.minutes:
        video_cases, video = bench_video(minutes, args, run, with_decoder, with_store)
        cases += video_cases
        videos.append(video)
    run.load_end = os.getloadavg()
    print_tables(cases)
    for key, value in run.lines():
        console.print(f"[dim]{key}: {value}[/dim]")
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(markdown_report(cases, videos, args, run))
    console.print(f"Markdown report written to {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
