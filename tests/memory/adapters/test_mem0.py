"""``mem0`` / ``mem0-vision`` (``m3kit.memory.adapters.mem0``): the real mem0 (``mem0ai``, faiss,
SQLite) fed through m3kit's streaming protocol. The scripted server (``tests/fakeserver.py``)
is mem0's extraction model, its embeddings endpoint (hashed bags of words) and the model under
evaluation at once, so every request, and so every prompt, is read back from it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from fakeserver import DEFAULT_ANSWER, RequestRecord, ScriptedServer
from m3kit.errors import M3kitError
from m3kit.memory import MemoryEvent, make_memory
from m3kit.memory.adapters.mem0 import Mem0Memory, Mem0NotInstalledError
from m3kit.schema import ImageRef

from .conftest import DAY, PLANTED, ask

# Not importorskip: importing mem0 here would import it before the adapter turns its
# telemetry off and points its home folder away from ~/.mem0.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("mem0") is None,
                                reason="the mem0 extra (pip install 'm3kit[mem0]')")

GARBLE = "GARBLE"  # a round whose extraction reply is not JSON
DESCRIBED = "a red fox sitting in the snow"  # what the vision model says of any image
# Planted after the question's time (or in another key): never in the answer model's prompt.
LATER_SAME_SESSION = "cat also loves PLANTEDSESSION tuna"
LATER_DAY = "cat was renamed PLANTEDDAY"
OTHER_KEY = "cat is called PLANTEDOTHER"


def new_messages(prompt: str) -> str:
    """The ``## New Messages`` section of mem0's extraction prompt ('' for other prompts)."""
    if "## New Messages\n" not in prompt:
        return ""
    return prompt.split("## New Messages\n", 1)[1].split("\n\n## ", 1)[0]


def reply(prompt: str) -> str:
    """The scripted server's answer, by the request's content: an extraction prompt gets one
    fact per new message line (its text as it came), a vision request a fixed description,
    anything else (the model under evaluation) the default answer."""
    new = new_messages(prompt)
    if new:
        if GARBLE in new:
            return "Sure! Here are the facts: the cat, the dog"
        lines = [line for line in new.splitlines() if line.strip()]
        return json.dumps({"memory": [{"id": str(n), "text": line}
                                      for n, line in enumerate(lines)]})
    if "providing an image" in prompt:
        return DESCRIBED
    return DEFAULT_ANSWER


def is_extraction(record: RequestRecord) -> bool:
    return record.response_format is not None


def answer_prompts(records: list[RequestRecord]) -> list[str]:
    """The prompts the model under evaluation was sent (mem0's own calls left out)."""
    return [r.prompt for r in records
            if not is_extraction(r) and "providing an image" not in r.prompt]


def round_event(id: str, time: float, said: str, reply: str = "", *, session: str = "S1"
                ) -> MemoryEvent:
    text = f"Alice: {said}" + (f"\nassistant: {reply}" if reply else "")
    return MemoryEvent(id=id, kind="round", time=time, text=text, speaker="Alice",
                       metadata={"when": f"{session} day {int(time // DAY) + 1}"})


@pytest.fixture
def server(scripted: Callable[..., ScriptedServer]) -> ScriptedServer:
    return scripted(answer=reply)


@pytest.fixture
def mem0_memory(server: ScriptedServer, tmp_path: Path) -> Iterator[Callable[..., Mem0Memory]]:
    made: list[Mem0Memory] = []

    def make(name: str = "mem0", **settings: Any) -> Mem0Memory:
        endpoints = {"llm": {"base_url": server.base_url, "model": "scripted"},
                     "embedder": {"base_url": server.base_url, "model": "bow", "dims": 64}}
        memory = make_memory(name, store_dir=str(tmp_path), **{**endpoints, **settings})
        assert isinstance(memory, Mem0Memory)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


