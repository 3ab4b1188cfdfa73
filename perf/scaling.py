"""Where parallelism pays: perception throughput (decode, keyframes, OCR and detection through
``run_jobs``, then the texts' embeddings) in process and on Ray with 1, 2, 4… workers, and the
parallel video decoder with 1, 2, 4… decoders, in one run, with a cost model fitted to the
figures and what it predicts for 16 and 64 cores.

    nice -n 10 python perf/scaling.py \\
        --video perf/.cache/synthetic_1280x720_25fps_gop250_10min_v1.mp4 --out /tmp/scaling.md

Perception: ``--frames`` generated 1280x720 JPEG frames at 1 fps (what the frame store hands a
memory), the on-screen text and the background changing every ``--scene`` frames (so a quarter
of the frames are keyframes by default: OCR and detection run on those), cut into jobs of
``--job-frames`` frames (a job is the unit a Ray worker takes). Every configuration runs twice,
on the first quarter of the frames and on all of them, each time with an empty OCR cache of its
own and, on Ray, a local Ray started for that run alone and shut down after it: each of the
two points pays the same cold start (worker processes, imports, model loads), so the
difference between them is per-frame work only. ``ray.init`` itself is timed apart and left out
of the run's wall time (a user's process pays it once, whatever it runs). Ray is told
``num_cpus = max(workers, usable CPUs)``: every worker asks for one CPU, and without that a
local Ray on 2 cores never places a third worker, so the run would wait forever.

Decoder: ``VideoDecoder(video, workers=W).get_frames(uniform_indices(n, --decode-frames))``,
a fresh decoder per run (its helpers cold), the file in the page cache, the median of
``--repeats`` runs; the frames are compared across worker counts.

Every figure is printed as JSON on stdout (progress goes to stderr) and written as Markdown to
``--out``. Times are wall seconds on this machine; CPU-seconds are the machine's busy time
(/proc/stat, all processes) during a run, so they are only clean on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shlex
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

# the frame-sampling benchmark beside this script: the machine description both report
from frames import cpu_model, git_commit
from PIL import Image, ImageDraw, ImageFont

from m3kit.media import VideoDecoder
from m3kit.media.budget import usable_cpus
from m3kit.media.sampling import uniform_indices
from m3kit.perception.pipeline import (
    Executor,
    FrameInput,
    JobResult,
    PerceptionConfig,
    PerceptionJob,
    run_jobs,
)

REPO_ROOT = Path(__file__).resolve().parents[1]
WORDS = ("kitchen", "garage", "office", "garden", "bedroom", "station", "market", "library")
# Background grey per scene: far enough apart that each scene's first frame is a keyframe
# (the picker's mean thumbnail difference is over its 0.08 threshold between any two).
BACKGROUNDS = (30, 110, 190, 70, 150, 230)
SMALL_SHARE = 4  # the small input is the first 1/SMALL_SHARE of the frames
PREDICTED_CORES = (16, 64)
HOUR_FRAMES = 3600  # one hour of video at the 1 fps the memories perceive
PROGRESS_EVERY_S = 10.0


# -- records -------------------------------------------------------------------------------------


@dataclass
class PerceptionRun:
    """One timed ``run_jobs`` call."""

    config: str  # "inprocess", "ray-2", …
    executor: Executor
    workers: int  # Ray actors; 1 for in process (one job after another)
    frames: int
    jobs: int
    keyframes: int
    ocr_images: int
    skipped: int
    wall_s: float
    frames_per_s: float
    cpu_s: float  # machine busy CPU-seconds during the run (all processes)
    ray_init_s: float | None  # ray.init before the run (not in wall_s)
    stage_s: dict[str, float]  # per stage, summed over jobs, wall time inside the workers


@dataclass
class LinearFit:
    """wall = startup + frames x wall_per_frame, through a configuration's two points;
    effective parallelism = CPU-seconds per frame / wall seconds per frame."""

    config: str
    startup_s: float
    wall_s_per_frame: float
    cpu_s_per_frame: float
    effective_parallelism: float
    frames_per_s_asymptotic: float


@dataclass
class EmbedRun:
    """The OCR texts of the large input embedded in process (MiniLM, model loaded before)."""

    texts: int
    frames: int
    wall_s: float
    s_per_frame: float


@dataclass
class DecodeRun:
    workers: int
    seconds: list[float]
    median_s: float
    stats_workers: int  # decoder.last_stats.workers of the last run
    stats_frames: int  # decoder.last_stats.frames of the last run
    frames_identical: bool  # the same pixels as with the first worker count


@dataclass
class Prediction:
    cores: int
    frames: int
    jobs: int
    perception_s: float
    perception_frames_per_s: float
    with_embedding_s: float
    with_embedding_frames_per_s: float


@dataclass
class CostModel:
    basis: str  # which fit the prediction rests on
    startup_s: float
    cpu_s_per_frame: float
    embed_s_per_frame: float
    inprocess_startup_s: float
    inprocess_wall_s_per_frame: float
    predictions: list[Prediction]
    break_even_frames: dict[int, float | None]  # cores -> frames where Ray beats in process


@dataclass
class Report:
    command: str
    machine: dict[str, str]
    load_start: tuple[float, float, float]
    load_end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    perception: list[PerceptionRun] = field(default_factory=list)
    ocr_identical: bool = True
    percepts_identical: bool = True
    differing: list[str] = field(default_factory=list)
    fits: list[LinearFit] = field(default_factory=list)
    embedding: EmbedRun | None = None
    decode: list[DecodeRun] = field(default_factory=list)
    decode_video: str | None = None
    decode_frames: int = 0
    model: CostModel | None = None
    notes: list[str] = field(default_factory=list)


# -- inputs --------------------------------------------------------------------------------------


def write_frames(folder: Path, count: int, scene: int) -> list[FrameInput]:
    """``count`` 1280x720 JPEG frames at 1 fps; text, background and a coloured box change
    every ``scene`` frames, small noise-free text (the frame number) on every frame."""
    folder.mkdir(parents=True, exist_ok=True)
    big, small = ImageFont.load_default(size=48), ImageFont.load_default(size=20)
    frames = []
    for t in range(count):
        s = t // scene
        path = folder / f"{t:06d}.jpg"
        if not path.exists():
            grey = BACKGROUNDS[s % len(BACKGROUNDS)]
            ink = (255, 255, 255) if grey < 128 else (0, 0, 0)
            image = Image.new("RGB", (1280, 720), (grey, grey, grey))
            draw = ImageDraw.Draw(image)
            draw.text((80, 560), f"{WORDS[s % len(WORDS)].upper()} ROOM {100 + s}", fill=ink,
                      font=big)
            draw.text((1100, 40), f"{t:05d}", fill=ink, font=small)
            x = 200 + (s * 137) % 800
            draw.rectangle((x, 200, x + 160, 360),
                           fill=((200, 40, 40), (40, 40, 200), (40, 180, 40))[s % 3])
            image.save(path, quality=90)
        frames.append(FrameInput(id=f"frame-{t:06d}", path=str(path), time=float(t)))
    return frames


def make_jobs(frames: Sequence[FrameInput], job_frames: int) -> list[PerceptionJob]:
    return [PerceptionJob(id=f"job-{n // job_frames:04d}", frames=tuple(frames[n:n + job_frames]))
            for n in range(0, len(frames), job_frames)]


# -- measuring -----------------------------------------------------------------------------------


class Progress:
    """Lines on stderr, flushed: one per configuration, one per finished job at most every
    ``PROGRESS_EVERY_S`` seconds, and a heartbeat (a daemon thread) when nothing was said for
    that long (Ray workers loading their models finish no job for a while), so a pipe never
    goes quiet for long."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.last = self.started
        self.label = "start"
        self._lock = threading.Lock()
        threading.Thread(target=self._heartbeat, daemon=True).start()

    def say(self, message: str) -> None:
        with self._lock:
            self.last = time.perf_counter()
            print(f"[{self.last - self.started:7.1f}s] {message}", file=sys.stderr, flush=True)

    def jobs(self, done: int, total: int) -> None:
        if time.perf_counter() - self.last >= PROGRESS_EVERY_S:
            self.say(f"  {self.label}: {done}/{total} jobs")

    def _heartbeat(self) -> None:
        while True:
            time.sleep(1.0)
            if time.perf_counter() - self.last >= PROGRESS_EVERY_S:
                self.say(f"  {self.label}: still running")


