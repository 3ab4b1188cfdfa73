"""A question's frames: which ones (the frame policy), where they are (the frame store), and how
they reach a model (image content).

Frames are decoded once into the content-addressed ``FrameStore`` and referred to by path; the
path list goes in the sample's metadata, and the pixels go to the model as inline images only at
call time (inspect refuses file references at the model boundary, and OpenAI-compatible servers
refuse video content). The causal cut applies here: no frame after the question's time is chosen.
Each benchmark picks its own policy per question (M3Eval's: in its ``task.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import SamplingError
from m3kit.media.resize import Resize
from m3kit.media.sampling import SamplingPolicy, sample_indices
from m3kit.schema import Question, VideoRef

if TYPE_CHECKING:
    from inspect_ai.model import ContentImage

    from m3kit.media.store import FrameStore
    from m3kit.models.content import Detail

__all__ = [
    "DEFAULT_FRAMES",
    "FramePolicy",
    "SelectedFrame",
    "clip_spans",
    "policy_fingerprint",
    "select_frames",
    "selected_frame_images",
]

DEFAULT_FRAMES = 96  # frames per video when a policy names no count (M3Eval's, Appendix D)


class FramePolicy(BaseModel):
    """How frames are chosen for a question.

    ``n`` frames by ``policy`` from each video reference, or from each clip when ``per_clip``
    (N-Back probes: clips listed in the question's metadata, see ``clip_spans``). ``n = 0``
    sends no frames (text-only models). ``max_side`` shrinks frames before they are stored.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: SamplingPolicy = "uniform"
    n: int = Field(default=DEFAULT_FRAMES, ge=0)
    per_clip: bool = False
    fps: float | None = Field(default=None, gt=0)
    max_frames: int | None = Field(default=None, gt=0)  # cap for the ``fps`` policy
    max_side: int | None = Field(default=None, gt=0)

    @property
    def resize(self) -> Resize | None:
        return Resize(max_side=self.max_side) if self.max_side else None


class SelectedFrame(BaseModel):
    """One chosen frame: the stored image, the video it comes from, its index and time (s)."""

    model_config = ConfigDict(frozen=True)

    path: str
    video: str
    index: int
    time: float


def clip_spans(question: Question, start: float, end: float) -> list[tuple[float, float]]:
    """The clips of an N-Back probe between ``start`` and ``end`` seconds.

    From ``metadata["clips"]`` (``[start, end]`` pairs or ``{"start", "end"}`` records, seconds on
    the probe's clock) when given, else ``metadata["k"]`` equal parts of the span, else the span.
    """
    clips = question.metadata.get("clips")
    if clips:
        spans = []
        for i, clip in enumerate(clips):
            try:
                s, e = (clip["start"], clip["end"]) if isinstance(clip, dict) else clip
                spans.append((float(s), float(e)))
            except (KeyError, TypeError, ValueError):
                raise SamplingError(
                    f"clip {i} is not a [start, end] pair: {clip!r}",
                    record=question.id, field="metadata.clips",
                ) from None
        return spans
    k = int(question.metadata.get("k") or 1)
    step = (end - start) / k
    return [(start + i * step, start + (i + 1) * step) for i in range(k)]


def _ref_path(ref: VideoRef, root: Path | None) -> Path:
    path = Path(ref.path)
    return path if path.is_absolute() or root is None else root / path


def select_frames(
    store: FrameStore,
    question: Question,
    policy: FramePolicy,
    *,
    root: str | Path | None = None,
    causal: bool = True,
) -> list[SelectedFrame]:
    """Choose ``question``'s frames by ``policy`` and make sure they are in ``store``.

    Relative video paths resolve against ``root``. With ``causal``, frames after
    ``question.time`` are never chosen (on the question's clock: a reference's ``clock_start``
    places its video there). Blocking (it may decode): call it from a worker thread.
    """
    if policy.n == 0:
        return []
    root_path = Path(root) if root is not None else None
    out: list[SelectedFrame] = []
    for ref in question.media:
        if not isinstance(ref, VideoRef):
            continue  # images and pages are not frames
        video = _ref_path(ref, root_path)
        times = store.index_for(video).times
        if times.size == 0:
            raise SamplingError("the video has no frames", path=video, record=question.id)
        start = ref.start or 0.0
        end = min(ref.end if ref.end is not None else float("inf"), float(times[-1]) + 1e-3)
        if causal and question.time is not None:
            # the question's time on the video's own clock (a video placed on a longer
            # clock, such as a person's days of sessions, starts at ``clock_start``)
            end = min(end, question.time - (ref.clock_start or 0.0) + 1e-6)
        if end <= start:
            raise SamplingError(
                f"no frame of the video lies in [{start:g}, {end:g}] s before the question time",
                path=video, record=question.id, field="time",
            )
        spans = clip_spans(question, start, end) if policy.per_clip else [(start, end)]
        indices: list[int] = []
        for span_start, span_end in spans:
            # Clips are half-open and sampling spans are closed: keep a boundary frame in one clip.
            span_end = min(span_end - 1e-6 if policy.per_clip else span_end, end)
            if span_end <= span_start:
                continue  # a clip after the question time
            try:
                indices += sample_indices(
                    times, policy.policy, policy.n, fps=policy.fps,
                    max_frames=policy.max_frames, span=(span_start, span_end),
                )
            except SamplingError as exc:
                raise SamplingError(exc.reason, path=video, record=question.id,
                                    field=exc.field) from None
        paths = store.get_paths(video, indices, policy.resize)
        out += [
            SelectedFrame(path=str(p), video=str(video), index=i, time=float(times[i]))
            for p, i in zip(paths, indices, strict=True)
        ]
    return out


async def selected_frame_images(frames: list[SelectedFrame],
                                detail: Detail = "auto") -> list[ContentImage]:
    """The frames as inline image content for a model call (read from the store now, in a
    worker thread), each through the pixel bound every image passes before it is sent
    (``m3kit.media.image.image_data_uri``: a frame over it is a ``MediaTooLargeError`` naming
    it and its video)."""
    import anyio
    from inspect_ai.model import ContentImage

    from m3kit.media.image import image_data_uri

    def inline() -> list[str]:
        return [image_data_uri(f.path, record=f"{f.video}#{f.index}") for f in frames]

    uris = await anyio.to_thread.run_sync(inline) if frames else []
    return [ContentImage(image=uri, detail=detail) for uri in uris]


def policy_fingerprint(policy: FramePolicy) -> dict[str, Any]:
    """The policy as plain data, for cache scopes and logs."""
    return policy.model_dump(mode="json")
