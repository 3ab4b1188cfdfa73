"""VideoAgent's frames: the units it samples, captions and retrieves among.

A unit is one visual item (a frame, an image, a page) with the speech heard just before it: each
transcript line joins the first visual item at or after its time, when that item comes within
``speech_window`` seconds (so a caption never holds words heard after its frame). A line no
visual item takes (a transcript-only session, the end of a session, the last words before a
question whose next frame comes after it) and every other item (a round, a note) is a unit of
its own. Units are made per question from the items visible then, so a line heard before the
question always reaches it; a frame's unit is the same at every cut that shows the frame (its
lines are all before it), so its caption can be kept. Units keep the item's id, time and
source; their text is the item's surrogate (its description and OCR text) followed by the lines
heard."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from itertools import pairwise

from m3kit.media.sampling import uniform_indices
from m3kit.memory.base import MemoryItem
from m3kit.memory.events import VISUAL_KINDS, clock
from m3kit.perception.captions import ClipEvidence
from m3kit.schema.media import ImageRef

# Transcript lines heard up to this long before a frame join its caption: SuperMemory-VQA's
# memory frames are 10 s apart (``memory_fps=0.1``), so every line within three frames of the
# next one is kept with it.
SPEECH_WINDOW = 30.0
HEARD = "heard"  # a unit's metadata: the lines joined to it, as (id, start, text)


def frame_units(items: Sequence[MemoryItem], speech_window: float) -> list[MemoryItem]:
    """The units of ``items`` (time order, ``events.items_from_events``), in time order."""
    visual = [n for n, item in enumerate(items)
              if item.modality in VISUAL_KINDS and item.time is not None]
    times = [float(items[n].time or 0.0) for n in visual]
    heard: dict[int, list[MemoryItem]] = {}
    taken: set[int] = set()
    for n, item in enumerate(items):
        if item.modality != "transcript" or item.time is None:
            continue
        at = bisect_left(times, item.time)  # the first visual item at or after the line
        if at < len(times) and times[at] - item.time <= speech_window:
            heard.setdefault(visual[at], []).append(item)
            taken.add(n)
    units: list[MemoryItem] = []
    for n, item in enumerate(items):
        if n in taken:
            continue
        lines = heard.get(n, [])
        if not lines:
            units.append(item)
            continue
        text = "\n".join(part for part in (item.text, *(line.text for line in lines)) if part)
        units.append(item.model_copy(update={"text": text, "metadata": {
            **item.metadata,
            HEARD: [(line.id, float(line.metadata.get("start", line.time or 0.0)), line.text)
                    for line in lines]}}))
    return units


def unit_ids(unit: MemoryItem) -> list[str]:
    """The ids of the items ``unit`` is made of, in time order: the lines heard, then itself."""
    return [*(line_id for line_id, *_ in unit.metadata.get(HEARD, [])), unit.id]


def clip_evidence(unit: MemoryItem) -> ClipEvidence:
    """What a captioner gets for ``unit``: its image file, its OCR text, the speech heard up to
    it (a unit that is text itself: its text, as heard), over the stretch from the first line
    heard to the unit's time."""
    t = float(unit.time or 0.0)
    if unit.modality not in VISUAL_KINDS:
        return ClipEvidence(clip_id=unit.id, start=float(unit.metadata.get("start", t)), end=t,
                            transcript=unit.text)
    lines = unit.metadata.get(HEARD, [])
    source = unit.source
    frames = ((source.path,) if isinstance(source, ImageRef) and not source.remote else ())
    ocr = str(unit.metadata.get("ocr", "")).strip()
    return ClipEvidence(clip_id=unit.id, start=min([t, *(start for _, start, _ in lines)]),
                        end=t, frames=frames, transcript="\n".join(text for *_, text in lines),
                        ocr=(ocr,) if ocr else ())


def uniform(count: int, n: int) -> list[int]:
    """``n`` positions spread uniformly over ``count`` units, the first and the last included
    (VideoAgent's first look: ``np.linspace(1, num_frames, 5)``; the frame sampler's
    ``uniform``); all of them when fewer, none of none."""
    return uniform_indices(count, n) if count else []


def segments(chosen: Sequence[int]) -> list[tuple[int, int]]:
    """The stretches between consecutive chosen positions that hold units not chosen yet, as
    ``(before, after)`` positions (VideoAgent's candidate segments; an empty one can give no
    frame, so it is not offered)."""
    return [(a, b) for a, b in pairwise(chosen) if b - a > 1]


def when(unit: MemoryItem) -> str:
    """How a unit's time is written in a prompt: its label, else its clock time."""
    label = unit.metadata.get("when")
    if label:
        return str(label)
    return clock(unit.time) if unit.time is not None else "undated"
