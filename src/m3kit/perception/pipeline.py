"""The perception pipeline: decode, keyframes, OCR, detection and speech over many jobs, bounded,
with a progress callback and a cost record; in-process (the default) or as Ray tasks.

A *job* is a stretch of one video stream (a Video-RAG shard, an EgoButler day): its frames (image
files on the stream's clock) and, optionally, the audio file to transcribe. Its result holds one
``FramePercept`` per frame (keyframe or not, what OCR read and what the detector saw on
keyframes), the speech segments, what was skipped (a frame that cannot be decoded, a detector that
failed on a frame, a video with no audio), and what the work cost.

    results = run_jobs(jobs, PerceptionConfig(), executor="ray", workers=2)

``executor="ray"`` runs each job in a Ray actor (``workers`` of them, each loading the models
once) on the cluster at ``RAY_ADDRESS``, else a local one started here; the in-process executor
runs the same ``perceive`` function in this process. Both give the same results: the memories'
stored indexes, built from them, are the hand-off between the two.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import M3kitError, MediaError
from m3kit.perception.base import SpeechRecognizer, TextReader, TranscriptSegment, lines_text
from m3kit.perception.detect import Detection, ObjectDetector
from m3kit.schema.skipped import SkippedRecord

Executor = Literal["inprocess", "ray"]
EXECUTORS: tuple[Executor, ...] = ("inprocess", "ray")
DetectorName = Literal["color-regions", "none"]
SpeechName = Literal["whisper", "none"]
# Frames decoded at once inside a job: bounds the pixels held in memory (720p RGB: 2.7 MB each).
FRAME_BATCH = 16


class PerceptionConfig(BaseModel):
    """Which perception runs and how: everything that changes a job's result (part of the
    stored index's address). Named models only, so a Ray worker can build them itself."""

    model_config = ConfigDict(frozen=True)

    ocr: bool = True
    detector: DetectorName = "color-regions"
    speech: SpeechName = "whisper"
    keyframe_threshold: float = 0.08
    keyframe_max_gap: float | None = 60.0


class FrameInput(BaseModel):
    """One frame of a job: its event id, its image file, its time on the stream's clock."""

    model_config = ConfigDict(frozen=True)

    id: str
    path: str
    time: float


class PerceptionJob(BaseModel):
    """A stretch of one stream: frames in time order and, when ``audio`` is given, the file whose
    speech inside ``audio_span`` (seconds on the file's clock) belongs to it; ``audio_offset``
    puts the file's clock on the stream's."""

    model_config = ConfigDict(frozen=True)

    id: str
    frames: tuple[FrameInput, ...] = ()
    audio: str | None = None
    audio_span: tuple[float, float] | None = None
    audio_offset: float = 0.0


class FramePercept(BaseModel):
    """What perception made of one frame; ``ocr`` and ``detections`` only on keyframes."""

    model_config = ConfigDict(frozen=True)

    id: str
    time: float
    keyframe: bool
    width: int = 0
    height: int = 0
    ocr: str = ""
    detections: tuple[Detection, ...] = ()


class PerceptionCost(BaseModel):
    """What perception did and how long each stage took (seconds, wall clock in the worker)."""

    frames_decoded: int = 0
    keyframes: int = 0
    ocr_images: int = 0
    detector_images: int = 0
    audio_seconds: float = 0.0
    errors: int = 0
    seconds: dict[str, float] = Field(default_factory=dict)

    def add(self, other: PerceptionCost) -> PerceptionCost:
        stages = {**self.seconds}
        for stage, s in other.seconds.items():
            stages[stage] = stages.get(stage, 0.0) + s
        return PerceptionCost(
            frames_decoded=self.frames_decoded + other.frames_decoded,
            keyframes=self.keyframes + other.keyframes,
            ocr_images=self.ocr_images + other.ocr_images,
            detector_images=self.detector_images + other.detector_images,
            audio_seconds=self.audio_seconds + other.audio_seconds,
            errors=self.errors + other.errors, seconds=stages,
        )


class JobResult(BaseModel):
    """A job's percepts (one per readable frame, time order), speech, skips and cost."""

    job: str
    frames: list[FramePercept] = Field(default_factory=list)
    speech: list[TranscriptSegment] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    cost: PerceptionCost = Field(default_factory=PerceptionCost)


@dataclass
class Perceivers:
    """The models a job runs; ``None`` turns a stage off. Built from a ``PerceptionConfig`` by
    ``default_perceivers`` (what a Ray worker does), or given (tests, other models)."""

    reader: TextReader | None = None
    detector: ObjectDetector | None = None
    recognizer: SpeechRecognizer | None = None