def test_the_answer_never_sees_what_came_after_the_question(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory]
) -> None:
    memory = mem0_memory()
    cat = [round_event("d1-1", 0.0, "my cat is called Miso", "What a nice name."),
           round_event("d1-2", 60.0, f"my {LATER_SAME_SESSION}"),
           round_event("d2-1", DAY, f"my {LATER_DAY}", session="S2")]
    asyncio.run(memory.ingest("alice", cat))
    asyncio.run(memory.ingest("bob", [round_event("b-1", 0.0, f"my {OTHER_KEY}")]))
    ask(memory, "bob", "What is my cat called?", answer_model, None)
    start = len(server.records)

    answer = ask(memory, "alice", "What is my cat called and what does it love?",
                 answer_model, 30.0)

    assert answer.error is None and answer.output == DEFAULT_ANSWER
    (prompt,) = answer_prompts(server.records[start:])
    assert "Miso" in prompt and "S1 day 1" in prompt  # the fact before the cut, with its time
    sent = "\n".join(r.prompt for r in server.records[start:])  # mem0's own calls too
    assert not any(marker in sent for marker in PLANTED), sent
    assert answer.usage.retrieved_ids == ["d1-1"]
    assert memory.fed("alice") == 1 and answer.usage.ingest_events == 1
    assert [item.event_id for item in memory.items("alice")] == ["d1-1", "d1-1"]
    # the same question after both plants: found, so their absence above was the cut's doing
    later = ask(memory, "alice", "What is my cat called and what does it love?",
                answer_model, 2 * DAY)
    (prompt,) = answer_prompts(server.records[-1:])
    assert "PLANTEDSESSION" in prompt and "PLANTEDDAY" in prompt
    assert "PLANTEDOTHER" not in prompt  # another key's store, never searched
    assert later.usage.ingest_events == 2 and later.usage.ingest_replays == 0


def test_an_earlier_question_replays_the_key_and_sees_only_its_past(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory]
) -> None:
    memory = mem0_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat is called Miso"),
        round_event("d2-1", DAY, f"my {LATER_DAY}", session="S2")]))
    late = ask(memory, "alice", "What is my cat called?", answer_model, 2 * DAY)
    assert "PLANTEDDAY" in answer_prompts(server.records)[-1]
    assert late.usage.ingest_replays == 0 and memory.fed("alice") == 2

    early = ask(memory, "alice", "What is my cat called?", answer_model, 1.0)

    assert early.usage.ingest_replays == 1 and early.usage.ingest_events == 1
    assert memory.fed("alice") == 1
    prompt = answer_prompts(server.records)[-1]
    assert "Miso" in prompt and "PLANTEDDAY" not in prompt
    assert {item.event_id for item in memory.items("alice")} == {"d1-1"}


def test_ingest_calls_and_tokens_are_charged_to_the_question(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory]
) -> None:
    memory = mem0_memory()
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso",
                                                    "Nice."),
                                        round_event("d1-2", 5.0, "my dog is called Rex")]))
    answer = ask(memory, "alice", "What are my pets called?", answer_model, 10.0)

    extractions = [r for r in server.records if is_extraction(r)]
    assert len(extractions) == 2  # one per event
    usage = answer.usage
    # the server's own counts: words of the last user message and of the reply
    assert usage.ingest_prompt_tokens == sum(len(r.prompt.split()) for r in extractions)
    assert usage.ingest_completion_tokens == sum(len(reply(r.prompt).split())
                                                 for r in extractions)
    # each extraction, and every embeddings request but the question's own search
    assert usage.ingest_calls == len(extractions) + server.embedding_posts - 1
    assert usage.ingest_events == 2 and usage.ingest_seconds > 0
    assert usage.prompt_tokens > 0  # the answer's own tokens stay apart


