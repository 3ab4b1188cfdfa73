"""A long synthetic stream for the long-video memory tests: frames 20 s apart over 30 minutes
and more, three scenes each with its own on-screen text and coloured object, one transcript line,
and perception models that count their calls (so a test can prove nothing ran again); speech
lines for the retrieval-mode tests (parcel talk, one rare number, a line after the cut); and an
embedder whose cosines are given, for rankings checked by hand."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from m3kit.memory import MemoryEvent
from m3kit.perception.base import TextLine, TextReader
from m3kit.perception.detect import ColorRegionDetector, Detection
from m3kit.perception.pipeline import Perceivers
from m3kit.schema import ImageRef

SCENE_TEXTS = ("KITCHEN TIMER TWELVE", "OFFICE ROOM 204", "GARAGE DOOR CODE 7731")
SCENE_COLOURS = ((220, 30, 30), (30, 30, 220), (30, 200, 30))
STEP = 20.0  # seconds between frames
PER_SCENE = 30  # frames per scene: 10 minutes
SPEECH = ("speech-1", 1300.0, "I put the spare keys in the blue drawer")


def scene_of(n: int) -> int:
    return min(n // PER_SCENE, len(SCENE_TEXTS) - 1)


def frame_events(folder: Path, count: int = 3 * PER_SCENE, *, start: int = 0) -> list[MemoryEvent]:
    """Frames ``start`` .. ``count - 1``; frame ``n`` at ``n * STEP`` seconds."""
    folder.mkdir(parents=True, exist_ok=True)
    events = []
    for n in range(start, count):
        scene = scene_of(n)
        path = folder / f"f{n:04d}.jpg"
        if not path.exists():
            image = Image.new("RGB", (320, 180), (30, 30, 40))
            draw = ImageDraw.Draw(image)
            draw.text((10, 50), SCENE_TEXTS[scene], fill=(255, 255, 255),
                      font=ImageFont.load_default(size=20))
            x = 200 + 20 * scene
            draw.rectangle((x, 100, x + 40, 140), fill=SCENE_COLOURS[scene])
            image.save(path, quality=95)
        events.append(MemoryEvent(id=f"frame-{n:04d}", kind="frame", time=n * STEP,
                                  media=ImageRef(path=str(path))))
    return events


def speech_event() -> MemoryEvent:
    event_id, t, text = SPEECH
    return MemoryEvent(id=event_id, kind="transcript", time=t, text=text,
                       metadata={"start": t - 4.0, "end": t})


class CountingReader:
    """A ``TextReader`` that counts the images it was asked to read."""

    def __init__(self, reader: TextReader) -> None:
        self.reader = reader
        self.name = reader.name
        self.images = 0

    def read(self, images: Sequence[np.ndarray]) -> list[list[TextLine]]:
        self.images += len(images)
        return self.reader.read(images)


class CountingDetector(ColorRegionDetector):
    """The colour-region detector, counting the images it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.images = 0

    def detect(self, images: Sequence[np.ndarray]) -> list[list[Detection]]:
        self.images += len(images)
        return super().detect(images)


def counting_perceivers(reader: TextReader) -> Perceivers:
    return Perceivers(reader=CountingReader(reader), detector=CountingDetector())


def sync(test):
    """Run an ``async def`` test body with ``asyncio.run`` (pytest sees its fixtures)."""
    import asyncio
    import functools

    @functools.wraps(test)
    def run(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return run


# Things said over a day, for the hybrid-search tests: many about parcels and deliveries (what
# an embedding of "where is parcel 7395" lands near), one naming the rare number 7395 in other
# words (what BM25 finds and MiniLM blurs).
PARCEL_LINES = (
    "the parcel from grandma arrived this morning",
    "I left the parcel on the kitchen table",
    "the courier said the parcel will come tomorrow",
    "we need to send a parcel to the office",
    "the delivery van stopped at the neighbours",
    "I signed for a delivery at the front door",
    "invoice 7395 was paid in full last month",
    "the weather was cold and rainy all afternoon",
    "we bought apples, bread and milk at the market",
    "my package is stuck at the post office again",
    "the parcel had socks and a scarf inside",
    "I wrapped the parcel in brown paper",
)
RARE_LINE = 6  # the line with 7395
PARCEL_QUERY = "where is parcel 7395"
# Said after the cut, in the query's own words: no search before it may return it.
FUTURE_LINE = "where is parcel 7395: it is in locker twelve"


def speech_lines(texts: Sequence[str], step: float, *, start: float = 0.0,
                 prefix: str = "line") -> list[MemoryEvent]:
    """One transcript event per text, ``step`` seconds apart from ``start``."""
    return [MemoryEvent(id=f"{prefix}-{n}", kind="transcript", time=start + n * step, text=text,
                        metadata={"start": start + n * step})
            for n, text in enumerate(texts)]


class AngleEmbedder:
    """A text embedder for rankings checked by hand: each text of ``cosines`` is the 2-D unit
    vector at that cosine to the x axis, any other text (the query) the x axis itself, so a
    text's cosine to the query is the number given for it."""

    name = "angles"
    dim = 2

    def __init__(self, cosines: dict[str, float]) -> None:
        self.cosines = cosines

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows = [(c, (1.0 - c * c) ** 0.5) for c in (self.cosines.get(t, 1.0) for t in texts)]
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), 2)


async def check_modes_share_one_store(memory: Callable[..., Any], key: str,
                                      events: Sequence[MemoryEvent]) -> None:
    """``memory(retrieval=...)`` built once in the default mode, then in ``dense`` and
    ``lexical``: each loads the stored build (nothing embedded), its config names its mode (it
    changes answers: the cache scope) but its store config does not (not what is stored)."""
    built = memory()
    await built.ingest(key, events)
    assert built.report(key).origin == "built"
    for retrieval in ("dense", "lexical"):
        mem = memory(retrieval=retrieval)
        assert mem.config()["retrieval"] == retrieval
        assert mem.store_config() == built.store_config()
        await mem.ingest(key, events)
        assert mem.report(key).origin == "stored" and mem.report(key).embedded == 0


# 2024-05-01 08:00:00 UTC: a person's day on the unix clock, as SuperMemory-VQA's timeline puts it
DAY_ONE = 1_714_550_400.0


def dated(events: Sequence[MemoryEvent], start: float = DAY_ONE) -> list[MemoryEvent]:
    """``events`` moved to the unix clock from ``start`` and labelled with their wall-clock time,
    as ``m3kit.benchmarks.supermemory.timeline`` labels a person's events."""
    from m3kit.memory.events import wall_clock

    out = []
    for event in events:
        t = start + float(event.time or 0.0)
        meta = {**event.metadata, "when": wall_clock(t)}
        if "start" in meta:
            meta["start"] = start + float(meta["start"])
        if "end" in meta:
            meta["end"] = start + float(meta["end"])
        out.append(event.model_copy(update={"time": t, "metadata": meta}))
    return out