Progress = Callable[[int, int], None]
"""Called after each finished job with (jobs done, jobs in all): a progress bar's feed."""


def default_perceivers(config: PerceptionConfig, *, ocr_workers: int | None = None) -> Perceivers:
    """The offline defaults ``config`` names: RapidOCR behind the shared OCR cache (with
    ``ocr_workers`` engines; None: one per usable CPU), the colour region detector, Whisper
    tiny.en. Nothing loads before first use."""
    from m3kit.perception.cache import default_text_reader
    from m3kit.perception.detect import ColorRegionDetector
    from m3kit.perception.speech import WhisperRecognizer

    return Perceivers(
        reader=default_text_reader(workers=ocr_workers) if config.ocr else None,
        detector=ColorRegionDetector() if config.detector == "color-regions" else None,
        recognizer=WhisperRecognizer() if config.speech == "whisper" else None,
    )


def perceive(job: PerceptionJob, config: PerceptionConfig, perceivers: Perceivers) -> JobResult:
    """Run one job: decode its frames in batches, pick keyframes by scene change, OCR and detect
    on keyframes, transcribe its audio. A frame or stage that fails is skipped and recorded; the
    job goes on."""
    from m3kit.media.image import read_image_rgb
    from m3kit.media.keyframes import KeyframePicker, thumbnail

    result = JobResult(job=job.id)
    cost = result.cost
    clock = _Clock(cost)
    picker = KeyframePicker(threshold=config.keyframe_threshold, max_gap=config.keyframe_max_gap)
    for start in range(0, len(job.frames), FRAME_BATCH):
        batch: list[tuple[FrameInput, np.ndarray]] = []
        with clock("decode"):
            for frame in job.frames[start:start + FRAME_BATCH]:
                try:
                    image = read_image_rgb(frame.path, record=frame.id)
                except MediaError as exc:  # damaged, over the pixel bound, missing
                    result.skipped.append(SkippedRecord.from_error(exc))
                    cost.errors += 1
                    continue
                cost.frames_decoded += 1
                batch.append((frame, image))
        with clock("keyframes"):
            keys = {frame.id for frame, image in batch
                    if picker.offer(thumbnail(image), frame.time)}
        ocr, detections = _read_keyframes(
            [(frame, image) for frame, image in batch if frame.id in keys],
            perceivers, result, clock)
        for frame, image in batch:
            h, w = image.shape[:2]
            result.frames.append(FramePercept(
                id=frame.id, time=frame.time, keyframe=frame.id in keys, width=int(w),
                height=int(h), ocr=ocr.get(frame.id, ""),
                detections=tuple(detections.get(frame.id, ())),
            ))
    cost.keyframes = sum(p.keyframe for p in result.frames)
    if job.audio is not None and perceivers.recognizer is not None:
        with clock("speech"):
            result.speech = _transcribe(job, perceivers.recognizer, result)
        if job.audio_span is not None:
            cost.audio_seconds = job.audio_span[1] - job.audio_span[0]
    return result


def run_jobs(
    jobs: Sequence[PerceptionJob],
    config: PerceptionConfig,
    *,
    executor: Executor = "inprocess",
    perceivers: Perceivers | None = None,
    workers: int = 2,
    progress: Progress | None = None,
) -> list[JobResult]:
    """Every job's result, in the order of ``jobs``.

    In process, jobs run one after another with ``perceivers`` (the config's defaults when not
    given). On Ray, ``workers`` actors each build the config's defaults once and take jobs as
    they free up, at most ``workers`` jobs in flight (so a thousand videos never queue a
    thousand decoded batches); ``perceivers`` must then be ``None``: models do not travel.
    """
    if executor not in EXECUTORS:
        raise ValueError(f"unknown executor {executor!r}; known: {', '.join(EXECUTORS)}")
    if executor == "ray":
        if perceivers is not None:
            raise ValueError("the Ray executor builds its perceivers in its workers; "
                             "pass perceivers=None")
        return _run_on_ray(jobs, config, workers=workers, progress=progress)
    models = perceivers if perceivers is not None else default_perceivers(config)
    out = []
    for n, job in enumerate(jobs):
        out.append(perceive(job, config, models))
        if progress is not None:
            progress(n + 1, len(jobs))
    return out


# -- helpers ---------------------------------------------------------------------------------------


class _Clock:
    """Adds the wall time of each ``with clock(stage):`` block to ``cost.seconds[stage]``."""

    def __init__(self, cost: PerceptionCost) -> None:
        self.cost = cost
        self.stage = ""
        self.started = 0.0

    def __call__(self, stage: str) -> _Clock:
        self.stage = stage
        return self

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *_: object) -> None:
        spent = time.perf_counter() - self.started
        self.cost.seconds[self.stage] = self.cost.seconds.get(self.stage, 0.0) + spent


