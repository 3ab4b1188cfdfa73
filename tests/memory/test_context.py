"""``context``: FIFO eviction within the budget, image costs, the causal cut, the message sent.

The model is inspect's ``mockllm/model`` (see ``conftest.Recorder``): these tests check the
message the memory assembles and the usage it accounts, not what a model would answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from m3kit.errors import M3kitError
from m3kit.memory import ContextMemory, MemoryEvent
from m3kit.schema import ImageRef, PdfPageRef


def pixels(events: list[MemoryEvent]) -> list[bytes]:
    """The image files of ``events``, as bytes (what must arrive at the model)."""
    return [Path(e.media.path).read_bytes() for e in events]


def test_image_budget_keeps_the_newest_that_fit(image_events, recorder) -> None:
    """Budget 1000, 300 tokens an image: 4 images cost 1200+, so the oldest one goes.

    mockllm records the message; the assertion is on what the memory sent.
    """
    memory = ContextMemory(token_budget=1000, image_tokens=300)
    asyncio.run(memory.ingest("k", image_events))
    # Hand-computed: each image is 300 + its label "[0:00:00.0] image img-0" (23 chars -> 6).
    assert [memory.cost(i) for i in memory.items("k")] == [306] * 4
    answer = asyncio.run(memory.answer("k", "Which photos?", recorder.model))
    assert recorder.last_images() == pixels(image_events[1:])  # oldest first, img-0 evicted
    assert answer.usage.images_sent == 3
    assert answer.usage.retrieved_ids == ["img-3", "img-2", "img-1"]  # most recent first
    assert answer.output == recorder.reply
    assert answer.usage.prompt_tokens == recorder.prompt_tokens
    assert answer.usage.completion_tokens == recorder.completion_tokens
    # The question comes last, after the memory.
    assert recorder.last_content()[-1].text.endswith("Which photos?")


def test_eviction_is_fifo_and_contiguous(make_text_events, recorder) -> None:
    """A small old item never sneaks back in once a newer one did not fit (mockllm records)."""
    events = make_text_events("k", 1)
    events.append(MemoryEvent(id="huge", kind="text", time=3.0, text="x" * 780))
    events.append(MemoryEvent(id="tail", kind="text", time=4.0, text="y" * 36))
    memory = ContextMemory(token_budget=150, tokens_per_char=0.25)
    asyncio.run(memory.ingest("k", events))
    # Hand-computed: ceil(0.25 * chars) of the text plus of the label "[0:00:03.0] text huge".
    costs = {i.id: memory.cost(i) for i in memory.items("k")}
    assert costs == {"k-0": 10 + 5, "huge": 195 + 6, "tail": 9 + 6}
    answer = asyncio.run(memory.answer("k", "Q?", recorder.model))
    # tail (15) fits; tail + huge (216) does not; k-0 would fit beside tail but is older.
    assert answer.usage.retrieved_ids == ["tail"]
    assert "k note 0" not in recorder.last_text()
    assert memory.kept(memory.items("k")) == memory.items("k")[-1:]
    roomy = ContextMemory(token_budget=231)  # exactly everything
    asyncio.run(roomy.ingest("k", events))
    assert asyncio.run(roomy.answer("k", "Q?", recorder.model)).usage.retrieved_ids == [
        "tail", "huge", "k-0"]


def test_causal_cut_hides_later_items(make_text_events, image_events, recorder) -> None:
    """Items after the question's time never reach the model (mockllm records the message)."""
    memory = ContextMemory(token_budget=10_000)
    asyncio.run(memory.ingest("k", [*image_events, *make_text_events("note", 4, start=0.5)]))
    answer = asyncio.run(memory.answer("k", "What happened by 1.5 s?", recorder.model, time=1.5))
    assert answer.usage.retrieved_ids == ["note-1", "img-1", "note-0", "img-0"]
    assert recorder.last_images() == pixels(image_events[:2])
    text = recorder.last_text()
    assert "note 1" in text and "note 2" not in text and "img-2" not in text


