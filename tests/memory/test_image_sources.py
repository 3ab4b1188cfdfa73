"""Image references a memory meets in released data: web links (LoCoMo's ``img_url``s, never
fetched: a caption-only attachment), inline ``data:`` images (decoded, OCR'd, sent) and a
malformed inline image (its own item skipped, named); and M3Proctor's PDF pages rendered by
many samples at once (the media layer's one atomic path).

Real pieces: RapidOCR on text drawn into the inline image, MiniLM, faiss; the answering model
is inspect's ``mockllm`` recording what each memory sent.
"""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import anyio
import numpy as np
import pytest
from PIL import Image

from m3kit.media.pdf import pdf_pages_dir, render_pdf_page, write_text_pdf
from m3kit.memory import (
    ContextMemory,
    HierarchicalMemory,
    MemoryEvent,
    ProctorMemory,
    RagMemory,
)
from m3kit.memory.proctor import chunk_raw
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import ImageRef, PdfPageRef

from .conftest import render_text

URL = "https://example.invalid/lake.jpg"
CAPTION = "a painting of a lake at sunrise"
META = {"session_id": "D1", "round_id": "D1:1", "when": "D1"}


def _inline(path: Path) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(path.read_bytes()).decode("ascii")


@pytest.fixture
def events(tmp_path: Path) -> list[MemoryEvent]:
    """A round sharing a web image (captioned), an inline image with text in its pixels (no
    caption) and a malformed inline image; then a second round."""
    inline = _inline(render_text(tmp_path / "sign.jpg", "the red fox jumps over the fence"))

    def image(n: int, ref: str, caption: str = "") -> MemoryEvent:
        return MemoryEvent(id=f"D1:1/img_{n}", kind="image", time=0.0, text=caption,
                           media=ImageRef(path=ref), metadata={**META, "attachment_id":
                                                               f"img_{n}"})

    return [
        MemoryEvent(id="D1:1", kind="round", time=0.0, text="Mel: look at these", metadata=META),
        image(1, URL, CAPTION),
        image(2, inline),
        image(3, "data:image/jpeg;base64,not*base64!", "a torn photo"),
        MemoryEvent(id="D1:2", kind="round", time=1.0, text="Ann: lovely lake",
                    metadata={**META, "round_id": "D1:2"}),
    ]


def test_rag_keeps_a_web_image_caption_only_and_reads_an_inline_one(
    events: list[MemoryEvent], embedder, reader
) -> None:
    memory = RagMemory(embedder=embedder, reader=reader, k=3,
                       retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("conv-1", events))
    items = {i.id: i for i in memory.items("conv-1")}
    assert list(items) == ["D1:1", "D1:1/img_1", "D1:1/img_2", "D1:2"]
    assert items["D1:1/img_1"].text == CAPTION and items["D1:1/img_1"].metadata["ocr"] == ""
    assert "red fox" in items["D1:1/img_2"].metadata["ocr"]
    # Only the malformed inline image is skipped, named; the web link is no failure.
    (skip,) = memory.skipped("conv-1")
    assert skip.record == "D1:1/img_3" and "malformed inline image" in skip.reason


@pytest.mark.parametrize("kind", ["proctor", "hierarchical"])
def test_chunking_memories_keep_the_web_caption_and_the_inline_pixels(
    events: list[MemoryEvent], embedder, reader, kind: str
) -> None:
    memory = (ProctorMemory(embedder=embedder, reader=reader, bias="lexical",
                            retrieval=RetrievalConfig(index="numpy"))
              if kind == "proctor" else
              HierarchicalMemory(embedder=embedder, reader=reader, ocr=True,
                                 retrieval=RetrievalConfig(index="numpy")))
    asyncio.run(memory.ingest("conv-1", events))
    first = next(c for c in memory.items("conv-1") if c.id == "D1:1")
    assert f"[img_1 (image)] {CAPTION}" in first.text
    assert "red fox" in first.text  # the inline image, uncaptioned, OCR'd
    # Raw pixels to escalate to: the inline image only (the web one is never fetched).
    raw = [(name, ref.path[:5]) for _, ref, name in chunk_raw(first)]
    assert raw == [("img_2", "data:")]
    (skip,) = memory.skipped("conv-1")
    assert skip.record == "D1:1/img_3" and "malformed inline image" in skip.reason


def test_context_memory_sends_the_inline_image_and_the_web_caption(
    events: list[MemoryEvent], recorder
) -> None:
    memory = ContextMemory(send_images=True)
    usable = [e for e in events if e.id != "D1:1/img_3"]
    asyncio.run(memory.ingest("conv-1", usable))
    answer = asyncio.run(memory.answer("conv-1", "What did Mel paint?", recorder.model))
    assert answer.error is None and answer.usage.images_sent == 1
    assert CAPTION in recorder.last_text() and URL not in recorder.last_text()
    (sent,) = recorder.last_images()
    assert sent == base64.b64decode(usable[2].media.path.split(",", 1)[1])  # type: ignore[union-attr]


def test_proctor_pages_rendered_by_many_samples_at_once_are_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Sixteen samples escalate to the same PDF page at once: each gets the page from the
    media layer's shared cache, written atomically, and every file read back is whole."""
    monkeypatch.setenv("M3KIT_CACHE_DIR", str(tmp_path / "cache"))
    pdf = write_text_pdf(tmp_path / "protocol.pdf", ["Dosage: amoxicillin 12.5 mg per kg"])
    ref = PdfPageRef(path=str(pdf), page=0)
    memory = ProctorMemory(bias="lexical", ocr=False, retrieval=RetrievalConfig(index="numpy"))

    async def many() -> list[np.ndarray]:
        pixels: list[np.ndarray] = []

        async def sample() -> None:
            page = await anyio.to_thread.run_sync(memory._render, ref)
            with Image.open(page.path) as image:
                image.load()
                pixels.append(np.asarray(image.convert("RGB")))

        async with anyio.create_task_group() as group:
            for _ in range(16):
                group.start_soon(sample)
        return pixels

    pixels = anyio.run(many)
    expected = np.asarray(render_pdf_page(pdf, 0, dpi=memory.page_dpi))
    assert len(pixels) == 16 and all(np.array_equal(p, expected) for p in pixels)
    assert [p.suffix for p in pdf_pages_dir().iterdir()] == [".png"]
