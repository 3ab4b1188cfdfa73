"""Memory keys are isolated and built once, also under concurrency.

Two keys hold different content under *the same* event ids, so a leak would show as the other
key's text behind a familiar id. The model is inspect's ``mockllm/model`` (``conftest.Recorder``),
used only to see the exact message each answer sent.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from m3kit.memory import ContextMemory, Memory, MemoryEvent, RagMemory

KEYS = {"A": "alpha", "B": "bravo"}


@pytest.fixture(scope="module")
def streams(make_text_events) -> dict[str, list[MemoryEvent]]:
    """Per key: five notes naming the key, and a ``shared`` event whose id both keys use."""
    return {
        key: [*make_text_events(word, 5),
              MemoryEvent(id="shared", kind="text", time=9.0, text=f"the {word} secret code")]
        for key, word in KEYS.items()
    }


def _memories(embedder) -> list[Memory]:
    return [ContextMemory(), RagMemory(embedder=embedder, k=3, ocr=False)]


def _assert_only(key: str, text: str) -> None:
    other = next(word for k, word in KEYS.items() if k != key)
    assert KEYS[key] in text
    assert other not in text, f"key {key} leaked {other!r}"


@pytest.mark.parametrize("kind", ["context", "rag"])
def test_items_and_answers_stay_in_their_key(kind, embedder, streams, recorder) -> None:
    """mockllm records each message; the check is that no other key's text is in it."""
    memory = next(m for m in _memories(embedder) if m.name == kind)

    async def scenario() -> None:
        await asyncio.gather(*(memory.ingest(k, events) for k, events in streams.items()))
        for key, word in KEYS.items():
            items = memory.items(key)
            assert {i.key for i in items} == {key}
            assert {i.id for i in items} == {e.id for e in streams[key]}
            assert all(word in i.text for i in items)
            answer = await memory.answer(key, "What is the secret code?", recorder.model)
            assert set(answer.usage.retrieved_ids) <= {e.id for e in streams[key]}
            assert "shared" in answer.usage.retrieved_ids
            _assert_only(key, recorder.last_text())

    asyncio.run(scenario())


@pytest.mark.parametrize("kind", ["context", "rag"])
def test_concurrent_answers_never_mix_keys(kind, embedder, streams, recorder) -> None:
    """Twenty interleaved answers on two keys, all in flight at once; each sent message holds
    only its own key's items (mockllm records the messages, tagged by the question)."""
    memory = next(m for m in _memories(embedder) if m.name == kind)

    async def scenario() -> list:
        await asyncio.gather(*(memory.ingest(k, events) for k, events in streams.items()))
        asks = [(("A", "B")[n % 2], n % 5) for n in range(20)]
        answers = await asyncio.gather(*(
            # ``query`` steers rag to one note; the prompt names the key for the check below.
            memory.answer(key, f"Question {n} for key {key}.", recorder.model,
                          **({"query": f"{KEYS[key]} detail number {n}"} if kind == "rag" else {}))
            for key, n in asks
        ))
        return list(zip(asks, answers, strict=True))

    results = asyncio.run(scenario())
    for (key, n), answer in results:
        assert set(answer.usage.retrieved_ids) <= {e.id for e in streams[key]}
        if kind == "rag":
            assert answer.usage.retrieved_ids[0] == f"{KEYS[key]}-{n}"  # its own query won
    assert len(recorder.calls) == 20
    for (message,) in recorder.calls:
        text = message.text
        key = re.search(r"for key (\w)\.$", text).group(1)
        _assert_only(key, text)


class CountingContext(ContextMemory):
    """A context memory that counts its builds and holds each one open for a moment."""

    def __init__(self) -> None:
        super().__init__()
        self.builds: list[str] = []

    async def _build(self, key, events):
        self.builds.append(key)
        await asyncio.sleep(0.05)  # the other ingest calls arrive while this build runs
        return await super()._build(key, events)


def test_concurrent_ingest_of_one_key_builds_once(streams) -> None:
    memory = CountingContext()

    async def scenario() -> None:
        await asyncio.gather(*(memory.ingest(key, streams[key])
                               for key in ["A"] * 8 + ["B"] * 3))

    asyncio.run(scenario())
    assert sorted(memory.builds) == ["A", "B"]
    seconds = memory.build_seconds("A")
    assert seconds >= 0.05
    asyncio.run(memory.ingest("A", streams["B"]))  # a later ingest of a built key is a no-op
    assert memory.build_seconds("A") == seconds
    assert all("alpha" in i.text for i in memory.items("A"))


def test_concurrent_rag_ingest_builds_one_index(embedder, streams) -> None:
    memory = RagMemory(embedder=embedder, ocr=False)

    async def scenario() -> None:
        await asyncio.gather(*(memory.ingest("A", streams["A"]) for _ in range(6)))

    asyncio.run(scenario())
    assert len(memory.index("A")) == len(streams["A"])  # each item added once
    assert memory.items("B") == [] and not memory.is_ingested("B")