def test_retrieve_is_the_prompt_newest_first(make_text_events, image_events, recorder) -> None:
    """``retrieve`` gives what ``answer`` sends, most recent first; ``k`` keeps the newest k;
    the causal cut holds; the ids ``answer`` reports are ``retrieve``'s, in its order."""
    memory = ContextMemory(token_budget=10_000)
    asyncio.run(memory.ingest("k", [*image_events, *make_text_events("note", 4, start=0.5)]))
    # Items at 0, .5, 1, 1.5 are visible at t = 1.5; img-2 (2.0) and later are not.
    ranked = asyncio.run(memory.retrieve("k", "anything", time=1.5))
    assert [i.id for i in ranked] == ["note-1", "img-1", "note-0", "img-0"]
    assert [i.id for i in asyncio.run(memory.retrieve("k", "anything", k=2, time=1.5))] == [
        "note-1", "img-1"]
    everything = asyncio.run(memory.retrieve("k", "anything"))
    assert [i.id for i in everything][:2] == ["note-3", "img-3"] and len(everything) == 8
    answer = asyncio.run(memory.answer("k", "Which photos?", recorder.model, time=1.5))
    assert answer.usage.retrieved_ids == [i.id for i in ranked]
    # Under a budget the retrieval is the kept stretch: 306 tokens an image, 1000 in all.
    small = ContextMemory(token_budget=1000, image_tokens=300)
    asyncio.run(small.ingest("k", image_events))
    assert [i.id for i in asyncio.run(small.retrieve("k", "?"))] == ["img-3", "img-2", "img-1"]
    with pytest.raises(ValueError, match="k must be positive"):
        asyncio.run(small.retrieve("k", "?", k=0))
    with pytest.raises(KeyError, match="ingest it first"):
        asyncio.run(small.retrieve("other", "?"))


def test_forget_drops_the_key_and_a_later_ingest_rebuilds(make_text_events) -> None:
    memory = ContextMemory()
    asyncio.run(memory.ingest("k", make_text_events("old", 2)))
    asyncio.run(memory.ingest("j", make_text_events("kept", 1)))
    memory.forget("k")
    assert not memory.is_ingested("k") and memory.items("k") == []
    assert memory.build_seconds("k") == 0.0
    with pytest.raises(KeyError, match="no index for key 'k'"):
        asyncio.run(memory.retrieve("k", "?"))
    assert [i.id for i in memory.items("j")] == ["kept-0"]  # other keys stay
    asyncio.run(memory.ingest("k", make_text_events("new", 3)))
    assert [i.id for i in memory.items("k")] == ["new-0", "new-1", "new-2"]
    memory.forget("never-ingested")  # nothing to drop: no error


def test_text_surrogates_instead_of_images(image_events, recorder) -> None:
    """send_images=False sends each image's description (OCR off here: plain grey images).

    mockllm records the message; no answer quality is asserted.
    """
    memory = ContextMemory(send_images=False, ocr=False)
    asyncio.run(memory.ingest("k", image_events))
    answer = asyncio.run(memory.answer("k", "Describe.", recorder.model))
    assert answer.usage.images_sent == 0 and recorder.last_images() == []
    text = recorder.last_text()
    assert "[0:00:02.0] image img-2: photo number 2" in text
    assert text.index("img-0") < text.index("img-3") < text.index("Describe.")


def test_question_images_go_last_and_count(image_events, tmp_path, recorder) -> None:
    """The question's own image follows the memory (mockllm records the message)."""
    memory = ContextMemory(image_tokens=10)
    asyncio.run(memory.ingest("k", image_events[:1]))
    question_image = ImageRef(path=image_events[3].media.path)
    answer = asyncio.run(memory.answer("k", "Same?", recorder.model, images=[question_image]))
    assert recorder.last_images() == pixels([image_events[0], image_events[3]])
    assert answer.usage.images_sent == 2
    assert answer.usage.retrieved_ids == ["img-0"]  # question images are not memory items
    with pytest.raises(M3kitError, match="a.pdf: a question's pdf_page cannot be sent"):
        asyncio.run(memory.answer("k", "?", recorder.model,
                                  images=[PdfPageRef(path="a.pdf", page=0)]))


def test_answer_before_ingest_names_the_key(recorder) -> None:
    with pytest.raises(KeyError, match="no index for key 'missing'"):
        asyncio.run(ContextMemory().answer("missing", "?", recorder.model))


def test_config_names_what_changes_answers() -> None:
    a = ContextMemory(token_budget=500, image_tokens=64)
    assert a.config() == {"memory": "context", "token_budget": 500, "image_tokens": 64,
                          "send_images": True, "tokens_per_char": 0.25, "ocr": None}
    assert ContextMemory(send_images=False).config()["ocr"] == "rapidocr"


def test_the_ocr_reader_is_injected(reader) -> None:
    """The reader is the memory's constructor argument, named in the config, never in it."""
    memory = ContextMemory(send_images=False, reader=reader)
    assert memory.reader() is reader
    assert memory.config()["ocr"] == reader.name
    assert reader not in memory.config().values()
    assert ContextMemory(send_images=False).reader() is not reader  # the shared default
    with pytest.raises(ValueError):
        ContextMemory(token_budget=-1)
