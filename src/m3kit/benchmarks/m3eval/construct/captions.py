"""Segmentation and structured captions: the evidence M3Eval's question prompts are built on.

Paper, Appendix C.1.1–C.1.2: a video is not captioned end to end; frames are sampled and grouped
into short local batches, and each batch is described in a strict six-key JSON schema
(``CAPTION_KEYS``). A reply that is not exactly that JSON object is asked for again, and after
``max_attempts`` the batch is rejected and reported (never silently patched), because a question
built on a half-parsed caption could test something the video does not show.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import SchemaError
from m3kit.models.backend import (
    BackendRequest,
    TextBackend,
    complete_async,
    gather_or_stop,
    json_object_reply,
)

__all__ = [
    "CAPTION_KEYS",
    "CAPTION_PROMPT",
    "CaptionFailure",
    "CaptionFormatError",
    "CaptionedBatch",
    "FrameBatch",
    "SegmentCaption",
    "VideoCaptions",
    "caption_video",
    "caption_video_async",
    "parse_caption",
    "retry_note",
    "segment_video",
]

CAPTION_KEYS: tuple[str, ...] = (
    "main_storyline",
    "spatial_relation_binding",
    "short_term_action_state",
    "tool_prop",
    "fine_visual_attribute",
    "text_symbol",
)

# The caption prompt of the paper (Appendix C.1.3, "Video Caption Generation").
CAPTION_PROMPT = """\
You are a professional video evidence describer preparing context for difficult memory questions \
over two highly similar videos. You will receive a small batch of nearby frames from one video. \
Describe only grounded, directly visible evidence from these frames. Return STRICT JSON only \
with exactly these 6 keys: main_storyline, spatial_relation_binding, short_term_action_state, \
tool_prop, fine_visual_attribute, text_symbol. Write every value as one grounded English string. \
If a category is not supported by visible evidence in this frame batch, return an empty string \
for that key. Never replace these fields with a single caption key. Do not add wrapper keys such \
as result, response, or data. Output format:
{
  "main_storyline": "",
  "spatial_relation_binding": "",
  "short_term_action_state": "",
  "tool_prop": "",
  "fine_visual_attribute": "",
  "text_symbol": ""
}
Key definitions:
1. main_storyline: State the local storyline progression or process step shown by this batch. \
Also include the directly visible people, entities, objects, actions, and scene context that \
support that storyline reading. If the frames imply a short local progression, describe that \
progression clearly.
2. spatial_relation_binding: Describe detail-level spatial relations or position binding. Focus \
on who or what is to the left/right/front/behind, what is on top of or inside something, where a \
marking appears, or where text/icons appear within the frame.
3. short_term_action_state: Describe short-lived action states or momentary changes visible in \
this batch. Focus on brief states such as on/off, open/half-open/closed, held/released, \
appearing/disappearing, flashing/persistent, steaming/not steaming, and other transient states.
4. tool_prop: Describe visible tools, props, utensils, containers, handheld objects, manipulated \
small items, or operation-relevant objects.
5. fine_visual_attribute: Describe subtle visual attributes such as colors, patterns, materials, \
textures, shapes, markings, accessories, or other precise appearance details.
6. text_symbol: Record readable text, numbers, labels, logos, icons, signs, subtitles, packaging \
text, or symbolic graphics. If only part is readable, say what is readable and what is uncertain.
Requirements: Use objective, concrete English. Do not speculate beyond what is visible or \
strongly implied by the shown frames. Keep each field concise but specific. Preserve short-lived \
and discriminative evidence instead of collapsing everything into broad summary. Output exactly \
one JSON object and nothing else."""



def retry_note(reason: str, wants: str) -> str:
    """What a prompt gains after a rejected reply: why, and that exactly one JSON object
    ``wants`` (what that object must hold) is asked for again."""
    return (f"\n\nYour previous reply was rejected: {reason}. Reply again with exactly one JSON "
            f"object {wants}, nothing else.")


class CaptionFormatError(SchemaError):
    """A caption reply is not the strict six-key JSON object."""


class FrameBatch(BaseModel):
    """A local segment: nearby frames of one video, captioned together."""

    model_config = ConfigDict(frozen=True)

    video: str
    index: int = Field(ge=0)
    start: float = Field(ge=0)  # seconds of the first and last frame of the batch
    end: float = Field(ge=0)
    frame_indices: list[int]


class SegmentCaption(BaseModel):
    """The paper's six-key caption of one batch (Table 5). No key may be missing or added."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    main_storyline: str
    spatial_relation_binding: str
    short_term_action_state: str
    tool_prop: str
    fine_visual_attribute: str
    text_symbol: str

    def text(self) -> str:
        return " ".join(v for v in self.model_dump().values() if v)


class CaptionedBatch(BaseModel):
    batch: FrameBatch
    caption: SegmentCaption
    attempts: int = 1


class CaptionFailure(BaseModel):
    """A batch whose every reply was malformed: what was asked, and why the last reply failed."""

    batch: FrameBatch
    attempts: int
    reason: str
    last_output: str


