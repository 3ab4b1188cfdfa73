"""Perception by a model: a vision-language model as the object detector, the clip captioner
and the summariser of the long-video memories (``videorag``, ``egorag``).

No learned object detector ships its weights inside an installable package, so Video-RAG's DET
database is filled, when a model is at hand, by asking the VLM what it sees (JSON: label and a
box in 0..1 coordinates). EgoButler's captions (EgoGPT) and hour/day digests (an LLM) are
prompts to a model as well. Each wraps a ``TextBackend`` (``InspectBackend`` for any inspect
model), so retries, rate limits and the resumable call cache apply; a reply that stays malformed
raises ``MalformedReplyError`` naming the stage and the image or clip, which the perception
pipeline skips and counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, Field

from m3kit.models.backend import BackendRequest, TextBackend, backend_name, call_json, call_text
from m3kit.perception.captions import ClipEvidence
from m3kit.perception.detect import Detection

DETECT_PROMPT = """List the physical objects visible in this image. Reply with JSON only:
{"objects": [{"label": "<object name>", "box": [x0, y0, x1, y1]}]}
with box coordinates as fractions of the image width and height (0 to 1). At most 15 objects."""

CAPTION_PROMPT = """These are frames, one per second, of a {seconds:.0f}-second stretch of \
first-person video, oldest first. What was said in it: {transcript}
Describe in two or three sentences what the camera wearer does and sees, naming objects, \
places, people and any text that is visible."""

SUMMARY_PROMPT = """Summarise these descriptions of consecutive stretches of one person's \
first-person video into one {level}-level summary of at most five sentences. Keep names, \
objects, places, numbers and visible text.

{texts}"""


class _Box(BaseModel):
    label: str
    box: tuple[float, float, float, float]


class _Objects(BaseModel):
    objects: list[_Box] = Field(default_factory=list)


class BackendDetector:
    """``ObjectDetector`` backed by a VLM asked what it sees."""

    def __init__(self, backend: TextBackend, *, retries: int = 1) -> None:
        self.backend = backend
        self.retries = retries
        self.name = f"vlm-detector:{backend_name(backend)}"

    def detect(self, images: Sequence[np.ndarray]) -> list[list[Detection]]:
        out = []
        for n, image in enumerate(images):
            request = BackendRequest("detect", f"image-{n}", DETECT_PROMPT, (image,))
            reply: _Objects = call_json(self.backend, request, _Objects, retries=self.retries)
            h, w = image.shape[:2]
            out.append([Detection(label=o.label.strip().lower(), score=1.0,
                                  box=(o.box[0] * w, o.box[1] * h, o.box[2] * w, o.box[3] * h))
                        for o in reply.objects if o.label.strip()])
        return out


class BackendClipCaptioner:
    """``ClipCaptioner`` backed by a VLM: the window's frames and transcript in, a caption out
    (EgoGPT's role in EgoButler)."""

    def __init__(self, backend: TextBackend, *, max_frames: int = 30) -> None:
        self.backend = backend
        self.max_frames = max_frames
        self.name = f"vlm-captioner:{backend_name(backend)}"

    def caption_clip(self, clip: ClipEvidence) -> str:
        from pathlib import Path

        frames = clip.frames
        if len(frames) > self.max_frames:
            picks = np.linspace(0, len(frames) - 1, self.max_frames).round().astype(int)
            frames = tuple(frames[int(n)] for n in picks)
        prompt = CAPTION_PROMPT.format(seconds=clip.end - clip.start,
                                       transcript=clip.transcript or "(nothing)")
        request = BackendRequest("caption", clip.clip_id, prompt, tuple(Path(f) for f in frames))
        return call_text(self.backend, request)


class BackendSummarizer:
    """``Summarizer`` backed by an LLM (EgoRAG's hour and day digests)."""

    def __init__(self, backend: TextBackend) -> None:
        self.backend = backend
        self.name = f"llm-summarizer:{backend_name(backend)}"

    def summarize(self, texts: Sequence[str], level: str) -> str:
        body = "\n".join(f"- {t}" for t in texts)
        request = BackendRequest("summarize", level, SUMMARY_PROMPT.format(level=level,
                                                                           texts=body))
        return call_text(self.backend, request)
