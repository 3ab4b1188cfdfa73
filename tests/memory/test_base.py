"""The memory protocol itself: what ``Memory.answer`` hands every memory's ``_answer``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from m3kit.memory import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.schema import Usage


class RequestLog(Memory):
    """A real (minimal) memory: one item per event; answers with the query it was given."""

    name = "request_log"

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[AnswerRequest] = []

    def config(self) -> dict[str, Any]:
        return {"memory": self.name}

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        return [MemoryItem(id=e.id, key=key, event_id=e.id, modality="text", text=e.text,
                           time=e.time) for e in events]

    async def _answer(self, key: str, items: list[MemoryItem],
                      request: AnswerRequest) -> MemoryAnswer:
        self.requests.append(request)
        return MemoryAnswer(output=request.query,
                            usage=Usage(retrieved_ids=[i.id for i in items]))


@pytest.fixture
def log() -> RequestLog:
    memory = RequestLog()
    events = [MemoryEvent(id=f"e{n}", kind="text", time=float(n), text=f"note {n}")
              for n in range(3)]
    asyncio.run(memory.ingest("k", events))
    return memory


def test_query_defaults_to_the_prompt(log) -> None:
    answer = asyncio.run(log.answer("k", "Q: what? (A) x (B) y", model="m"))
    assert answer.output == "Q: what? (A) x (B) y"
    (request,) = log.requests
    assert request.prompt == request.query and request.model == "m"
    assert request.images == () and request.cache is None


def test_query_is_passed_apart_from_the_prompt(log) -> None:
    answer = asyncio.run(log.answer("k", "Q: what? (A) x (B) y", model="m", time=1.0,
                                    query="what?"))
    assert answer.output == "what?"
    assert log.requests[-1].prompt == "Q: what? (A) x (B) y"
    assert log.requests[-1].time == 1.0  # the cut reaches the memory's own retrieval
    assert answer.usage.retrieved_ids == ["e0", "e1"]  # the causal cut is the base's
    assert answer.usage.index_build_seconds == log.build_seconds("k") >= 0


def test_an_empty_query_falls_back_to_the_prompt(log) -> None:
    asyncio.run(log.answer("k", "the prompt", model="m", query=""))
    assert log.requests[-1].query == "the prompt"


def test_answer_before_ingest_names_the_key() -> None:
    with pytest.raises(KeyError, match="ingest it first"):
        asyncio.run(RequestLog().answer("nope", "p", model="m"))


def test_retrieve_without_a_ranking_is_the_visible_items_newest_first(log) -> None:
    assert [i.id for i in asyncio.run(log.retrieve("k", "q"))] == ["e2", "e1", "e0"]
    # The causal cut: e2 (t = 2) is after t = 1.5.
    assert [i.id for i in asyncio.run(log.retrieve("k", "q", time=1.5))] == ["e1", "e0"]
    assert [i.id for i in asyncio.run(log.retrieve("k", "q", k=1, time=1.5))] == ["e1"]
    assert [i.id for i in log.visible("k", 0.0)] == ["e0"]
    with pytest.raises(ValueError, match="k must be positive, got 0"):
        asyncio.run(log.retrieve("k", "q", k=0))


def test_undated_items_are_always_visible() -> None:
    memory = RequestLog()
    asyncio.run(memory.ingest("k", [MemoryEvent(id="note", kind="text", text="undated"),
                                    MemoryEvent(id="late", kind="text", time=5.0, text="x")]))
    assert [i.id for i in asyncio.run(memory.retrieve("k", "q", time=1.0))] == ["note"]


def test_forget_drops_items_and_build_time(log) -> None:
    log.forget("k")
    assert not log.is_ingested("k") and log.build_seconds("k") == 0.0
    with pytest.raises(KeyError, match="ingest it first"):
        asyncio.run(log.answer("k", "p", model="m"))
    asyncio.run(log.ingest("k", [MemoryEvent(id="again", kind="text", time=0.0, text="new")]))
    assert [i.id for i in log.items("k")] == ["again"]


def test_the_protocol_knows_no_ocr_reader() -> None:
    """OCR is a perception detail of the memories that read pixels, not of the protocol."""
    assert not hasattr(Memory, "reader") and not hasattr(RequestLog(), "_reader")