def test_a_failed_extraction_skips_its_event_by_name_and_the_stream_goes_on(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory]
) -> None:
    server.faults["boom"] = ["server_error"] * 2  # both attempts (max_retries=1) answer 500
    memory = mem0_memory(max_retries=1)
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, f"{GARBLE} my cat is called Miso"),
        round_event("d1-2", 5.0, "qid=boom my dog is called Rex"),
        round_event("d1-3", 9.0, "my fish is called Bubbles")]))

    answer = ask(memory, "alice", "What is my fish called?", answer_model, 10.0)

    assert answer.error is None
    garbled, failed = memory.skipped("alice")
    assert (garbled.file, garbled.record, garbled.field) == ("alice", "d1-1", "mem0")
    assert "reply is not mem0's JSON" in garbled.reason and "Sure! Here are" in garbled.reason
    assert failed.record == "d1-2" and "InternalServerError" in failed.reason
    assert [r.outcome for r in server.requests_for("boom")][:2] == ["server_error"] * 2
    assert {item.event_id for item in memory.items("alice")} == {"d1-3"}
    assert "Bubbles" in answer_prompts(server.records)[-1]


def test_a_lost_connection_fails_the_question_and_the_next_one_rebuilds_the_key(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory]
) -> None:
    """A connection lost after the client's retries is no property of the event: the key's
    store (which may hold part of the batch) is dropped and the question fails with the error;
    the next question rebuilds the key from its first event."""
    from openai import APIConnectionError

    server.faults["lost"] = ["down"]  # the first extraction of d1-2: connection dropped
    memory = mem0_memory(max_retries=0)
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso"),
                                        round_event("d1-2", 5.0, "qid=lost my dog is Rex")]))
    ask(memory, "alice", "What is my cat called?", answer_model, 1.0)
    with pytest.raises(Exception) as raised:
        ask(memory, "alice", "What is my dog called?", answer_model, 6.0)
    assert any(isinstance(e, APIConnectionError) for e in _chain(raised.value))
    # the store dropped (it may hold part of the batch): the key starts over at its next question
    assert memory.skipped("alice") == [] and memory.fed("alice") == 0
    assert memory.items("alice") == []

    answer = ask(memory, "alice", "What is my dog called?", answer_model, 6.0)

    assert answer.error is None
    assert answer.usage.ingest_replays == 1 and answer.usage.ingest_events == 2
    assert sorted(item.event_id for item in memory.items("alice")) == ["d1-1", "d1-2"]
    assert "Rex" in answer_prompts(server.records)[-1]


def test_no_key_in_the_config_or_in_any_stored_file(
    scripted: Callable[..., ScriptedServer], serve: Callable[..., str], secret: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import get_model

    server = scripted(answer=reply, api_key=secret)  # a request without the key gets 401
    monkeypatch.setenv("MEM0_TEST_KEY", secret)
    endpoint = {"base_url": server.base_url, "model": "scripted", "api_key_env": "MEM0_TEST_KEY"}
    memory = make_memory("mem0", llm=endpoint, embedder={**endpoint, "dims": 64},
                         store_dir=str(tmp_path))
    assert isinstance(memory, Mem0Memory)
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso")]))
    model = get_model(serve("scripted", server), memoize=False)
    ask(memory, "alice", "What is my cat called?", model, 1.0)
    assert "Miso" in answer_prompts(server.records)[-1]
    assert all(r.authorized for r in server.records)

    assert secret not in json.dumps(memory.config())
    assert memory.config()["llm"]["api_key_env"] == "MEM0_TEST_KEY"
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.name == "history.db" for path in files)
    assert not any(secret.encode() in path.read_bytes() for path in files)
    memory.close()
    assert list(tmp_path.iterdir()) == []  # the run's folder is gone


def test_vision_sends_images_to_mem0_and_the_retrieved_ones_to_the_answer(
    server: ScriptedServer, answer_model: Any, mem0_memory: Callable[..., Mem0Memory],
    tmp_path: Path
) -> None:
    photo = tmp_path / "fox.png"
    Image.new("RGB", (32, 24), (200, 30, 30)).save(photo)
    events = [round_event("d1-1", 0.0, "look at this photo"),
              MemoryEvent(id="d1-1/img_1", kind="image", time=0.0, speaker="Alice",
                          text="a released caption", media=ImageRef(path=str(photo)))]
    text_only, vision = mem0_memory(), mem0_memory("mem0-vision")
    for memory in (text_only, vision):
        asyncio.run(memory.ingest("alice", events))

    ask(text_only, "alice", "What animal is in the photo?", answer_model, 1.0)
    assert not any(r.image_urls for r in server.records)  # text only: the caption went
    assert "a released caption" in answer_prompts(server.records)[-1]

    answer = ask(vision, "alice", "What red fox sitting in the snow?", answer_model, 1.0)
    (described,) = [r for r in server.records if "providing an image" in r.prompt]
    assert len(described.image_urls) == 1 and described.image_urls[0].startswith("data:image/")
    assert DESCRIBED in answer_prompts(server.records)[-1]
    assert "d1-1/img_1" in answer.usage.retrieved_ids and answer.usage.images_sent == 1
    assert vision.config()["vision"] and not text_only.config()["vision"]


