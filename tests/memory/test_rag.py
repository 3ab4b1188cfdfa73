"""``rag``: real OCR surrogates of real frames, real MiniLM embeddings, faiss top-k, the causal
cut inside the search, and the usage of each answer.

The model is inspect's ``mockllm/model`` (see ``conftest.Recorder``): it records the message the
memory assembled; nothing here depends on what a model would answer.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PIL import Image

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import ImageRef


@pytest.fixture(scope="module")
def fox(embedder, reader, text_frame_events) -> RagMemory:
    """A rag memory over three frames with text (OCR'd once for the module)."""
    memory = RagMemory(embedder=embedder, reader=reader, k=3)
    asyncio.run(memory.ingest("frames", text_frame_events))
    return memory


def test_frames_become_ocr_surrogates_with_their_pixels(fox, text_frame_events) -> None:
    items = fox.items("frames")
    assert [i.id for i in items] == ["frame-0", "frame-1", "frame-2"]
    for item, event in zip(items, text_frame_events, strict=True):
        assert item.modality == "frame"
        assert item.source == event.media  # the raw frame stays reachable
        assert item.text.startswith("Text in image: ")
    assert "red fox jumps" in items[0].metadata["ocr"]
    assert "blue whale" in items[1].text
    assert len(fox.index("frames")) == 3


def test_question_about_the_red_fox_retrieves_its_frame(fox, recorder) -> None:
    """mockllm records what was sent; retrieval itself is real (OCR + MiniLM + faiss)."""
    answer = asyncio.run(fox.answer("frames", "What did the red fox jump over?", recorder.model))
    ranked = answer.usage.retrieved_ids
    assert ranked[0] == "frame-0"
    assert ranked[-1] == "frame-1"  # the whale is the least similar
    text = recorder.last_text()
    # Sent oldest first with their labels, then the question.
    assert text.index("[0:00:01.0] frame frame-0: Text in image: the red fox jumps") < text.index(
        "[0:00:04.0] frame frame-2") < text.index("What did the red fox jump over?")
    assert answer.usage.images_sent == 0 and recorder.last_images() == []
    assert answer.usage.prompt_tokens == recorder.prompt_tokens
    assert answer.usage.completion_tokens == recorder.completion_tokens
    assert answer.usage.index_build_seconds == fox.build_seconds("frames") > 0


def test_causal_cut_applies_inside_the_search(fox, recorder) -> None:
    """At t=2 s the sleeping fox (t=4 s) is not in the past: it can never be retrieved, even as
    the best match. mockllm records the message."""
    answer = asyncio.run(fox.answer("frames", "Where does the red fox sleep?", recorder.model,
                                    time=2.0))
    assert answer.usage.retrieved_ids == ["frame-0", "frame-1"]
    assert "sleeps" not in recorder.last_text()
    later = asyncio.run(fox.answer("frames", "Where does the red fox sleep?", recorder.model))
    assert later.usage.retrieved_ids[0] == "frame-2"


def test_answer_reports_what_retrieve_ranks(fox, recorder) -> None:
    """The ids ``answer`` reports are ``retrieve``'s for the same query and time, in its order;
    ``retrieve`` holds the causal cut and returns at most ``k`` (mockllm records)."""
    question = "Where does the red fox sleep?"
    for time in (None, 2.0):
        ranked = asyncio.run(fox.retrieve("frames", question, time=time))
        answer = asyncio.run(fox.answer("frames", question, recorder.model, time=time))
        assert answer.usage.retrieved_ids == [i.id for i in ranked]
    # At t = 2 s the sleeping fox (t = 4 s) is not visible, even as the best match.
    assert [i.id for i in asyncio.run(fox.retrieve("frames", question, time=2.0))] == [
        "frame-0", "frame-1"]
    top = asyncio.run(fox.retrieve("frames", question, k=1))
    assert [i.id for i in top] == ["frame-2"] and "sleeps" in top[0].text


def test_forget_drops_items_and_index(embedder, make_text_events) -> None:
    memory = RagMemory(embedder=embedder, k=2, ocr=False, retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("a", make_text_events("alpha", 3)))
    memory.forget("a")
    assert not memory.is_ingested("a") and memory.build_seconds("a") == 0.0
    with pytest.raises(KeyError):
        memory.index("a")
    asyncio.run(memory.ingest("a", make_text_events("bravo", 2)))
    assert len(memory.index("a")) == 2
    ranked = asyncio.run(memory.retrieve("a", "bravo detail number 1"))
    assert ranked[0].id == "bravo-1" and ranked[0].text.startswith("bravo note 1")


def test_query_override_replaces_the_prompt_for_retrieval(fox, recorder) -> None:
    """The prompt's choices mention the whale; the query asks about the fox (mockllm records)."""
    prompt = "Answer with a letter. (A) a blue whale in the ocean (B) a fence"
    plain = asyncio.run(fox.answer("frames", prompt, recorder.model))
    assert plain.usage.retrieved_ids[0] == "frame-1"
    steered = asyncio.run(fox.answer("frames", prompt, recorder.model,
                                     query="What did the red fox jump over?"))
    assert steered.usage.retrieved_ids[0] == "frame-0"
    assert recorder.last_text().endswith(prompt)


def test_send_images_sends_the_retrieved_pixels(embedder, image_events, recorder) -> None:
    """Descriptions are retrieved, the images themselves are sent (mockllm records)."""
    memory = RagMemory(embedder=embedder, k=2, send_images=True, ocr=False)
    asyncio.run(memory.ingest("photos", image_events))
    answer = asyncio.run(memory.answer("photos", "photo number 3", recorder.model))
    assert answer.usage.retrieved_ids[0] == "img-3"
    assert answer.usage.images_sent == 2
    by_id = {e.id: e for e in image_events}
    chosen = sorted(answer.usage.retrieved_ids, key=lambda i: by_id[i].time)  # time order
    assert recorder.last_images() == [Path(by_id[i].media.path).read_bytes() for i in chosen]
    assert isinstance(memory.items("photos")[0].source, ImageRef)


def test_index_engines_agree(embedder, make_text_events, recorder) -> None:
    events = make_text_events("alpha", 6)
    ranked = {}
    for engine in ("faiss", "numpy"):
        memory = RagMemory(embedder=embedder, k=4, ocr=False,
                           retrieval=RetrievalConfig(index=engine))
        asyncio.run(memory.ingest("a", events))
        answer = asyncio.run(memory.answer("a", "detail number 4", recorder.model))
        ranked[engine] = answer.usage.retrieved_ids
    assert ranked["faiss"] == ranked["numpy"]
    assert ranked["faiss"][0] == "alpha-4"


def test_items_without_text_are_kept_but_not_indexed(embedder, tmp_path, recorder) -> None:
    Image.new("RGB", (8, 8)).save(tmp_path / "dark.jpg")
    events = [MemoryEvent(id="dark", kind="frame", time=0.0,
                          media=ImageRef(path=str(tmp_path / "dark.jpg"))),
              MemoryEvent(id="said", kind="transcript", time=1.0, text="hello there")]
    memory = RagMemory(embedder=embedder, ocr=False)
    asyncio.run(memory.ingest("k", events))
    assert [i.id for i in memory.items("k")] == ["dark", "said"]
    assert len(memory.index("k")) == 1
    answer = asyncio.run(memory.answer("k", "hello", recorder.model))
    assert answer.usage.retrieved_ids == ["said"]
    empty = asyncio.run(memory.answer("k", "hello", recorder.model, time=0.5))
    assert empty.usage.retrieved_ids == []
    assert recorder.last_text() == "hello"  # nothing retrieved: the bare question


def test_config(reader) -> None:
    memory = RagMemory(k=5, ocr=False, retrieval=RetrievalConfig(index="numpy"))
    assert memory.config() == {"memory": "rag", "k": 5, "embedder": "all-MiniLM-L6-v2",
                               "index": "numpy", "retrieval": "hybrid", "views": True,
                               "rewriting": True,
                               "expander": None, "reranker": None, "rerank_depth": None,
                               "send_images": False, "ocr": None}
    # The injected reader is named by its engine; the object never enters the config.
    reading = RagMemory(k=5, reader=reader, retrieval=RetrievalConfig(index="numpy"))
    assert reading.reader() is reader and reading.config()["ocr"] == "rapidocr"
    with pytest.raises(ValueError):
        RagMemory(k=0)


def test_text_and_multimodal_variants_send_what_they_say(embedder, image_events, recorder) -> None:
    """The same retrieval; "rag-text" sends the descriptions, "rag-mm" the photos."""
    from m3kit.memory import make_memory

    sent = {}
    for name in ("rag-text", "rag-mm"):
        memory = make_memory(name, embedder=embedder, k=2, ocr=False, index="numpy")
        asyncio.run(memory.ingest("photos", image_events))
        answer = asyncio.run(memory.answer("photos", "Show me photo number 2", recorder.model))
        sent[name] = (answer.usage.retrieved_ids, answer.usage.images_sent,
                      "image img-2: photo number 2" in recorder.last_text())
    assert sent["rag-text"][0] == sent["rag-mm"][0]
    assert sent["rag-text"][1:] == (0, True)
    assert sent["rag-mm"][1:] == (2, False)


def test_the_cosine_gate_reaches_an_indexed_memory(embedder) -> None:
    """``min_cosine`` gates dense hits in ``rag`` as in ``videorag``: a gate no text clears
    leaves a dense search with nothing, none leaves every text."""
    lines = ["the red fox sleeps in its den", "a blue whale swims in the ocean"]
    events = [MemoryEvent(id=f"line-{n}", kind="text", time=float(n), text=text)
              for n, text in enumerate(lines)]

    def found(gate: float | None) -> list[str]:
        memory = RagMemory(embedder=embedder, k=2,
                           retrieval=RetrievalConfig(mode="dense", min_cosine=gate))
        asyncio.run(memory.ingest("lines", events))
        ranked = asyncio.run(memory.retrieve("lines", "where does the fox sleep"))
        return [item.id for item in ranked]

    assert len(found(None)) == 2
    assert found(0.99) == []
