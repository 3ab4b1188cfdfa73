"""One damaged or oversized image costs its own item at ingest, never the whole memory."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import numpy as np
import pytest

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import ImageRef

from ..media.test_image import png_header_only
from .conftest import render_text


def test_rag_ingest_skips_a_bomb_and_a_damaged_image_and_names_them(
    embedder, reader, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = render_text(tmp_path / "good.jpg", "the red fox jumps over the fence")
    junk = tmp_path / "junk.jpg"
    junk.write_bytes(b"\xff\xd8\xff not a jpeg")
    bomb = png_header_only(tmp_path / "bomb.png", 40_000, 40_000)
    events = [
        MemoryEvent(id="D1:1", kind="round", time=0.0, text="user: look at these"),
        MemoryEvent(id="D1:1/img_1", kind="image", time=0.0, text="a fox",
                    media=ImageRef(path=str(good))),
        MemoryEvent(id="D1:1/img_2", kind="image", time=0.0, media=ImageRef(path=str(junk))),
        MemoryEvent(id="D1:1/img_3", kind="image", time=0.0, media=ImageRef(path=str(bomb))),
        MemoryEvent(id="D1:2", kind="round", time=1.0, text="user: and the fence was green"),
    ]
    memory = RagMemory(embedder=embedder, reader=reader, k=2)
    with caplog.at_level(logging.WARNING, logger="m3kit.memory.events"):
        asyncio.run(memory.ingest("persona", events))
    items = memory.items("persona")
    assert [i.id for i in items] == ["D1:1", "D1:1/img_1", "D1:2"]
    assert "red fox jumps" in items[1].metadata["ocr"]
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    assert f"{junk}: record D1:1/img_2: cannot read the image" in warnings[0]
    assert f"{bomb}: record D1:1/img_3: image over the bound of 89478485 pixels" in warnings[1]
    assert all(w.startswith("memory persona: attachment skipped: ") for w in warnings)


def torn_png(path: Path) -> Path:
    """A real PNG cut in the middle of its pixel data: its header reads, its data does not."""
    from PIL import Image

    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(path)  # noise: the pixel data fills the file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


@pytest.mark.parametrize("ocr", [True, False])
def test_proctor_ingest_skips_a_bomb_and_a_damaged_image_and_names_them(
    embedder, reader, tmp_path: Path, caplog: pytest.LogCaptureFixture, ocr: bool
) -> None:
    """Captioned images are not decoded at build (no OCR needed), yet a bomb or a damaged file
    among them is refused from its header and checksums: it keeps no raw reference, so Stage 2
    never sends it; the round keeps its text and the captions."""
    from m3kit.memory import ProctorMemory
    from m3kit.memory.proctor import chunk_raw

    good = render_text(tmp_path / "good.jpg", "the red fox jumps over the fence")
    torn = torn_png(tmp_path / "torn.png")
    bomb = png_header_only(tmp_path / "bomb.png", 40_000, 40_000)
    meta = {"session_id": "D1", "round_id": "D1:1", "when": "D1"}

    def image(n: int, path: Path, caption: str) -> MemoryEvent:
        return MemoryEvent(id=f"D1:1/img_{n}", kind="image", time=0.0, text=caption,
                           media=ImageRef(path=str(path)),
                           metadata={**meta, "attachment_id": f"img_{n}"})

    events = [
        MemoryEvent(id="D1:1", kind="round", time=0.0, text="user: look at these",
                    metadata=meta),
        image(1, good, "a fox by a fence"),
        image(2, torn, "a square of noise"),
        image(3, bomb, "a photo of the barn"),
        MemoryEvent(id="D1:2", kind="round", time=1.0, text="user: and the fence was green",
                    metadata={**meta, "round_id": "D1:2"}),
    ]
    memory = ProctorMemory(embedder=embedder, reader=reader, ocr=ocr, bias="lexical",
                           retrieval=RetrievalConfig(index="numpy"))
    with caplog.at_level(logging.WARNING, logger="m3kit.memory.proctor.surrogates"):
        asyncio.run(memory.ingest("persona", events))
    by_id = {c.id: c for c in memory.items("persona")}
    assert list(by_id) == ["D1:1", "D1:2", "session:D1"]
    first = by_id["D1:1"]
    assert [(modality, name) for modality, _, name in chunk_raw(first)] == [("image", "img_1")]
    assert first.text == ("user: look at these\n[img_1 (image)] a fox by a fence\n"
                          "[img_2 (image)] a square of noise\n[img_3 (image)] a photo of the barn")
    skipped = [str(s) for s in memory.skipped("persona")]
    assert len(skipped) == 2
    assert skipped[0].startswith(f"{torn}: record D1:1/img_2: cannot read the image")
    assert skipped[1].startswith(f"{bomb}: record D1:1/img_3: image over the bound "
                                 "of 89478485 pixels")
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [f"memory persona: attachment skipped: {s}" for s in skipped]