def test_make_memory_builds_both_and_names_the_extra_when_mem0_is_missing(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    assert isinstance(make_memory("mem0"), Mem0Memory)
    assert make_memory("mem0-vision").config()["vision"] is True  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="k must be positive"):
        make_memory("mem0", k=0)
    monkeypatch.setitem(sys.modules, "mem0", None)  # as if not installed
    with pytest.raises(Mem0NotInstalledError, match=r"pip install 'm3kit\[mem0\]'") as raised:
        make_memory("mem0")
    assert isinstance(raised.value, M3kitError)
    # the registry (so every memory) imports without mem0: the adapter loads it when used
    listed = "import sys; sys.modules['mem0'] = None; from m3kit.memory.registry import " \
             "memory_names; assert {'mem0', 'mem0-vision'} <= set(memory_names())"
    subprocess.run([sys.executable, "-c", listed], check=True)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = exc
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


@pytest.mark.slow
def test_an_m3exam_run_answers_through_mem0(
    server: ScriptedServer, serve: Callable[..., str], tmp_path: Path, isolated_dirs: Path
) -> None:
    """The whole harness: M3Exam's task with ``memory=mem0`` on one persona, mem0's models and
    the model under evaluation all on the scripted server."""
    from inspect_ai.log import read_eval_log

    from m3kit.benchmarks import run_benchmark_task
    from m3kit.schema import read_record

    folder = tmp_path / "Ann_Lee"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (40, 30), (200, 30, 30)).save(folder / "images" / "img_1.png")
    sessions = [
        {"session_id": "D1", "date": "2024-02-01", "dialogues": [
            {"round": "D1:1", "user": "My cat is called Miso.", "assistant": "Cute."},
            {"round": "D1:2", "user": "A photo of my fox.", "assistant": "Nice.",
             "img_file": ["img_1.png"], "img_id": [1], "img_description": ["a red fox"]}]},
        {"session_id": "D2", "date": "2024-02-03", "dialogues": [
            {"round": "D2:1", "user": "My dog is called Rex.", "assistant": "Good name."}]}]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps([
        {"question": f"{text} qid={qid}", "answer": [answer], "supporting_facts": [fact],
         "type": "ss"}
        for qid, text, answer, fact in [("q1", "What is my cat called?", "Miso", "D1:1"),
                                        ("q2", "What is my dog called?", "Rex", "D2:1")]]))
    endpoints = {"llm": {"base_url": server.base_url, "model": "scripted"},
                 "embedder": {"base_url": server.base_url, "model": "bow", "dims": 64},
                 "store_dir": str(tmp_path / "mem0")}

    log = run_benchmark_task("m3exam", serve("scripted", server), log_dir=tmp_path / "logs",
                             task_args={"data": str(folder), "memory": "mem0",
                                        "memory_config": endpoints})

    assert log.status == "success"
    samples = read_eval_log(log.location).samples or []
    records = [read_record(sample.metadata) for sample in samples]
    assert len(records) == 2 and all(r.failure is None and r.memory == "mem0" for r in records)
    # one key, fed once: its four events (three rounds, one photo) charged across its questions
    assert sum(r.usage.ingest_events for r in records) == 4
    assert sum(r.usage.ingest_replays for r in records) == 0
    assert all(r.usage.ingest_calls > 0 for r in records if r.usage.ingest_events)
    assert any("Miso" in prompt for prompt in answer_prompts(server.records))
