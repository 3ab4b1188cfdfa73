"""Frame-sampling benchmark: m3kit against decord and a decode-everything loop.

Generates (once, cached) synthetic 1280x720 H.264 videos with a keyframe every 250 frames, then
samples frames with the ``uniform`` (96 frames) and ``uniform_inner`` (64 frames) policies:

* ``m3kit cold``   -- ``m3kit.media.VideoDecoder(path).get_frames(indices)``, opening included;
* ``decord``       -- ``decord.VideoReader(path, ctx=cpu(0)).get_batch(indices)``, opening included;
* ``full decode``  -- decode every frame with PyAV and keep the wanted ones (lmms-eval's pattern);
* ``limit``        -- decode only the GOPs that hold wanted frames, each from its keyframe up to
                      its last wanted frame: the work any keyframe-seeking decoder must do;
* ``store cold``   -- ``m3kit.media.FrameStore.get_frames`` on an empty store (decode + write);
* ``m3kit warm``   -- the same request again from the filled store (decodes nothing).

Every contender's frames are checked against the decode-everything frames. Medians and ratios
come from one run and are printed as a rich table and written as Markdown (``--markdown``).

Run from the repository root::

    python benchmarks/frames.py                 # 10- and 60-minute videos
    python benchmarks/frames.py --quick         # 1-minute video, smoke test

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

import av
import numpy as np
from PIL import Image
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
try:
    import m3kit  # noqa: F401
except ModuleNotFoundError:  # run from a checkout without `pip install -e .`: use its src/
    sys.path.insert(0, str(REPO_ROOT / "src"))

from m3kit.media.sampling import uniform_indices, uniform_inner_indices

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
    # superfast keeps generation near real time x6 on 2 cores while still using CABAC, B-frames
    # and motion search like real footage; crf 23 is x264's default quality.
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
    slow. Each frame is built from precomputed planes by slicing and one add (a few ms), in
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


def ensure_video(cache_dir: Path, minutes: float) -> Path:
    """Return the cached video of ``minutes`` length, generating it first if missing."""
    path = video_path(cache_dir, minutes)
    if path.exists():
        console.print(f"[dim]using cached {path}[/dim]")
        return path
    cache_dir.mkdir(parents=True, exist_ok=True)
    num_frames = round(minutes * 60 * FPS)
    partial = path.with_suffix(".partial.mp4")  # renamed only when complete: no half-cached file
    start = time.perf_counter()
    write_video(partial, num_frames, f"generating {path.name}")
    elapsed = time.perf_counter() - start
    partial.rename(path)
    size_mb = path.stat().st_size / 1e6
    console.print(
        f"generated {path.name}: {num_frames} frames in {elapsed:.1f} s "
        f"({elapsed / max(minutes, 1e-9):.1f} s per video minute, {num_frames / elapsed:.0f} fps), "
        f"{size_mb:.1f} MB ({size_mb * 8 / (minutes * 60):.2f} Mbit/s)"
    )
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
    return VideoLayout(path=path, pts=pts[order], keyframes=np.flatnonzero(key[order]))


def check_layout(layout: VideoLayout, minutes: float) -> str:
    """Fail unless the video has the expected frame count and a keyframe exactly every GOP."""
    expected_frames = round(minutes * 60 * FPS)
    expected_keys = np.arange(0, expected_frames, GOP)
    if layout.num_frames != expected_frames:
        raise SystemExit(f"{layout.path}: {layout.num_frames} frames, expected {expected_frames}")
    if not np.array_equal(layout.keyframes, expected_keys):
        raise SystemExit(
            f"{layout.path}: keyframes at {layout.keyframes[:10]}..., expected every {GOP}"
        )
    return f"{layout.num_frames} frames, {layout.keyframes.size} keyframes at 0, {GOP}, {2 * GOP}, ... (every {GOP})"


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
    720p (~250 GB of RGB). Here only the wanted frames are converted and kept, and a set replaces
    lmms-eval's ``i in indices`` array scan, so this peer is the pattern at its best.
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


def gop_limit(layout: VideoLayout, indices: Sequence[int]) -> Sample:
    """Decode only what a keyframe-seeking decoder must: per GOP holding wanted frames, seek to
    its keyframe and decode up to its last wanted frame, converting only the wanted frames.

    Reading the packet index (``layout``) is done beforehand and not timed: this is the decode
    work alone, the floor that m3kit's cold time is compared with.
    """
    wanted = sorted(set(indices))
    gop_starts = layout.keyframes[np.searchsorted(layout.keyframes, wanted, side="right") - 1]
    groups: dict[int, list[int]] = {}
    for key, i in zip(gop_starts.tolist(), wanted, strict=True):
        groups.setdefault(key, []).append(i)
    index_of_pts = {int(p): i for i, p in enumerate(layout.pts.tolist())}

    start = time.perf_counter()
    kept: dict[int, np.ndarray] = {}
    decoded = 0
    with av.open(str(layout.path)) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        for key, members in groups.items():
            container.seek(int(layout.pts[key]), stream=stream, backward=True, any_frame=False)
            targets, last = set(members), members[-1]
            for frame in container.decode(stream):
                i = index_of_pts[frame.pts]
                decoded += 1
                if i in targets:
                    kept[i] = frame.to_ndarray(format="rgb24")
                if i >= last:
                    break
    frames = [kept[i] for i in indices]
    return Sample(frames, time.perf_counter() - start, decoded)


def decord_batch(path: Path, indices: Sequence[int]) -> Sample:
    import decord  # optional peer: only needed when it is benchmarked

    start = time.perf_counter()
    reader = decord.VideoReader(str(path), ctx=decord.cpu(0))
    batch = reader.get_batch(list(indices)).asnumpy()
    seconds = time.perf_counter() - start
    return Sample(list(batch), seconds)


def m3kit_cold(path: Path, indices: Sequence[int]) -> Sample:
    from m3kit.media import VideoDecoder

    start = time.perf_counter()
    decoder = VideoDecoder(path)
    frames = decoder.get_frames(list(indices))
    seconds = time.perf_counter() - start
    decoder.close()
    return Sample(list(frames), seconds, decoded=decoder.last_stats.frames)


def _close(obj: object) -> None:
    close = getattr(obj, "close", None)
    if callable(close):
        close()


class StoreRuns:
    """FrameStore contenders for one video: a cold call on an empty store, and warm calls.

    Stores live under the cache directory, not /tmp, so they sit on the same disk as the videos
    (``/tmp`` may be RAM-backed, which would flatter the warm numbers).
    """

    def __init__(self, root: Path, budget_bytes: int) -> None:
        self._root = root
        self._budget = budget_bytes
        self._filled: dict[tuple[str, tuple[int, ...]], Path] = {}

    def cold(self, path: Path, indices: Sequence[int]) -> Sample:
        from m3kit.media import FrameStore

        store_root = self._new_root()
        try:
            start = time.perf_counter()
            store = FrameStore(store_root, self._budget)
            frames = store.get_frames(path, list(indices))
            seconds = time.perf_counter() - start
            _close(store)
        finally:
            shutil.rmtree(store_root, ignore_errors=True)
        return Sample(list(frames), seconds)

    def warm(self, path: Path, indices: Sequence[int]) -> Sample:
        """Serve a request already in the store, from a fresh ``FrameStore`` on its root -- as a
        second evaluation run would -- so in-memory state of the filling call does not help."""
        from m3kit.media import FrameStore

        key = (str(path), tuple(indices))
        if key not in self._filled:  # untimed: the filling call is the store-cold contender's job
            root = self._new_root()
            filler = FrameStore(root, self._budget)
            filler.get_frames(path, list(indices))
            _close(filler)
            self._filled[key] = root
        start = time.perf_counter()
        store = FrameStore(self._filled[key], self._budget)
        frames = store.get_frames(path, list(indices))
        seconds = time.perf_counter() - start
        _close(store)
        return Sample(list(frames), seconds, decoded=None)

    def cleanup(self) -> None:
        shutil.rmtree(self._root, ignore_errors=True)

    def _new_root(self) -> Path:
        self._root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="store-", dir=self._root))


# --------------------------------------------------------------------------------------------
# Running and checking
# --------------------------------------------------------------------------------------------

FULL, LIMIT, DECORD, COLD, STORE_COLD, WARM = (
    "full decode",
    "limit (GOPs only)",
    "decord",
    "m3kit cold",
    "m3kit store cold",
    "m3kit warm",
)


@dataclass
class Contender:
    name: str
    run: Callable[[Sequence[int]], Sample]
    repeats: int
    exact: bool  # must equal the reference frames bit for bit (decord converts colour itself)


@dataclass
class Result:
    name: str
    seconds: list[float] = field(default_factory=list)
    decoded: int | None = None
    check: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)


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
                res.check = "reference; frame-exact (barcodes)"
            else:
                res.check = compare(c, sample.frames, reference, indices)
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
    # Not bit-exact (own colour conversion): still require the right frames, report the colour gap.
    wrong = [i for i, f in zip(indices, frames, strict=True) if read_barcode(f) != i]
    if wrong:
        return f"WRONG FRAMES at {wrong[:5]}"
    diff = max(
        int(np.abs(f.astype(np.int16) - g.astype(np.int16)).max())
        for f, g in zip(frames, reference, strict=True)
    )
    return "= reference" if diff == 0 else f"right frames; max abs diff {diff}"


def _fail(c: Contender, message: str) -> str:
    if c.exact:
        raise SystemExit(f"{c.name}: {message}")
    return message


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------

GOAL_COLD_VS_DECORD = 1.0  # m3kit cold at least as fast as decord
GOAL_COLD_VS_WARM = 20.0  # warm at least 20x faster than cold
RATIOS = (
    # label, numerator, denominator, goal (ratio must be >= goal) or None
    ("decord / m3kit cold", DECORD, COLD, GOAL_COLD_VS_DECORD),
    ("m3kit cold / warm", COLD, WARM, GOAL_COLD_VS_WARM),
    ("store cold / warm", STORE_COLD, WARM, None),
    ("m3kit cold / limit", COLD, LIMIT, None),
    ("full decode / m3kit cold", FULL, COLD, None),
)


def machine_info() -> list[tuple[str, str]]:
    import numpy

    info = [
        ("CPU", _cpu_model()),
        ("CPUs usable", f"{len(os.sched_getaffinity(0))} (os.cpu_count() = {os.cpu_count()})"),
        ("OS", platform.platform()),
        ("Python", platform.python_version()),
        (
            "PyAV",
            f"{av.__version__} (libavcodec {'.'.join(map(str, av.library_versions['libavcodec']))})",
        ),
        ("decord", _version("decord")),
        ("numpy", numpy.__version__),
        ("m3kit", _version("m3kit")),
        ("git commit", _git_commit()),
        ("date", time.strftime("%Y-%m-%d %H:%M:%S %Z")),
    ]
    return info


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _version(module: str) -> str:
    try:
        return str(__import__(module).__version__)
    except Exception:  # noqa: BLE001 -- any failure just means "not available"
        return "not installed"


def _git_commit() -> str:
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


def _fmt_ratio(x: float | None, goal: float | None = None) -> str:
    if x is None:
        return "—"
    text = f"{x:.1f}×" if x >= 10 else f"{x:.2f}×"
    if goal is not None:
        text += " ✓" if x >= goal else " ✗"
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
        + [_fmt_ratio(c.ratio(num, den), goal) for _, num, den, goal in RATIOS]
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


def markdown_report(
    cases: list[Case], videos: list[tuple[float, Path, str]], args: argparse.Namespace
) -> str:
    def table(header: list[str], rows: list[list[str]]) -> list[str]:
        return [
            "| " + " | ".join(header) + " |",
            "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows),
        ]

    lines = [
        "# Frame-sampling benchmark",
        "",
        "Produced by `benchmarks/frames.py`; all numbers are from one run.",
        "",
        "Command:",
        "",
        "```",
        shlex.join([Path(sys.executable).name, *sys.argv]),
        "```",
        "",
        "## Machine",
        "",
        *(f"- {k}: {v}" for k, v in machine_info()),
        "",
        "## Videos",
        "",
        (
            f"Synthetic {WIDTH}×{HEIGHT}, {FPS} fps, yuv420p, H.264 (libx264 `{ENCODER_OPTIONS['x264-params']}`, "
            f"preset {ENCODER_OPTIONS['preset']}, crf {ENCODER_OPTIONS['crf']})."
        ),
        "",
        *(
            f"- {m:g} min: `{p.name}`, {p.stat().st_size / 1e6:.1f} MB; {layout}"
            for m, p, layout in videos
        ),
        "",
        "## Method",
        "",
        f"- Policies: `uniform` {POLICIES[0].n} frames (plus the last frame), `uniform_inner` {POLICIES[1].n} frames.",
        (
            f"- Each contender runs {args.repeats} times per video and policy (decode-everything: "
            f"{_full_repeats_text(args)}), interleaved; the table shows the median."
        ),
        (
            "- Cold times include opening the file; the video is read once beforehand so every contender "
            "finds it in the OS page cache."
        ),
        (
            '- *full decode*: PyAV, `thread_type="AUTO"`, decode from the start up to the last wanted frame, '
            "converting only wanted frames (lmms-eval's PyAV reader pattern, without keeping all frames)."
        ),
        (
            '- *limit*: PyAV, `thread_type="AUTO"`, for each GOP holding wanted frames seek to its keyframe and '
            "decode up to its last wanted frame; packet index read beforehand (untimed)."
        ),
        "- *decord*: `VideoReader(path, ctx=cpu(0)).get_batch(indices).asnumpy()`.",
        (
            "- *m3kit cold*: `VideoDecoder(path).get_frames(indices)`; *store cold*: `FrameStore` on an empty root; "
            "*warm*: the same request from a new `FrameStore` on the filled root."
        ),
        (
            "- Check: every contender's frames must equal the decode-everything frames (`np.array_equal`); decord "
            "converts colour itself, so for it the frame indices are checked (a barcode in each frame) and the "
            "largest pixel difference is reported."
        ),
        "",
        "## Results (median seconds per request)",
        "",
        *table(RESULT_HEADER, result_rows(cases)),
        "",
        "## Ratios",
        "",
        (
            f"Goals: decord / m3kit cold ≥ {GOAL_COLD_VS_DECORD:g}, m3kit cold / warm ≥ {GOAL_COLD_VS_WARM:g}. "
            "m3kit cold / limit says how far m3kit is from decoding only the GOPs that hold the wanted frames."
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
        help="runs of the decode-everything peer (default: --repeats up to 10-minute videos, 1 beyond)",
    )
    p.add_argument(
        "--cache-dir", type=Path, default=BENCH_DIR / ".cache", help="where videos are cached"
    )
    p.add_argument(
        "--markdown",
        type=Path,
        default=BENCH_DIR / "results" / "frames.md",
        help="Markdown report path",
    )
    p.add_argument(
        "--store-budget-gb", type=float, default=8.0, help="FrameStore budget in GB (default 8)"
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
    path = layout.path
    contenders = [
        Contender(
            FULL, lambda idx: full_decode(path, idx), _full_repeats(args, minutes), exact=True
        ),
        Contender(LIMIT, lambda idx: gop_limit(layout, idx), args.repeats, exact=True),
    ]
    if _version("decord") != "not installed":
        contenders.append(
            Contender(DECORD, lambda idx: decord_batch(path, idx), args.repeats, exact=False)
        )
    if with_decoder:
        contenders.append(
            Contender(COLD, lambda idx: m3kit_cold(path, idx), args.repeats, exact=True)
        )
    if stores is not None:
        contenders += [
            Contender(STORE_COLD, lambda idx: stores.cold(path, idx), args.repeats, exact=True),
            Contender(WARM, lambda idx: stores.warm(path, idx), args.repeats, exact=True),
        ]
    return contenders


def m3kit_parts() -> tuple[bool, bool]:
    """Whether m3kit's decoder and its frame store can be benchmarked (both: a full run)."""
    found = []
    for name in ("VideoDecoder", "FrameStore"):
        try:
            getattr(__import__("m3kit.media", fromlist=[name]), name)
            found.append(True)
        except (ImportError, AttributeError) as exc:
            console.print(f"[bold red]m3kit.media.{name} not available, left out: {exc}[/bold red]")
            found.append(False)
    return found[0], found[1]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    with_decoder, with_store = m3kit_parts()
    cases: list[Case] = []
    videos: list[tuple[float, Path, str]] = []
    for minutes in args.minutes:
        path = ensure_video(args.cache_dir, minutes)
        layout = scan_layout(path)
        layout_text = check_layout(layout, minutes)
        console.print(f"[green]keyframe check[/green] {path.name}: {layout_text}")
        videos.append((minutes, path, layout_text))
        warm_page_cache(path)
        stores = (
            StoreRuns(args.cache_dir / "stores", int(args.store_budget_gb * 1e9))
            if with_store
            else None
        )
        try:
            contenders = build_contenders(layout, minutes, args, with_decoder, stores)
            for policy in POLICIES:
                cases.append(run_case(minutes, layout, policy, contenders, args.repeats))
        finally:
            if stores is not None:
                stores.cleanup()
    print_tables(cases)
    args.markdown.parent.mkdir(parents=True, exist_ok=True)
    args.markdown.write_text(markdown_report(cases, videos, args))
    console.print(f"Markdown report written to {args.markdown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
