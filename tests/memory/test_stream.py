"""Streaming replay (``m3kit.memory.stream``): a memory that rewrites what it stores is fed in
time order and asked at each question's time, so it never holds what came after the cut."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from m3kit.memory import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.context import ContextMemory
from m3kit.memory.rag import RagMemory
from m3kit.memory.registry import make_memory
from m3kit.memory.stream import IngestCost, StreamingMemory, StreamReplay, stream_order
from m3kit.schema import Usage

from .conftest import CACHED_TOKENS, INPUT_TOKENS, OUTPUT_TOKENS


class LatestValue(StreamingMemory):
    """A real (minimal) stateful memory: it keeps one value per subject, and a later statement
    overwrites the earlier one, as fact-merging memories do. Built from the whole stream and
    cut afterwards it would know only the last value; each statement it stores costs one
    (pretend) extraction call of 10 + 2 tokens."""

    name = "latest_value"

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, dict[str, tuple[str, float | None, str]]] = {}
        self.observed: list[str] = []
        self.resets = 0

    def config(self) -> dict[str, Any]:
        return {"memory": self.name}

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        table = self.values.setdefault(key, {})
        for event in events:
            subject, value = event.text.split("=")
            table[subject] = (value, event.time, event.id)
            self.observed.append(event.id)
        return IngestCost(calls=len(events), prompt_tokens=10 * len(events),
                          completion_tokens=2 * len(events))

    async def _reset(self, key: str) -> None:
        self.values.pop(key, None)
        self.resets += 1

    def _stored(self, key: str) -> list[MemoryItem]:
        return [MemoryItem(id=f"{key}:{subject}", key=key, event_id=source, modality="text",
                           text=f"{subject}={value}", time=time)
                for subject, (value, time, source) in self.values.get(key, {}).items()]

    async def _answer(self, key: str, items: list[MemoryItem],
                      request: AnswerRequest) -> MemoryAnswer:
        known = {i.text.split("=")[0]: i.text.split("=")[1] for i in items}
        return MemoryAnswer(output=known.get(request.query, "unknown"),
                            usage=Usage(prompt_tokens=5, retrieved_ids=[i.id for i in items]))


def _stream() -> list[MemoryEvent]:
    # given out of time order: the memory feeds them in time order
    return [
        MemoryEvent(id="late", kind="text", time=50.0, text="colour=blue"),
        MemoryEvent(id="early", kind="text", time=10.0, text="colour=red"),
        MemoryEvent(id="pet", kind="text", time=20.0, text="pet=cat"),
        MemoryEvent(id="always", kind="text", time=None, text="name=Alex"),
    ]


def _ask(memory: StreamingMemory, query: str, time: float | None) -> MemoryAnswer:
    return asyncio.run(memory.answer("k", query, model=None, time=time, query=query))


def test_stream_order_puts_undated_first_then_time() -> None:
    assert [e.id for e in stream_order(_stream())] == ["always", "early", "pet", "late"]


def test_a_question_sees_the_state_at_its_time_not_the_merged_future() -> None:
    memory = LatestValue()
    asyncio.run(memory.ingest("k", _stream()))
    assert memory.fed("k") == 0 and memory.items("k") == []  # ingest feeds nothing
    first = _ask(memory, "colour", 15.0)
    assert first.output == "red"  # the blue statement at 50 s is not fed yet
    assert memory.observed == ["always", "early"]
    # the first question paid for the two events it caused to be fed
    assert (first.usage.ingest_events, first.usage.ingest_calls) == (2, 2)
    assert (first.usage.ingest_prompt_tokens, first.usage.ingest_completion_tokens) == (20, 4)
    assert first.usage.ingest_replays == 0 and first.usage.prompt_tokens == 5
    later = _ask(memory, "colour", 60.0)
    assert later.output == "blue"
    assert memory.observed == ["always", "early", "pet", "late"]  # each event fed once
    assert (later.usage.ingest_events, later.usage.ingest_calls) == (2, 2)
    again = _ask(memory, "pet", 60.0)  # the state is there: nothing fed, nothing charged
    assert again.output == "cat" and again.usage.ingest_events == 0
    assert again.usage.ingest_calls == 0


def test_an_earlier_question_replays_the_key_and_never_sees_the_future() -> None:
    memory = LatestValue()
    asyncio.run(memory.ingest("k", _stream()))
    assert _ask(memory, "colour", 60.0).output == "blue"
    back = _ask(memory, "colour", 15.0)
    assert back.output == "red"  # had it answered from the state it had: blue
    assert back.usage.ingest_replays == 1 and memory.resets == 1
    assert back.usage.ingest_events == 2  # fed again from the start: undated + early
    assert memory.observed == ["always", "early", "pet", "late", "always", "early"]
    assert {i.event_id for i in memory.visible("k", 15.0)} == {"always", "early"}


def test_an_undated_question_sees_the_whole_stream() -> None:
    memory = LatestValue()
    asyncio.run(memory.ingest("k", _stream()))
    assert _ask(memory, "colour", None).output == "blue"
    assert memory.fed("k") == 4


def test_keys_are_fed_apart_and_forget_drops_the_stream() -> None:
    memory = LatestValue()
    asyncio.run(memory.ingest("k", _stream()))
    asyncio.run(memory.ingest("other", [MemoryEvent(id="o", kind="text", time=1.0,
                                                    text="colour=green")]))
    assert _ask(memory, "colour", 60.0).output == "blue"
    other = asyncio.run(memory.answer("other", "colour", None, time=60.0, query="colour"))
    assert other.output == "green"
    memory.forget("k")
    assert not memory.is_ingested("k") and memory.stream("k") == []
    with pytest.raises(KeyError):
        asyncio.run(memory.advance("k", 1.0))


def test_concurrent_questions_of_one_key_never_see_a_later_state() -> None:
    # answers on one key are serialised: a question never reads a state another one advanced
    # past its time while it answered
    memory = LatestValue()

    async def main() -> list[str]:
        await memory.ingest("k", _stream())
        results: list[str] = ["", "", ""]

        async def ask(n: int, time: float) -> None:
            answer = await memory.answer("k", "colour", None, time=time, query="colour")
            results[n] = answer.output

        async with asyncio.TaskGroup() as group:
            for n, time in enumerate((60.0, 15.0, 55.0)):
                group.create_task(ask(n, time))
        return results

    assert asyncio.run(main()) == ["blue", "red", "blue"]


@pytest.mark.parametrize("inner", [
    lambda reader: ContextMemory(send_images=False, ocr=False),
    lambda reader: RagMemory(ocr=False),
], ids=["context", "rag"])
def test_index_memories_answer_alike_on_both_paths(inner, recorder, make_text_events) -> None:
    # StreamReplay runs an index memory on the streaming path (each advance rebuilds it from
    # what was fed): the retrieved items and the prompt equal the index path's at every time
    events = make_text_events("alpha", 6) + make_text_events("beta", 6, start=2.5)
    direct, streamed = inner(None), StreamReplay(inner(None))
    asyncio.run(direct.ingest("k", events))
    asyncio.run(streamed.ingest("k", events))
    for time in (3.0, 1.0, 6.5, None):  # out of order: one replay on the way
        for memory in (direct, streamed):
            answer = asyncio.run(memory.answer("k", "which beta project detail?",
                                               recorder.model, time=time,
                                               query="beta project detail"))
            assert answer.output == "recorded"
        index_prompt, stream_prompt = (recorder.calls[-2], recorder.calls[-1])
        assert index_prompt[0].text == stream_prompt[0].text
    assert streamed.name == f"{direct.name}+stream" and streamed.replay == "stream"
    assert streamed.config()["replay"] == "stream"
    # the prompt's token accounting is the inner memory's
    assert answer.usage.prompt_tokens == INPUT_TOKENS + CACHED_TOKENS
    assert answer.usage.completion_tokens == OUTPUT_TOKENS


def test_make_memory_puts_an_index_memory_on_the_streaming_path() -> None:
    memory = make_memory("context", replay="stream", send_images=False)
    assert isinstance(memory, StreamReplay) and isinstance(memory.inner, ContextMemory)
    assert memory.inner.send_images is False
    plain = make_memory("context", replay="index")
    assert isinstance(plain, ContextMemory)
    with pytest.raises(ValueError, match="replay"):
        make_memory("context", replay="sideways")
    with pytest.raises(ValueError, match="already runs on the streaming path"):
        StreamReplay(memory)


def test_ingest_cost_adds_field_by_field() -> None:
    total = IngestCost(events=1, calls=2, prompt_tokens=3, completion_tokens=4, seconds=0.5,
                       replays=1) + IngestCost(events=10, calls=20, seconds=0.25)
    assert total == IngestCost(events=11, calls=22, prompt_tokens=3, completion_tokens=4,
                               seconds=0.75, replays=1)
    assert total.usage_update()["ingest_calls"] == 22
    summed = Usage(ingest_calls=2, retrieved_ids=["a"]) + Usage(ingest_calls=3,
                                                                retrieved_ids=["b"])
    assert summed.ingest_calls == 5 and summed.retrieved_ids == ["a", "b"]


class FailsOnce(LatestValue):
    """``LatestValue`` whose store fails on the event ``fail_on`` the first time it sees it
    (a lost connection mid-batch), after storing the events before it in the batch."""

    name = "fails_once"

    def __init__(self, fail_on: str) -> None:
        super().__init__()
        self.fail_on: str | None = fail_on

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        for n, event in enumerate(events):
            if event.id == self.fail_on:
                self.fail_on = None
                await super()._observe(key, events[:n])
                raise ConnectionError("the store went away")
        return await super()._observe(key, events)


def test_a_feed_that_fails_fails_its_question_and_the_key_starts_over() -> None:
    memory = FailsOnce("pet")
    asyncio.run(memory.ingest("k", _stream()))
    with pytest.raises(ConnectionError):
        _ask(memory, "colour", 30.0)
    # what the failed batch stored part of is gone: nothing half-fed is ever answered from
    assert memory.fed("k") == 0 and memory.items("k") == [] and memory.resets == 1
    answer = _ask(memory, "pet", 30.0)
    assert answer.output == "cat"
    assert answer.usage.ingest_replays == 1 and answer.usage.ingest_events == 3
    assert memory.observed == ["always", "early", "always", "early", "pet"]