def _read_keyframes(chosen: list[tuple[FrameInput, np.ndarray]], perceivers: Perceivers,
                    result: JobResult,
                    clock: _Clock) -> tuple[dict[str, str], dict[str, list[Detection]]]:
    ocr: dict[str, str] = {}
    detections: dict[str, list[Detection]] = {}
    if not chosen:
        return ocr, detections
    frames = [frame for frame, _ in chosen]
    images = [image for _, image in chosen]
    if perceivers.reader is not None:
        with clock("ocr"):
            try:
                for frame, lines in zip(frames, perceivers.reader.read(images), strict=True):
                    ocr[frame.id] = lines_text(lines)
                result.cost.ocr_images += len(images)
            # A model that fails (a backend error, a time-out) costs its frames' text, not the
            # job.
            except Exception as exc:  # noqa: BLE001 (any reader failure: its frames skipped)
                _stage_failed(result, frames, "ocr", exc)
    if perceivers.detector is not None:
        with clock("detect"):
            try:
                found = perceivers.detector.detect(images)
                for frame, boxes in zip(frames, found, strict=True):
                    detections[frame.id] = list(boxes)
                result.cost.detector_images += len(images)
            except Exception as exc:  # noqa: BLE001 (any detector failure: its frames skipped)
                _stage_failed(result, frames, "detect", exc)
    return ocr, detections


def _stage_failed(result: JobResult, frames: list[FrameInput], stage: str,
                  exc: Exception) -> None:
    reason = f"{stage} failed: {type(exc).__name__}: {exc}".splitlines()[0]
    for frame in frames:
        result.skipped.append(SkippedRecord.at(frame.path, frame.id, reason, field=stage))
    result.cost.errors += len(frames)


def _transcribe(job: PerceptionJob, recognizer: SpeechRecognizer,
                result: JobResult) -> list[TranscriptSegment]:
    assert job.audio is not None
    try:
        segments = recognizer.transcribe(job.audio, job.audio_span)
    except M3kitError as exc:  # no audio stream, damaged audio: the job keeps its frames
        result.skipped.append(SkippedRecord.at(job.audio, job.id, exc.reason, field="speech"))
        result.cost.errors += 1
        return []
    return [TranscriptSegment(start=s.start + job.audio_offset, end=s.end + job.audio_offset,
                              text=s.text) for s in segments]


def _run_on_ray(jobs: Sequence[PerceptionJob], config: PerceptionConfig, *, workers: int,
                progress: Progress | None) -> list[JobResult]:
    try:
        import ray
    except ImportError:
        raise M3kitError("the Ray executor needs ray: pip install 'm3kit[ray]'",
                         field="executor") from None
    from ray.util import ActorPool

    if not ray.is_initialized():
        env = {k: v for k, v in os.environ.items() if k.startswith("M3KIT_")}
        ray.init(address=os.environ.get("RAY_ADDRESS") or None, ignore_reinit_error=True,
                 runtime_env={"env_vars": env} if env else None, log_to_driver=False,
                 include_dashboard=False)
    workers = max(1, workers)
    # An actor that reserves a whole CPU never starts on a cluster with fewer CPUs than workers,
    # and the pool would wait for it forever: past the cluster's CPUs, the actors share them.
    cpus = float(ray.cluster_resources().get("CPU", 1.0))
    worker = ray.remote(num_cpus=min(1.0, cpus / workers))(_RayWorker)
    pool = ActorPool([worker.remote(config.model_dump_json()) for _ in range(workers)])
    out: list[JobResult] = []
    payloads = [job.model_dump_json() for job in jobs]
    for n, raw in enumerate(pool.map(lambda actor, p: actor.run.remote(p), payloads)):
        out.append(JobResult.model_validate_json(raw))
        if progress is not None:
            progress(n + 1, len(jobs))
    for actor in pool._idle_actors:  # the pool is drained: every actor is idle
        ray.kill(actor)
    return out


class _RayWorker:
    """A Ray actor: builds the config's perceivers once, runs jobs sent as JSON."""

    def __init__(self, config_json: str) -> None:
        self.config = PerceptionConfig.model_validate_json(config_json)
        # one OCR engine: the actors are the parallelism, each holding at most one CPU (one
        # engine per CPU of the node in each actor would oversubscribe it workers-fold)
        self.perceivers = default_perceivers(self.config, ocr_workers=1)

    def run(self, job_json: str) -> str:
        job = PerceptionJob.model_validate_json(job_json)
        return perceive(job, self.config, self.perceivers).model_dump_json()