def busy_cpu_seconds() -> float:
    """The machine's non-idle CPU time since boot (/proc/stat, all CPUs, all processes)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(v) for v in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def warm_up_inprocess(frame: FrameInput, work: Path) -> None:
    """Import and run the perceivers once, untimed, with a throwaway cache: Python's imports
    and the model files' first read are paid once per process, not by the first in-process
    configuration (a Ray worker is a fresh process and pays them in every run)."""
    os.environ["M3KIT_CACHE_DIR"] = str(work / "cache-warm-up")
    run_jobs([PerceptionJob(id="warm-up", frames=(frame,))], PerceptionConfig())
    shutil.rmtree(work / "cache-warm-up", ignore_errors=True)


def run_point(config: str, executor: Executor, workers: int, jobs: list[PerceptionJob],
              work: Path, progress: Progress) -> tuple[PerceptionRun, list[JobResult]]:
    """One cold run: an empty OCR cache of its own, and on Ray a local Ray for this run."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    os.environ["M3KIT_CACHE_DIR"] = str(cache)  # read when the perceivers are built
    frames = sum(len(job.frames) for job in jobs)
    progress.label = f"{config} {frames} frames"
    ray_init_s: float | None = None
    if executor == "ray":
        import ray

        start = time.perf_counter()
        ray.init(num_cpus=max(workers, usable_cpus()), include_dashboard=False,
                 log_to_driver=False, runtime_env={"env_vars": {"M3KIT_CACHE_DIR": str(cache)}})
        ray_init_s = time.perf_counter() - start
    try:
        cpu, start = busy_cpu_seconds(), time.perf_counter()
        results = run_jobs(jobs, PerceptionConfig(), executor=executor, workers=workers,
                           progress=progress.jobs)
        wall, cpu = time.perf_counter() - start, busy_cpu_seconds() - cpu
    finally:
        if executor == "ray":
            ray.shutdown()
        shutil.rmtree(cache, ignore_errors=True)
    stages: dict[str, float] = {}
    for result in results:
        for stage, seconds in result.cost.seconds.items():
            stages[stage] = stages.get(stage, 0.0) + seconds
    run = PerceptionRun(
        config=config, executor=executor, workers=workers, frames=frames, jobs=len(jobs),
        keyframes=sum(r.cost.keyframes for r in results),
        ocr_images=sum(r.cost.ocr_images for r in results),
        skipped=sum(len(r.skipped) for r in results), wall_s=wall, frames_per_s=frames / wall,
        cpu_s=cpu, ray_init_s=ray_init_s, stage_s=stages)
    init = "" if ray_init_s is None else f" (ray.init {ray_init_s:.1f}s, not counted)"
    progress.say(f"{config:>10} {frames:5d} frames: {wall:7.2f}s wall, "
                 f"{run.frames_per_s:6.2f} frames/s, {cpu:7.1f} CPU-s{init}")
    return run, results


