"""N-back attribute annotation with a running label list, and the N-back questions it answers.

Paper, Appendix C.2: clips are annotated in order, one prompt per clip, and the action and scene
phrases already assigned are injected into each prompt so the model reuses the EXACT phrase for a
recurring attribute; a new phrase appears only for a new attribute. Two clips then match on an
attribute exactly when their phrases are equal, which is what makes the Yes/No answers
mechanical. A reply that names an existing phrase with different case or spacing is mapped to
the list's exact phrase (that is the phrase the model was told to copy).

m3kit keeps one running list per 12-clip instance (clips in source order, then time order), so
clips of different videos share phrases and can match across videos.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from m3kit.benchmarks.m3eval.construct.plan import NBackClip, NBackInstance
from m3kit.errors import SchemaError
from m3kit.models.backend import BackendRequest, TextBackend, complete_async

__all__ = [
    "ClipLabel",
    "LabelFormatError",
    "annotate_clips",
    "annotate_clips_async",
    "label_prompt",
    "nback_records",
    "parse_label",
]

_LABEL = re.compile(r"^\s*action\s*:\s*(.+?)\s*\|\s*scene\s*:\s*(.+?)\s*$",
                    re.IGNORECASE | re.MULTILINE)


class LabelFormatError(SchemaError):
    """A reply is not ``Action: [phrase] | Scene: [phrase]``."""


class ClipLabel(BaseModel):
    action: str
    scene: str

    def attribute(self, name: str) -> str:
        return self.action if name == "action" else self.scene


def label_prompt(actions: Sequence[str], scenes: Sequence[str]) -> str:
    """The paper's annotation prompt with the running lists filled in."""
    return (
        "You are analyzing a sequence of video segments from the same context. Your task is to "
        "provide two short phrases for the current segment: 1. The main Action/Activity. 2. The "
        "Scene/Environment.\n"
        "Current Global Memory for this group:\n"
        f"Existing Actions: [{', '.join(actions)}]\n"
        f"Existing Scenes: [{', '.join(scenes)}]\n"
        "Instructions:\n"
        "- If the current action/scene matches one in the memory, use the EXACT phrase from the "
        "list.\n"
        "- If it is new, create a concise new phrase (2-4 words).\n"
        "- OUTPUT FORMAT: Action: [phrase] | Scene: [phrase]"
    )


def parse_label(text: str) -> ClipLabel:
    match = _LABEL.search(text.strip())
    if match is None:
        raise LabelFormatError("reply is not 'Action: [phrase] | Scene: [phrase]'")
    action, scene = (m.strip().strip("[]").strip() for m in match.groups())
    if not action or not scene:
        raise LabelFormatError("an empty phrase")
    return ClipLabel(action=action, scene=scene)


def annotate_clips(
    clips: Sequence[NBackClip], backend: TextBackend, **options: Any
) -> list[ClipLabel | None]:
    """A label per clip (``None`` where every reply was malformed), in the order given.

    Clips are visited by source, then start time, with one running list shared by all.
    ``options`` are those of ``annotate_clips_async`` (frames_per_clip, max_attempts,
    max_side)."""
    return asyncio.run(annotate_clips_async(clips, backend, **options))


async def annotate_clips_async(
    clips: Sequence[NBackClip],
    backend: TextBackend,
    *,
    frames_per_clip: int = 8,
    max_attempts: int = 3,
    max_side: int = 448,
    limit: asyncio.Semaphore | None = None,
) -> list[ClipLabel | None]:
    """``annotate_clips`` on the event loop. The clips of one instance stay sequential (each
    prompt carries the phrases of the clips before it); ``limit`` bounds the calls in flight
    across a whole generation run."""
    actions: list[str] = []
    scenes: list[str] = []
    labels: list[ClipLabel | None] = [None] * len(clips)
    limit = limit or asyncio.Semaphore(1)
    order = sorted(range(len(clips)), key=lambda i: (clips[i].source, clips[i].start))
    for i in order:
        frames = await asyncio.to_thread(_clip_frames, clips[i], frames_per_clip, max_side)
        if not frames:
            continue
        for attempt in range(max_attempts):
            request = BackendRequest("nback", f"{clips[i].source}@{clips[i].start}",
                                     label_prompt(actions, scenes), tuple(frames), attempt)
            async with limit:
                reply = await complete_async(backend, request)
            try:
                label = parse_label(reply)
            except LabelFormatError:
                continue
            labels[i] = ClipLabel(action=_reuse(label.action, actions),
                                  scene=_reuse(label.scene, scenes))
            break
    return labels


def _clip_frames(clip: NBackClip, frames_per_clip: int, max_side: int) -> list:
    """Up to ``frames_per_clip`` frames spread over the clip's time span."""
    from m3kit.media import Resize, VideoDecoder, uniform_indices

    with VideoDecoder(clip.path) as decoder:
        inside = [j for j, t in enumerate(decoder.times) if clip.start <= t < clip.end]
        if not inside:
            return []
        picks = [inside[j] for j in uniform_indices(len(inside),
                                                    min(frames_per_clip, len(inside)))]
        return decoder.get_frames(picks, resize=Resize(max_side=max_side))


def nback_records(
    instance: NBackInstance, labels: Sequence[ClipLabel | None]
) -> list[dict]:
    """One released-format N-back record per valid (K, N) of the instance.

    The answer is Yes exactly when clip K and clip K - N carry the same phrase for the
    instance's attribute; a combination touching an unlabelled clip is left out.
    """
    attr = instance.attribute
    what = "scene or environment" if attr == "scene" else "type of action or activity"
    out = []
    for k, n in instance.combinations:
        last, earlier = labels[k - 1], labels[k - 1 - n]
        if last is None or earlier is None:
            continue
        answer = "Yes" if last.attribute(attr) == earlier.attribute(attr) else "No"
        out.append({
            "question_id": f"{instance.id}_{attr}_k{k}_n{n}",
            "video": instance.videos[k],
            "question": (f"The video shows {k} short clips one after another. Does the final "
                         f"clip (clip {k}) show the same {what} as the clip {n} "
                         f"position{'s' if n > 1 else ''} earlier (clip {k - n})?"),
            "options": ["Yes", "No"],
            "answer": answer,
            "attribute": attr,
            "n_value": n,
            "k_value": k,
            "clip_count": k,
            "labels": [lab.attribute(attr) if lab else None for lab in labels[:k]],
        })
    return out


def _reuse(phrase: str, existing: list[str]) -> str:
    """The list's exact phrase when ``phrase`` names it (case and spacing aside); else add it."""
    key = " ".join(phrase.split()).casefold()
    for known in existing:
        if " ".join(known.split()).casefold() == key:
            return known
    existing.append(phrase)
    return phrase
