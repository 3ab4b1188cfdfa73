"""Stage 1 of SuperMemory-VQA's annotation pipeline (seed 003 §3.4, appendix C; the release's
``stage1_v2.py``): dense sequential captions of each person's recordings.

Each session (``sessions.SessionSource``) is cut into chunks of ``chunk_seconds`` (the last
remainder shorter than ``merge_below_seconds`` joins the chunk before it, as the release does:
120 s and 90 s). The chunks of one person are captioned in time order across all the person's
sessions; each captioner sees the last ``context_chunks`` captions before it (30, as the
release; across sessions) and the person registry (``records.PersonRegistry``: each label's
longest description, updated after every chunk), so names and objects stay the same from chunk
to chunk and day to day.

Two captioners fit ``Captioner``:

- ``ModelCaptioner``: any inspect model through m3kit's model-call backend
  (``models.backend.call_json``: JSON validated as ``records.ChunkCaption``, retried with the
  problem), given ``frames_per_chunk`` frames sampled uniformly over the chunk, the chunk's
  transcript lines (``[MM:SS - MM:SS] speaker: text``, chunk-relative), the window of previous
  captions, the registry and the chunk's wall-clock time. Its segment times are read relative
  to the chunk, clamped to it and written local to the recording.
- ``SurrogateCaptioner``, the offline default: no captioning model. One segment per scene
  change (``media.keyframes``), carrying what OCR read on the scene's keyframe, what the colour
  region detector saw there and the transcript lines said in it with their speakers; its
  summaries start with ``perception.captions.SURROGATE_LABEL`` and its name says what it is.

Every finished chunk is kept in ``ROOT/annotations/cache`` (``models.call_cache.ResultCache``)
under the hash of the captioner, the settings, the recording's file stamp, the chunk's span and
transcript lines, the window's captions and the registry, so a killed or repeated run redoes
nothing finished. Bad input never stops the run: a chunk whose frames cannot be decoded or
whose reply stays malformed is skipped and named (``SkippedRecord``) and the next chunk goes
on; only a model that cannot be reached at all (``BackendError``) stops it, everything finished
kept.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, Field

from m3kit.benchmarks.construction import ConstructionProgress
from m3kit.benchmarks.supermemory.construct.records import (
    ANNOTATION_DIR,
    CAPTIONS_DIR,
    CallCost,
    CaptionedChunk,
    CaptionSegment,
    ChunkCaption,
    PersonRegistry,
    PersonSeen,
    SegmentDescription,
    SessionCaptions,
    SpokenText,
    TimeSpan,
    captions_path,
    registry_path,
)
from m3kit.benchmarks.supermemory.construct.sessions import (
    FoundSessions,
    HeardLine,
    SessionInputs,
    SessionSource,
    find_sessions,
)
from m3kit.errors import M3kitError
from m3kit.files import atomic_write_text
from m3kit.media.identity import file_stamp
from m3kit.models.backend import BackendError, BackendRequest, TextBackend, call_json
from m3kit.models.call_cache import ResultCache
from m3kit.perception.base import SpeechRecognizer, TextReader
from m3kit.perception.captions import SURROGATE_LABEL, ClipEvidence, SurrogateClipCaptioner
from m3kit.perception.detect import DETECTOR_CAVEAT, ObjectDetector, scene_text
from m3kit.schema import SkippedRecord

__all__ = [
    "CACHE_DIR",
    "CaptionReport",
    "CaptionResult",
    "CaptionSettings",
    "Captioner",
    "ChunkJob",
    "ModelCaptioner",
    "SurrogateCaptioner",
    "annotate_captions",
    "caption_prompt",
    "caption_sessions",
    "chunk_spans",
]

CACHE_DIR = f"{ANNOTATION_DIR}/cache"
_CACHE_KIND = "captions"
# The registry's labels (the release's ``PersonLabels``): the wearer, then everyone else.
_LABEL = re.compile(r"^(User|[A-Z])$")


class CaptionSettings(BaseModel):
    """Everything besides the captioner and the inputs that decides a chunk's caption (part
    of its cache key)."""

    chunk_seconds: float = Field(default=120.0, gt=0)
    merge_below_seconds: float = Field(default=90.0, ge=0)  # a shorter last chunk is merged
    context_chunks: int = Field(default=30, ge=0)  # previous captions in each prompt
    frames_per_chunk: int = Field(default=8, ge=1)  # the model captioner's frames
    max_side: int = Field(default=768, ge=16)  # frames sent or read, longer side in pixels
    attempts: int = Field(default=3, ge=1)  # replies per chunk before it is skipped
    scan_fps: float = Field(default=1.0, gt=0)  # the surrogate's scene-change scan
    keyframe_threshold: float = Field(default=0.08, gt=0, lt=1)


def chunk_spans(duration: float, settings: CaptionSettings) -> list[tuple[float, float]]:
    """``[start, end)`` seconds of each chunk of a recording of ``duration`` seconds: cuts every
    ``chunk_seconds``, a remainder shorter than ``merge_below_seconds`` joined to the chunk
    before it (the release's rule)."""
    spans: list[tuple[float, float]] = []
    start = 0.0
    while start < duration - 1e-9:
        end = min(start + settings.chunk_seconds, duration)
        if 0 < duration - end < settings.merge_below_seconds:
            end = duration
        spans.append((start, end))
        start = end
    return spans


# -- one chunk -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class WindowEntry:
    """A previous chunk as the window shows it: its session and its caption."""

    video_id: str
    session_start: float
    chunk: CaptionedChunk


@dataclass(frozen=True)
class ChunkJob:
    """What a captioner gets for one chunk: its session, its span (seconds local to the
    recording), its transcript lines, the window of previous captions (oldest first), the
    registry as it stands, the person's first recording start (unix s)."""

    root: Path
    session: SessionSource
    index: int
    start: float
    end: float
    lines: tuple[HeardLine, ...]
    window: tuple[WindowEntry, ...]
    registry: PersonRegistry
    first_start: float
    settings: CaptionSettings

    @property
    def name(self) -> str:
        return f"{self.session.video_id}#{self.index}"

    @property
    def video(self) -> Path | None:
        return self.root / self.session.video if self.session.video else None


@dataclass
class CaptionResult:
    caption: ChunkCaption
    cost: CallCost = field(default_factory=CallCost)


@runtime_checkable
class Captioner(Protocol):
    """Captions one chunk. ``name`` is written with every chunk (the model, or the surrogate's
    name); ``settings()`` is what else decides its captions (cache keys). Raises an
    ``M3kitError`` for a chunk it cannot caption (named and skipped)."""

    name: str

    def settings(self) -> dict[str, Any]: ...

    def caption(self, job: ChunkJob) -> CaptionResult: ...


# -- the prompt ----------------------------------------------------------------------------------


def _mmss(seconds: float) -> str:
    whole = max(0, int(round(seconds)))
    return f"{whole // 60:02d}:{whole % 60:02d}"


def _clock(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%A %Y-%m-%d %H:%M:%S UTC")


def transcript_block(job: ChunkJob) -> list[str]:
    """The chunk's transcript lines, chunk-relative: ``[MM:SS - MM:SS] speaker: text``."""
    out = []
    for line in job.lines:
        start = max(0.0, line.start - job.start)
        end = min(job.end - job.start, max(start, line.end - job.start))
        who = "(sound)" if line.kind == "sound" else line.speaker or "unknown speaker"
        out.append(f"[{_mmss(start)} - {_mmss(end)}] {who}: {line.text}")
    return out


def _window_block(window: Sequence[WindowEntry]) -> list[str]:
    if not window:
        return ["(this is the person's first chunk)"]
    out = []
    for entry in window:
        chunk = entry.chunk
        begin, end = entry.session_start + chunk.start_time, entry.session_start + chunk.end_time
        out.append(f"#### [{entry.video_id} | {_clock(begin)} to {_clock(end)}]")
        out.append(f"**Chunk Summary**: {chunk.caption.overall_summary}")
        out.append("**Segment Breakdown:**")
        for seg in chunk.caption.segments:
            d = seg.description
            line = (f"- {_mmss(seg.time_span.start_time)} - {_mmss(seg.time_span.end_time)}: "
                    f"{d.activities} (Env: {d.environment})")
            if d.objects:
                line += f" *Objects*: {', '.join(d.objects)}"
            if d.visible_text:
                line += f" *OCR*: {d.visible_text}"
            out.append(line)
    return out


def _registry_block(registry: PersonRegistry) -> list[str]:
    if not registry.people:
        return ["(nobody registered yet)"]
    return ["| ID | Physical Description |", "|---|---|",
            *(f"| {label} | {text} |" for label, text in sorted(registry.people.items()))]


CAPTION_INSTRUCTIONS = """\
You write dense, sequential captions of egocentric video (the wearer is "User") for a memory \
benchmark. You get the frames of one chunk of a recording, its transcript, the captions of the \
chunks before it and a registry of the people seen so far.

Rules:
- Cover the chunk from 00:00 to its end with segments that do not overlap, in order. Times are \
MM:SS relative to the start of this chunk.
- Describe what is visible and heard: activities, the place (name rooms and landmarks so the \
place can be recognised later), objects handled or left somewhere, text that can be read.
- People: use the registry's labels ("User" for the wearer, "A".."Z" for others); a person \
already in the registry keeps their label; a new person gets the next free letter and a \
physical description (no names unless spoken, no faces described beyond clothing and build).
- Transcript: map each speaker to a registry label; keep the words as given; add bracketed \
non-speech sounds you can hear or infer (e.g. "[Door closes]").
- Privacy: never write licence plates, ID or card numbers, passwords or addresses.
- Stay consistent with the previous chunks: the same object or place gets the same words.

Reply with one JSON object only:
{"overall_summary": "...",
 "segments": [{"time_span": {"start_time": "MM:SS", "end_time": "MM:SS"},
               "description": {"activities": "...", "environment": "...",
                               "visible_text": "...", "objects": ["..."],
                               "audio_transcript": [{"speaker": "User", "transcript": "..."}],
                               "people": [{"person": "A", "description": "..."}]},
               "importance": "low|medium|high", "confidence": "low|medium|high"}]}"""


def caption_prompt(job: ChunkJob) -> str:
    """The model captioner's prompt for ``job`` (its frames travel beside it)."""
    length = job.end - job.start
    since = job.session.start + job.start - job.first_start
    days, rest = divmod(int(since), 86_400)
    lines = transcript_block(job)
    parts = [
        CAPTION_INSTRUCTIONS,
        f"### CONTEXT FROM PREVIOUS SEGMENTS (the last {len(job.window)} captioned chunks, "
        "oldest first)",
        *_window_block(job.window),
        "### SESSION REGISTRY",
        *_registry_block(job.registry),
        "### TIMING",
        f"Recording {job.session.video_id}, chunk {job.index}: from "
        f"{_clock(job.session.start + job.start)} to {_clock(job.session.start + job.end)}, "
        f"{days} days {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d} after the "
        f"person's first recording. Time spans must not exceed {_mmss(length)}.",
        "### AUDIO TRANSCRIPT",
        *(lines or ["(nothing was transcribed in this chunk)"]),
    ]
    return "\n".join(parts)


def _check_reply(caption: ChunkCaption) -> None:
    """Rejects (``ValueError``: retried with the problem) a caption without segments or with a
    label outside the registry's."""
    if not caption.segments:
        raise ValueError("segments: at least one segment is needed")
    for n, seg in enumerate(caption.segments):
        for seen in seg.description.people:
            if not _LABEL.match(seen.person):
                raise ValueError(f"segments[{n}].description.people: {seen.person!r} is not a "
                                 "registry label (User or A..Z)")
        for said in seg.description.audio_transcript:
            if said.speaker is not None and not _LABEL.match(said.speaker):
                raise ValueError(f"segments[{n}].description.audio_transcript: speaker "
                                 f"{said.speaker!r} is not a registry label (User or A..Z)")


def _placed(caption: ChunkCaption, start: float, end: float) -> ChunkCaption:
    """``caption`` with its chunk-relative segment times clamped to the chunk and made local
    to the recording."""
    length = end - start
    segments = []
    for seg in caption.segments:
        a = min(max(seg.time_span.start_time, 0.0), length)
        b = min(max(seg.time_span.end_time, a), length)
        segments.append(seg.model_copy(update={
            "time_span": TimeSpan(start_time=start + a, end_time=start + b)}))
    return caption.model_copy(update={"segments": segments})


# -- the captioners ------------------------------------------------------------------------------


class _Counted:
    """A backend that counts its calls (attempts included: each is a request)."""

    def __init__(self, inner: TextBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls = 0

    def complete(self, request: BackendRequest) -> str:
        self.calls += 1
        return self.inner.complete(request)


def _tokens(backend: TextBackend) -> tuple[int, int]:
    count = getattr(backend, "call_count", None)
    return (int(getattr(count, "input_tokens", 0)), int(getattr(count, "output_tokens", 0)))


class ModelCaptioner:
    """A vision-language model behind ``backend``: the chunk's frames, transcript, window,
    registry and timing in, a ``ChunkCaption`` out."""

    def __init__(self, backend: TextBackend, settings: CaptionSettings) -> None:
        self.backend = backend
        self.name = backend.name
        self.config = settings

    def settings(self) -> dict[str, Any]:
        decide = getattr(self.backend, "settings", None)
        return {"prompt": CAPTION_INSTRUCTIONS,
                "generate": decide() if callable(decide) else None}

    def frames(self, job: ChunkJob) -> list[np.ndarray]:
        """``frames_per_chunk`` frames sampled uniformly over the chunk (none without video)."""
        from m3kit.media.frames import sample_frames
        from m3kit.media.resize import Resize

        if job.video is None:
            return []
        sampled = sample_frames(job.video, "uniform", job.settings.frames_per_chunk,
                                span=(job.start, max(job.start + 1e-3, job.end - 1e-3)),
                                resize=Resize(max_side=job.settings.max_side))
        return sampled.frames

    def caption(self, job: ChunkJob) -> CaptionResult:
        began = time.perf_counter()
        frames = self.frames(job)
        counted = _Counted(self.backend)
        tokens = _tokens(self.backend)
        request = BackendRequest(stage="caption", item=job.name, prompt=caption_prompt(job),
                                 images=tuple(frames))
        try:
            reply = call_json(counted, request, ChunkCaption,
                              retries=job.settings.attempts - 1, check=_check_reply)
        finally:
            after = _tokens(self.backend)
            cost = CallCost(calls=counted.calls, input_tokens=after[0] - tokens[0],
                            output_tokens=after[1] - tokens[1],
                            images=len(frames) * counted.calls,
                            seconds=round(time.perf_counter() - began, 3))
        return CaptionResult(_placed(reply, job.start, job.end), cost)


class SurrogateCaptioner:
    """The offline default: no captioning model. One segment per scene change (keyframes by
    ``media.keyframes.KeyframePicker`` over frames scanned at ``scan_fps``), each carrying the
    OCR of its keyframe (``visible_text``), the colour regions the detector saw there
    (``objects``, ``environment`` with the detector's caveat) and the transcript lines that
    start in it with their speakers; the speakers are the registry's people. Summaries start
    with ``SURROGATE_LABEL``."""

    name = "surrogate-caption"

    def __init__(self, reader: TextReader | None = None,
                 detector: ObjectDetector | None = None) -> None:
        self._reader = reader
        self._detector = detector
        self._words = SurrogateClipCaptioner()

    @property
    def reader(self) -> TextReader:
        if self._reader is None:
            from m3kit.perception.cache import default_text_reader

            self._reader = default_text_reader()
        return self._reader

    @property
    def detector(self) -> ObjectDetector:
        if self._detector is None:
            from m3kit.perception.detect import ColorRegionDetector

            self._detector = ColorRegionDetector()
        return self._detector

    def settings(self) -> dict[str, Any]:
        return {"label": SURROGATE_LABEL, "reader": self.reader.name,
                "detector": self.detector.name}

    def _keyframes(self, job: ChunkJob) -> list[tuple[float, np.ndarray]]:
        """``(time, frame)`` of each scene change in the chunk (the chunk's first frame
        first)."""
        from m3kit.media.decode import VideoDecoder
        from m3kit.media.keyframes import KeyframePicker, thumbnail
        from m3kit.media.resize import Resize
        from m3kit.media.sampling import sample_indices

        assert job.video is not None
        settings = job.settings
        picker = KeyframePicker(threshold=settings.keyframe_threshold, max_gap=None)
        out: list[tuple[float, np.ndarray]] = []
        with VideoDecoder(job.video) as decoder:
            times = decoder.times
            wanted = sample_indices(times, "fps", fps=settings.scan_fps,
                                    span=(job.start, max(job.start + 1e-3, job.end - 1e-3)))
            for at in range(0, len(wanted), 16):  # a batch at a time: memory stays bounded
                batch = wanted[at:at + 16]
                frames = decoder.get_frames(batch, resize=Resize(max_side=settings.max_side))
                for index, frame in zip(batch, frames, strict=True):
                    if picker.offer(thumbnail(frame), float(times[index])):
                        out.append((float(times[index]), frame))
        return out

    def caption(self, job: ChunkJob) -> CaptionResult:
        began = time.perf_counter()
        keyframes = self._keyframes(job) if job.video is not None else []
        bounds = [job.start] + [t for t, _ in keyframes[1:]] + [job.end]
        texts = [" | ".join(dict.fromkeys(line.text for line in lines if line.text.strip()))
                 for lines in self.reader.read([f for _, f in keyframes])] if keyframes else []
        found = self.detector.detect([f for _, f in keyframes]) if keyframes else []
        segments = []
        for n in range(len(bounds) - 1):
            a, b = bounds[n], bounds[n + 1]
            last = n == len(bounds) - 2
            heard = [line for line in job.lines
                     if a <= max(line.start, job.start) < b or (last and line.start >= b)]
            ocr = texts[n] if n < len(texts) else ""
            detections = found[n] if n < len(found) else []
            height, width = keyframes[n][1].shape[:2] if n < len(keyframes) else (0, 0)
            objects = list(dict.fromkeys(d.label for d in detections))
            summary = self._words.caption_clip(ClipEvidence(
                clip_id=f"{job.name}.{n}", start=a, end=b,
                transcript=" ".join(f"{x.speaker or 'someone'}: {x.text}" for x in heard),
                ocr=(ocr,) if ocr else (), objects=tuple(objects)))
            segments.append(CaptionSegment(
                time_span=TimeSpan(start_time=a, end_time=b),
                description=SegmentDescription(
                    activities=summary,
                    environment=scene_text(detections, width, height, ("location",),
                                           caveat=DETECTOR_CAVEAT),
                    visible_text=ocr, objects=objects,
                    audio_transcript=[SpokenText(speaker=x.speaker, transcript=x.text)
                                      for x in heard if x.kind == "speech"],
                    people=_voices(heard)),
                confidence="low"))
        overall = self._words.caption_clip(ClipEvidence(
            clip_id=job.name, start=job.start, end=job.end,
            transcript=" ".join(f"{x.speaker or 'someone'}: {x.text}" for x in job.lines),
            ocr=tuple(t for t in texts if t),
            objects=tuple(dict.fromkeys(d.label for boxes in found for d in boxes))))
        cost = CallCost(images=len(keyframes), seconds=round(time.perf_counter() - began, 3))
        return CaptionResult(ChunkCaption(overall_summary=overall, segments=segments), cost)


def _voices(heard: Sequence[HeardLine]) -> list[PersonSeen]:
    """The registry's people a surrogate knows of: the labelled voices of the transcript."""
    out: dict[str, PersonSeen] = {}
    for line in heard:
        if line.kind == "speech" and line.speaker and _LABEL.match(line.speaker):
            out.setdefault(line.speaker, PersonSeen(
                person=line.speaker, description=f"a voice in the transcript (no captioning "
                f"model saw them), heard saying \"{line.text}\""))
    return list(out.values())


# -- the run -------------------------------------------------------------------------------------


class CaptionReport(BaseModel):
    """What a stage 1 run did: sessions captioned, chunks captioned now / taken from an
    earlier run, what was skipped and why, what the captioned chunks cost, where it is."""

    root: str
    captioner: str
    sessions: int = 0
    chunks_captioned: int = 0
    chunks_reused: int = 0
    chunks_skipped: int = 0
    transcribed: list[str] = Field(default_factory=list)
    skipped: list[SkippedRecord] = Field(default_factory=list)
    cost: CallCost = Field(default_factory=CallCost)

    def summary(self) -> str:
        cost = self.cost
        tokens = (f", {cost.input_tokens} input / {cost.output_tokens} output tokens"
                  if cost.input_tokens or cost.output_tokens else "")
        surrogate = (" (surrogate captions: OCR, transcript and detector text, no captioning "
                     "model)" if self.captioner == SurrogateCaptioner.name else "")
        return (f"{self.sessions} sessions, captioner {self.captioner}{surrogate}: "
                f"{self.chunks_captioned} chunks captioned, {self.chunks_reused} reused, "
                f"{self.chunks_skipped} skipped; {len(self.skipped)} problems named; cost: "
                f"{cost.calls} model calls{tokens}, {cost.images} images, "
                f"{cost.seconds:.1f} s; captions in {Path(self.root) / CAPTIONS_DIR}")


def _add(total: CallCost, more: CallCost) -> CallCost:
    return CallCost(calls=total.calls + more.calls,
                    input_tokens=total.input_tokens + more.input_tokens,
                    output_tokens=total.output_tokens + more.output_tokens,
                    images=total.images + more.images,
                    seconds=round(total.seconds + more.seconds, 3))


def _register(registry: PersonRegistry, video_id: str, chunk: CaptionedChunk) -> None:
    """Each label keeps the longest description seen (the release's rule) and where it was
    first seen."""
    for seg in chunk.caption.segments:
        for seen in seg.description.people:
            if len(seen.description) > len(registry.people.get(seen.person, "")):
                registry.people[seen.person] = seen.description
            registry.first_seen.setdefault(seen.person,
                                           f"{video_id}@{seg.time_span.start_time:g}")


def _chunk_key(cache: ResultCache, captioner: Captioner, job: ChunkJob) -> str:
    video = job.video
    return cache.key(
        captioner.settings(), job.settings.model_dump(mode="json"),
        file_stamp(video) if video is not None else None,
        # the session's start too: the prompt shows the chunk's wall-clock time
        [job.session.subject, job.session.video_id, job.session.start, job.index, job.start,
         job.end],
        [line.model_dump(mode="json") for line in job.lines],
        [[e.video_id, e.session_start, e.chunk.caption.model_dump(mode="json")]
         for e in job.window],
        job.registry.model_dump(mode="json"))


def _caption_person(subject: int, sessions: Sequence[SessionSource], root: Path,
                    captioner: Captioner, settings: CaptionSettings, cache: ResultCache,
                    progress: ConstructionProgress | None, report: CaptionReport) -> None:
    registry = PersonRegistry(subject=subject)
    window: list[WindowEntry] = []
    first = min(s.start for s in sessions)
    for session in sessions:
        out = SessionCaptions(video_id=session.video_id, subject=subject,
                              video_path=session.video, duration=session.duration,
                              start_time=session.start)
        for index, (start, end) in enumerate(chunk_spans(session.duration, settings)):
            lines = tuple(x for x in session.lines if x.end > start and x.start < end)
            job = ChunkJob(root=root, session=session, index=index, start=start, end=end,
                           lines=lines, window=tuple(window[-settings.context_chunks:]
                                                     if settings.context_chunks else ()),
                           registry=registry.model_copy(deep=True), first_start=first,
                           settings=settings)
            name = f"person_{subject}_{session.video_id}_{index:04d}"
            reused = False
            try:
                key = _chunk_key(cache, captioner, job)
                chunk = cache.get(_CACHE_KIND, name, key, CaptionedChunk)
                if chunk is None:
                    made = captioner.caption(job)
                    chunk = CaptionedChunk(chunk_index=index, start_time=start, end_time=end,
                                           caption=made.caption, captioner=captioner.name,
                                           cost=made.cost)
                    cache.put(_CACHE_KIND, name, key, chunk)
                    report.chunks_captioned += 1
                    report.cost = _add(report.cost, made.cost)
                else:
                    reused = True
                    report.chunks_reused += 1
            except BackendError:
                raise  # the model cannot be reached: the run stops, what finished is kept
            except M3kitError as exc:  # undecodable frames, a reply malformed after retries
                report.chunks_skipped += 1
                report.skipped.append(SkippedRecord.at(
                    exc.path or (job.video or root / captions_path(subject, session.video_id)),
                    f"{job.name} ({start:g}-{end:g} s)",
                    f"chunk not captioned: {exc.reason}", exc.field or "caption"))
                if progress is not None:
                    progress.advance("chunks")
                continue
            out.chunks.append(chunk)
            window.append(WindowEntry(session.video_id, session.start, chunk))
            _register(registry, session.video_id, chunk)
            if progress is not None:
                progress.advance("chunks", reused=reused)
        atomic_write_text(root / captions_path(subject, session.video_id),
                          out.model_dump_json(indent=1))
        atomic_write_text(root / registry_path(subject), registry.model_dump_json(indent=1))
        report.sessions += 1


def caption_sessions(found: FoundSessions, root: str | Path, captioner: Captioner,
                     settings: CaptionSettings | None = None, *,
                     progress: ConstructionProgress | None = None) -> CaptionReport:
    """Caption every session of ``found`` (each person's in time order) into ``root``'s
    ``annotations/captions``; finished chunks are reused from ``annotations/cache``."""
    settings = settings or CaptionSettings()
    base = Path(root)
    report = CaptionReport(root=str(base), captioner=captioner.name,
                           skipped=list(found.skipped), transcribed=list(found.transcribed))
    cache = ResultCache(base / CACHE_DIR, captioner.name)
    people: dict[int, list[SessionSource]] = {}
    for session in sorted(found.sessions, key=lambda s: (s.subject, s.start, s.video_id)):
        people.setdefault(session.subject, []).append(session)
    if progress is not None:
        progress.stage("chunks", sum(len(chunk_spans(s.duration, settings))
                                     for s in found.sessions))
    for subject, sessions in people.items():
        _caption_person(subject, sessions, base, captioner, settings, cache, progress, report)
    return report


def annotate_captions(paths: Sequence[str | Path], root: str | Path, captioner: Captioner,
                      settings: CaptionSettings | None = None,
                      inputs: SessionInputs | None = None, *,
                      recognizer: SpeechRecognizer | None = None,
                      progress: ConstructionProgress | None = None) -> CaptionReport:
    """Stage 1 whole: the recordings under ``paths`` found and linked into ``root``
    (``sessions.find_sessions``), then captioned (``caption_sessions``)."""
    found = find_sessions(paths, root, inputs or SessionInputs(), recognizer=recognizer,
                          message=progress.message if progress is not None else None)
    return caption_sessions(found, root, captioner, settings, progress=progress)