def ocr_by_frame(results: Sequence[JobResult]) -> dict[str, str]:
    return {p.id: p.ocr for r in results for p in r.frames}


def percepts_digest(results: Sequence[JobResult]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for result in results:
        for percept in result.frames:
            digest.update(percept.model_dump_json().encode())
    return digest.hexdigest()


def fit(small: PerceptionRun, large: PerceptionRun) -> LinearFit:
    """The line through the two points of one configuration."""
    extra = large.frames - small.frames
    per_frame = (large.wall_s - small.wall_s) / extra
    cpu_per_frame = (large.cpu_s - small.cpu_s) / extra
    return LinearFit(
        config=large.config, startup_s=small.wall_s - small.frames * per_frame,
        wall_s_per_frame=per_frame, cpu_s_per_frame=cpu_per_frame,
        effective_parallelism=cpu_per_frame / per_frame if per_frame > 0 else math.nan,
        frames_per_s_asymptotic=1.0 / per_frame if per_frame > 0 else math.nan)


def embed(texts: list[str], frames: int) -> EmbedRun:
    from m3kit.perception import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm"])  # the model load is start-up, not per-frame work
    start = time.perf_counter()
    embedder.embed(texts)
    wall = time.perf_counter() - start
    return EmbedRun(texts=len(texts), frames=frames, wall_s=wall, s_per_frame=wall / frames)


def frames_digest(frames: Sequence[np.ndarray]) -> str:
    digest = hashlib.blake2b(digest_size=16)
    for frame in frames:
        digest.update(str(frame.shape).encode())
        digest.update(np.ascontiguousarray(frame).data)
    return digest.hexdigest()


def decode_runs(video: Path, workers: Sequence[int], count: int, repeats: int,
                progress: Progress) -> list[DecodeRun]:
    """Each worker count ``repeats`` times, interleaved (a drift in the machine's load spreads
    over all of them); the file is read once first so every run finds it in the page cache."""
    with video.open("rb") as f:
        while f.read(1 << 24):
            pass
    seconds: dict[int, list[float]] = {w: [] for w in workers}
    stats: dict[int, tuple[int, int]] = {}
    digests: dict[int, set[str]] = {w: set() for w in workers}
    for repeat in range(repeats):
        for w in workers:
            progress.label = f"decode workers={w} run {repeat + 1}"
            with VideoDecoder(video, workers=w) as decoder:
                indices = uniform_indices(len(decoder), count)
                start = time.perf_counter()
                frames = decoder.get_frames(indices)
                seconds[w].append(time.perf_counter() - start)
                stats[w] = (decoder.last_stats.workers, decoder.last_stats.frames)
            digests[w].add(frames_digest(frames))
            del frames
            progress.say(f"decode workers={w} run {repeat + 1}/{repeats}: "
                         f"{seconds[w][-1]:.3f}s ({stats[w][1]} frames decoded, "
                         f"{stats[w][0]} decoders)")
    reference = digests[workers[0]]
    return [DecodeRun(workers=w, seconds=seconds[w], median_s=statistics.median(seconds[w]),
                      stats_workers=stats[w][0], stats_frames=stats[w][1],
                      frames_identical=len(reference) == 1 and digests[w] == reference)
            for w in workers]


# -- the cost model ------------------------------------------------------------------------------


def cost_model(fits: Sequence[LinearFit], embedding: EmbedRun, frames: int,
               job_frames: int) -> CostModel:
    """wall(N cores, F frames) = S + F x c / min(N, jobs) + F x e, Ray with N workers.

    S and c come from the Ray fit with the fewest workers (one actor's cold start and per-frame
    CPU: what each of N actors does on its own core, starting together); e is the embedding,
    done after perception in the driver, so it does not shrink with N."""
    ray_fits = [f for f in fits if f.config.startswith("ray-")]
    base = min(ray_fits, key=lambda f: int(f.config.split("-")[1]))
    inproc = next(f for f in fits if f.config == "inprocess")
    e = embedding.s_per_frame
    predictions = []
    for cores in PREDICTED_CORES:
        for count in (frames, HOUR_FRAMES):
            jobs = math.ceil(count / job_frames)
            perception = base.startup_s + count * base.cpu_s_per_frame / min(cores, jobs)
            total = perception + count * e
            predictions.append(Prediction(
                cores=cores, frames=count, jobs=jobs, perception_s=perception,
                perception_frames_per_s=count / perception, with_embedding_s=total,
                with_embedding_frames_per_s=count / total))
    break_even: dict[int, float | None] = {}
    for cores in PREDICTED_CORES:
        gain = inproc.wall_s_per_frame - base.cpu_s_per_frame / cores
        extra = base.startup_s - inproc.startup_s
        break_even[cores] = max(0.0, extra / gain) if gain > 0 else None
    return CostModel(
        basis=base.config, startup_s=base.startup_s, cpu_s_per_frame=base.cpu_s_per_frame,
        embed_s_per_frame=e, inprocess_startup_s=inproc.startup_s,
        inprocess_wall_s_per_frame=inproc.wall_s_per_frame, predictions=predictions,
        break_even_frames=break_even)


# -- the machine ---------------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    import ray

    return {
        "CPU": cpu_model(),
        "CPUs usable": f"{usable_cpus()} (os.cpu_count() = {os.cpu_count()})",
        "OS": platform.platform(),
        "Python": platform.python_version(),
        "ray": ray.__version__,
        "git commit": git_commit(),
    }


# -- the report ----------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|",
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def _n(x: float | None, digits: int = 2) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:.{digits}f}"


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def markdown(report: Report, args: argparse.Namespace) -> str:
    def load(x: tuple[float, float, float]) -> str:
        return " / ".join(f"{v:.2f}" for v in x)

    cores = usable_cpus()
    lines = ["# Scaling: perception on Ray and the parallel decoder", "",
             f"Command: `{report.command}`", ""]
    lines += _table(["", ""], [[k, v] for k, v in report.machine.items()] + [
        ["load average (1/5/15 min) at start", load(report.load_start)],
        ["load average (1/5/15 min) at end", load(report.load_end)]])
    lines += ["## Perception throughput", "",
              f"`run_jobs(jobs, PerceptionConfig(), executor=…, workers=…)` on {args.frames} "
              f"generated 1280x720 JPEG frames (text changes every {args.scene} frames), "
              f"jobs of {args.job_frames} frames, and on the first 1/{SMALL_SHARE} of them. "
              "Each run cold: its own empty OCR cache; on Ray a local Ray started for the run "
              "(`ray.init` timed apart, not in the wall time) and shut down after it. "
              "CPU-s: the machine's busy CPU-seconds during the run (all processes).", ""]
    lines += _table(
        ["config", "workers", "frames", "jobs", "keyframes", "wall s", "frames/s", "CPU-s",
         "ray.init s", "OCR s (in workers)"],
        [[r.config, str(r.workers), str(r.frames), str(r.jobs), str(r.keyframes), _n(r.wall_s),
          _n(r.frames_per_s), _n(r.cpu_s, 1), _n(r.ray_init_s), _n(r.stage_s.get("ocr"), 1)]
         for r in report.perception])
    same = "identical" if report.ocr_identical else "DIFFERENT: " + ", ".join(report.differing)
    whole = "identical" if report.percepts_identical else "different"
    lines += [f"OCR text per frame across executors: **{same}** "
              f"(whole percepts, detections included: {whole}).", ""]
    lines += ["Fit per configuration, through its two points: "
              "wall = start-up + frames × wall-s/frame; effective parallelism = "
              "CPU-s/frame ÷ wall-s/frame.", ""]
    inproc = next(f for f in report.fits if f.config == "inprocess")
    lines += _table(
        ["config", "start-up s", "wall-s/frame", "CPU-s/frame", "effective parallelism",
         "frames/s (start-up amortised)", "vs in process (per frame)"],
        [[f.config, _n(f.startup_s), _n(f.wall_s_per_frame, 4), _n(f.cpu_s_per_frame, 4),
          _n(f.effective_parallelism), _n(f.frames_per_s_asymptotic),
          _n(_ratio(inproc.wall_s_per_frame, f.wall_s_per_frame))] for f in report.fits])
    if report.embedding is not None:
        e = report.embedding
        lines += [f"Embedding (MiniLM, in process, after perception, model loaded before): "
                  f"{e.texts} OCR texts of {e.frames} frames in {_n(e.wall_s)} s = "
                  f"{_n(e.s_per_frame * 1000, 2)} ms per frame.", ""]
    if report.decode:
        lines += ["## Parallel decoder", "",
                  f"`VideoDecoder(video, workers=W).get_frames(uniform_indices(n, "
                  f"{report.decode_frames}))` on `{report.decode_video}`, a fresh decoder per "
                  f"run, the file in the page cache; median of {args.repeats} runs.", ""]
        one = report.decode[0].median_s
        lines += _table(
            ["workers", "median s", f"speed-up vs {report.decode[0].workers}", "runs (s)",
             "last_stats.workers", "last_stats.frames", "frames identical"],
            [[str(d.workers), _n(d.median_s, 3), _n(_ratio(one, d.median_s)),
              ", ".join(_n(s, 3) for s in d.seconds), str(d.stats_workers),
              str(d.stats_frames), "yes" if d.frames_identical else "NO"]
             for d in report.decode])
    if report.model is not None:
        m = report.model
        lines += ["## Cost model (a model prediction from "
                  f"{cores}-core data, not a measurement)", "",
                  "Ray with N workers on N cores, F frames in jobs of "
                  f"{args.job_frames}: wall(N, F) = S + F × c / min(N, jobs) + F × e, with "
                  f"S = {_n(m.startup_s)} s (start-up of `{m.basis}`: one actor's cold start; "
                  "N actors start together, one per core), "
                  f"c = {_n(m.cpu_s_per_frame, 4)} CPU-s per frame (`{m.basis}`), "
                  f"e = {_n(m.embed_s_per_frame, 4)} s per frame (embedding in the driver, "
                  "after perception: it does not shrink with N). It assumes the per-frame CPU "
                  "work divides perfectly over cores (no memory-bandwidth or ONNX thread "
                  "contention), so it is a lower bound on the wall time.", ""]
        lines += _table(
            ["cores = workers", "frames", "jobs", "perception s", "perception frames/s",
             "with embedding s", "with embedding frames/s"],
            [[str(p.cores), str(p.frames), str(p.jobs), _n(p.perception_s),
              _n(p.perception_frames_per_s), _n(p.with_embedding_s),
              _n(p.with_embedding_frames_per_s)] for p in m.predictions])
        for n, frames in m.break_even_frames.items():
            lines.append(f"- {n} cores: Ray beats in process (start-up "
                         f"{_n(m.inprocess_startup_s)} s, {_n(m.inprocess_wall_s_per_frame, 4)}"
                         " wall-s/frame, kept as measured here) from "
                         + ("never" if frames is None else f"{frames:.0f} frames on") + ".")
        lines.append("")
    if report.notes:
        lines += ["## Notes", "", *(f"- {note}" for note in report.notes), ""]
    return "\n".join(lines)


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    def counts(text: str) -> list[int]:
        values = [int(v) for v in text.split(",") if v.strip()]
        if not values or min(values) < 1:
            raise argparse.ArgumentTypeError(f"want positive integers like 1,2,4, got {text!r}")
        return values

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=256,
                        help="frames of the large input (the small one is a quarter)")
    parser.add_argument("--scene", type=int, default=4,
                        help="frames per on-screen text: one keyframe each")
    parser.add_argument("--job-frames", type=int, default=16,
                        help="frames per perception job (the unit a Ray worker takes)")
    parser.add_argument("--workers", type=counts, default=[1, 2, 4],
                        help="Ray workers and decoder workers, comma-separated")
    parser.add_argument("--video", type=Path, default=None,
                        help="video for the decoder figures (left out: no decoder figures)")
    parser.add_argument("--decode-frames", type=int, default=96)
    parser.add_argument("--repeats", type=int, default=3, help="decoder runs per worker count")
    parser.add_argument("--skip-perception", action="store_true")
    parser.add_argument("--work", type=Path, default=None,
                        help="folder for the frames and caches (default: a new temporary one)")
    parser.add_argument("--out", type=Path, default=None, help="Markdown report")
    args = parser.parse_args(argv)
    if args.frames // SMALL_SHARE < 1 or args.scene < 1 or args.job_frames < 1:
        parser.error("--frames, --scene and --job-frames must leave a non-empty small input")
    return args