class VideoCaptions(BaseModel):
    """All batch captions of one video, in time order, and the batches that were rejected."""

    video: str
    batches: list[CaptionedBatch] = Field(default_factory=list)
    rejected: list[CaptionFailure] = Field(default_factory=list)

    def text(self) -> str:
        """Every caption value of the video as one string (what the checker searches)."""
        return " ".join(b.caption.text() for b in self.batches)

    def context(self, label: str) -> str:
        """The sparse frame-batch caption context a question prompt shows for one video."""
        lines = [f"{label} (frame-batch captions in time order):"]
        for b in self.batches:
            fields = "; ".join(f"{k}: {v}" for k, v in b.caption.model_dump().items() if v)
            lines.append(f"- [{b.batch.start:.1f}-{b.batch.end:.1f} s] {fields}")
        return "\n".join(lines)


def segment_video(
    path: str | Path, *, batches: int = 8, frames_per_batch: int = 4
) -> list[FrameBatch]:
    """Cut a video into ``batches`` local segments of ``frames_per_batch`` nearby frames.

    ``batches × frames_per_batch`` frames are sampled uniformly over the whole video and grouped
    in order, so each batch covers one stretch of time and the batches tile the video.
    """
    from m3kit.media import VideoDecoder, uniform_indices

    if batches < 1 or frames_per_batch < 1:
        raise SchemaError("batches and frames_per_batch must be >= 1", path=path,
                          field="batches")
    with VideoDecoder(path) as decoder:
        times = decoder.times
    picks = uniform_indices(len(times), min(len(times), batches * frames_per_batch))
    per = max(1, -(-len(picks) // batches))  # ceil: short videos give fewer, fuller batches
    out: list[FrameBatch] = []
    for b, lo in enumerate(range(0, len(picks), per)):
        chunk = picks[lo:lo + per]
        out.append(FrameBatch(video=str(path), index=b, start=float(times[chunk[0]]),
                              end=float(times[chunk[-1]]), frame_indices=chunk))
    return out


def parse_caption(text: str, *, path: str | Path | None = None,
                  record: str | int | None = None) -> SegmentCaption:
    """The strict six-key caption in a model reply, or ``CaptionFormatError`` saying why not."""
    raw = json_object_reply(text, CaptionFormatError, path=path, record=record)
    missing = [k for k in CAPTION_KEYS if k not in raw]
    extra = sorted(set(raw) - set(CAPTION_KEYS))
    if missing or extra:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unexpected {', '.join(extra)}"] if extra else [])
        raise CaptionFormatError("keys: " + "; ".join(parts), path=path, record=record,
                                 field=(missing or extra)[0])
    for key in CAPTION_KEYS:
        if not isinstance(raw[key], str):
            raise CaptionFormatError(f"value is {type(raw[key]).__name__}, not a string",
                                     path=path, record=record, field=key)
    return SegmentCaption(**{k: raw[k].strip() for k in CAPTION_KEYS})


def caption_video(path: str | Path, backend: TextBackend, **options: Any) -> VideoCaptions:
    """Caption every batch of a video; malformed replies are retried, then the batch rejected.

    ``options`` are those of ``caption_video_async`` (batches, frames_per_batch, max_attempts,
    max_side)."""
    return asyncio.run(caption_video_async(path, backend, **options))


async def caption_video_async(
    path: str | Path,
    backend: TextBackend,
    *,
    batches: int = 8,
    frames_per_batch: int = 4,
    max_attempts: int = 3,
    max_side: int = 448,
    limit: asyncio.Semaphore | None = None,
) -> VideoCaptions:
    """``caption_video`` with the batches captioned concurrently, at most ``limit`` calls in
    flight (shared with the rest of a generation run). Batches keep their time order."""
    from m3kit.media import Resize, VideoDecoder

    segments = segment_video(path, batches=batches, frames_per_batch=frames_per_batch)

    def decode() -> list:
        with VideoDecoder(path) as decoder:
            return [decoder.get_frames(seg.frame_indices, resize=Resize(max_side=max_side))
                    for seg in segments]

    frames = await asyncio.to_thread(decode)  # decoding is CPU work: off the event loop
    limit = limit or asyncio.Semaphore(1)

    async def one(seg: FrameBatch, images: list) -> CaptionedBatch | CaptionFailure:
        prompt, reply, reason = CAPTION_PROMPT, "", ""
        for attempt in range(1, max_attempts + 1):
            async with limit:
                reply = await complete_async(backend, BackendRequest(
                    "captions", f"{Path(path).name} batch {seg.index}", prompt, tuple(images),
                    attempt - 1))
            try:
                caption = parse_caption(reply, path=path, record=f"batch {seg.index}")
            except CaptionFormatError as exc:
                reason = exc.reason
                prompt = CAPTION_PROMPT + retry_note(reason, "with the 6 keys and string values")
                continue
            return CaptionedBatch(batch=seg, caption=caption, attempts=attempt)
        return CaptionFailure(batch=seg, attempts=max_attempts, reason=reason,
                              last_output=reply[:2000])

    outcomes = await gather_or_stop(*(one(seg, imgs) for seg, imgs in zip(segments, frames,
                                                                         strict=True)))
    return VideoCaptions(
        video=str(path),
        batches=[o for o in outcomes if isinstance(o, CaptionedBatch)],
        rejected=[o for o in outcomes if isinstance(o, CaptionFailure)],
    )
