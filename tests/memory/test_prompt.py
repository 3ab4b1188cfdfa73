"""Prompt assembly: one user message of the memory's items, then the question; sent with its
usage read back."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from m3kit.errors import M3kitError, MediaNotFoundError
from m3kit.memory import AnswerRequest, MemoryItem
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.schema import ImageRef, PdfPageRef

from .conftest import CACHED_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS, REPLY, blank_image


def test_items_then_the_question_in_one_message(tmp_path: Path, recorder) -> None:
    photo = ImageRef(path=str(blank_image(tmp_path / "photo.png", 90)))
    items = [MemoryItem(id="t1", key="k", event_id="t1", modality="transcript", time=1.0,
                        text="hello"),
             MemoryItem(id="f2", key="k", event_id="f2", modality="frame", time=2.0,
                        text="a grey square", source=photo)]
    builder = PromptBuilder()
    builder.items("Memory, oldest first:", items, send_images=True)
    builder.question("What was shown?")
    request = AnswerRequest(prompt="What was shown?", query="What was shown?",
                            model=recorder.model)
    answer = asyncio.run(ask_model(request, builder, retrieved_ids=["f2", "t1"]))

    kinds = [part.type for part in recorder.last_content()]
    assert kinds == ["text", "image", "text"]  # adjacent lines merged around the image
    assert recorder.last_content()[-1].text == "What was shown?"  # last, after the memory
    assert answer.output == REPLY
    assert answer.usage.prompt_tokens == INPUT_TOKENS + CACHED_TOKENS
    assert answer.usage.completion_tokens == OUTPUT_TOKENS
    assert (answer.usage.images_sent, answer.usage.retrieved_ids) == (1, ["f2", "t1"])

    as_text = PromptBuilder()
    as_text.items("Memory:", items, send_images=False)
    as_text.question("What was shown?")
    text = asyncio.run(as_text.content())
    # text only goes as one string: text-only chat templates refuse a list of parts
    assert as_text.images == 0 and isinstance(text, str)
    assert text.endswith("frame f2: a grey square\n\nWhat was shown?")


def test_a_question_page_or_a_vanished_image_is_refused(tmp_path: Path) -> None:
    with pytest.raises(M3kitError, match="only image files"):
        PromptBuilder().question("?", [PdfPageRef(path=str(tmp_path / "a.pdf"), page=0)])
    builder = PromptBuilder()
    builder.image(ImageRef(path=str(tmp_path / "gone.png")))
    with pytest.raises(MediaNotFoundError, match="not found when sending it"):
        asyncio.run(builder.content())