def measure_perception(args: argparse.Namespace, report: Report, work: Path,
                       progress: Progress) -> None:
    frames = write_frames(work / "frames", args.frames, args.scene)
    small = make_jobs(frames[:args.frames // SMALL_SHARE], args.job_frames)
    large = make_jobs(frames, args.job_frames)
    progress.say(f"{len(frames)} frames ready ({len(large)} jobs; small input "
                 f"{args.frames // SMALL_SHARE} frames, {len(small)} jobs)")
    warm_up_inprocess(frames[0], work)
    configs: list[tuple[str, Executor, int]] = [("inprocess", "inprocess", 1)]
    configs += [(f"ray-{w}", "ray", w) for w in args.workers]
    reference: dict[int, tuple[dict[str, str], str]] = {}
    texts: list[str] = []
    for config, executor, workers in configs:
        points = []
        for jobs in (small, large):
            run, results = run_point(config, executor, workers, jobs, work, progress)
            report.perception.append(run)
            points.append(run)
            ocr, digest = ocr_by_frame(results), percepts_digest(results)
            first = reference.setdefault(run.frames, (ocr, digest))
            if ocr != first[0]:
                report.ocr_identical = False
                report.differing.append(f"{config} ({run.frames} frames)")
            report.percepts_identical &= digest == first[1]
            if jobs is large and executor == "inprocess":
                texts = [text for text in ocr.values() if text]
        report.fits.append(fit(*points))
    progress.label = "embedding"
    report.embedding = embed(texts, len(frames))
    progress.say(f"embedding: {len(texts)} texts in {report.embedding.wall_s:.2f}s")
    report.model = cost_model(report.fits, report.embedding, args.frames, args.job_frames)
    cores = usable_cpus()
    over = [w for w in args.workers if w > cores]
    if over:
        report.notes.append(
            f"This machine has {cores} usable CPUs: Ray with {', '.join(map(str, over))} "
            f"workers is oversubscribed (Ray told num_cpus = workers so every actor is placed; "
            f"they share {cores} cores). Those rows show what oversubscription costs, "
            "not scaling.")
    if len(small) < max(args.workers):
        report.notes.append(f"The small input has {len(small)} jobs, fewer than "
                            f"{max(args.workers)} workers: its point under-uses them.")
    report.notes.append(
        "In process, RapidOCR's ONNX sessions and the embedder's torch use several threads of "
        "their own, so 'in process' is not one core: see its effective parallelism.")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    progress = Progress()
    report = Report(command=shlex.join(["python", *sys.argv]), machine=machine_info(),
                    load_start=os.getloadavg())
    progress.say(f"load average at start: {report.load_start}")
    work = args.work or Path(tempfile.mkdtemp(prefix="m3kit-scaling-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not args.skip_perception:
            measure_perception(args, report, work, progress)
        if args.video is not None:
            report.decode_video, report.decode_frames = str(args.video), args.decode_frames
            report.decode = decode_runs(args.video, args.workers, args.decode_frames,
                                        args.repeats, progress)
            if not all(d.frames_identical for d in report.decode):
                report.notes.append("The decoder's frames DIFFER across worker counts.")
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    report.load_end = os.getloadavg()
    print(json.dumps(asdict(report), indent=1))
    if args.out is not None:
        args.out.write_text(markdown(report, args))
        progress.say(f"wrote {args.out}")
    ok = report.ocr_identical and all(d.frames_identical for d in report.decode)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
