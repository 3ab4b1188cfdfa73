"""``memoryos`` (``m3kit.memory.adapters.memoryos``): the real MemoryOS (``memoryos-pro`` 0.1.0,
installed with ``--no-deps`` on m3kit's numpy, faiss-cpu and sentence-transformers) fed through
m3kit's streaming protocol. The scripted server (``tests/fakeserver.py``) is MemoryOS's model
and the model under evaluation at once, so every request, and so every prompt, is read back
from it; MemoryOS embeds with the packaged MiniLM."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from fakeserver import DEFAULT_ANSWER, RequestRecord, ScriptedServer
from m3kit.errors import M3kitError
from m3kit.memory import MemoryEvent, make_memory
from m3kit.memory.adapters.memoryos import MemoryosMemory, MemoryosNotInstalledError
from m3kit.schema import ImageRef

from .conftest import DAY, PLANTED, ask

pytestmark = pytest.mark.skipif(importlib.util.find_spec("memoryos") is None,
                                reason="memoryos-pro (pip install --no-deps memoryos-pro==0.1.0)")

GARBLE = "GARBLE"  # a round whose topic summary reply is not MemoryOS's JSON
# Planted after the question's time (or in another key): never in any prompt of the question.
LATER_SAME_SESSION = "cat also loves PLANTEDSESSION tuna"
LATER_DAY = "cat was renamed PLANTEDDAY"
OTHER_KEY = "cat is called PLANTEDOTHER"
# How each of MemoryOS's requests begins (its user prompts, memoryos/prompts.py).
KEYWORDS = "Please extract the 3-5 most important keywords"
CONTINUITY = "Determine if these two conversation pages are continuous"
META = "Update the conversation meta-summary"
SUMMARY = "Please analyze the following dialogue and generate extremely concise subtopic"
PROFILE = "Please analyze the latest user-AI conversation below"
KNOWLEDGE = "Please extract user private data and assistant knowledge"
MEMORYOS_PROMPTS = (KEYWORDS, CONTINUITY, META, SUMMARY, PROFILE, KNOWLEDGE)
# Heat at which MemoryOS's model writes the profile and knowledge: low, so tests reach them.
HOT = {"mid_term_heat_threshold": 1.0}


def reply(prompt: str) -> str:
    """The scripted server's answer, by MemoryOS's prompt: keywords are the text's first
    words, a topic summary the dialogue itself (garbled for ``GARBLE``), the knowledge each
    user line; the model under evaluation gets the default answer."""
    if prompt.startswith(KEYWORDS):
        text = prompt.split(":\n", 1)[1].rsplit("\n\nKeywords:", 1)[0]
        return ", ".join(list(dict.fromkeys(re.findall(r"[a-z0-9]+", text.lower())))[:5])
    if prompt.startswith(CONTINUITY):
        return "false"
    if prompt.startswith(META):
        return "A chat between Alice and the assistant."
    if prompt.startswith(SUMMARY):
        text = prompt.split("Conversation content:\n", 1)[1]
        if GARBLE in text:
            return "Sure! Here are the topics: pets and names"
        return json.dumps([{"theme": "pets", "keywords": ["pets"], "content": text}])
    if prompt.startswith(PROFILE):
        return "Alice is a pet owner."
    if prompt.startswith(KNOWLEDGE):
        said = [line.split(" (Timestamp", 1)[0] for line in prompt.splitlines()
                if line.startswith("User: ")]
        return "【User Private Data】\n" + "\n".join(f"- {s}" for s in said) + \
            "\n【Assistant Knowledge】\n- None"
    return DEFAULT_ANSWER


def is_memoryos(record: RequestRecord) -> bool:
    return record.prompt.startswith(MEMORYOS_PROMPTS)


def answer_prompts(records: list[RequestRecord]) -> list[str]:
    """The prompts the model under evaluation was sent (MemoryOS's own calls left out)."""
    return [r.prompt for r in records if not is_memoryos(r)]


def tokens(text: str) -> int:
    return max(1, len(text.split()))  # how the scripted server counts


def round_event(id: str, time: float, said: str, reply: str = "", *, session: str = "S1"
                ) -> MemoryEvent:
    text = f"Alice: {said}" + (f"\nassistant: {reply}" if reply else "")
    return MemoryEvent(id=id, kind="round", time=time, text=text, speaker="Alice",
                       metadata={"when": f"{session} day {int(time // DAY) + 1}"})


@pytest.fixture
def server(scripted: Callable[..., ScriptedServer]) -> ScriptedServer:
    return scripted(answer=reply)


@pytest.fixture
def memoryos_memory(server: ScriptedServer, tmp_path: Path
                    ) -> Iterator[Callable[..., MemoryosMemory]]:
    made: list[MemoryosMemory] = []

    def make(memoryos: dict[str, Any] | None = None, **settings: Any) -> MemoryosMemory:
        # a short-term memory of one round by default: each round moves on to mid-term
        # memory at once, so MemoryOS's model works on every round
        memory = make_memory("memoryos", llm={"base_url": server.base_url, "model": "scripted"},
                             memoryos={"short_term_capacity": 1, **(memoryos or {})},
                             store_dir=str(tmp_path / "store"), **settings)
        assert isinstance(memory, MemoryosMemory)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


def test_the_answer_never_sees_what_came_after_the_question(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory]
) -> None:
    """Every layer in play (a short-term round, a mid-term page, the profile and knowledge its
    model wrote): a fact before the cut reaches the answer, none planted after it (later the
    same session, a later day) or in another key reaches it or any of MemoryOS's requests."""
    memory = memoryos_memory({"short_term_capacity": 2, **HOT})
    cat = [round_event("d1-1", 0.0, "my cat is called Miso", "What a nice name."),
           round_event("d1-2", 10.0, "my dog is called Rex", "Good dog."),
           round_event("d1-3", 60.0, f"my {LATER_SAME_SESSION}"),
           round_event("d2-1", DAY, f"my {LATER_DAY}", session="S2")]
    asyncio.run(memory.ingest("alice", cat))
    asyncio.run(memory.ingest("bob", [round_event("b-1", 0.0, f"my {OTHER_KEY}"),
                                      round_event("b-2", 5.0, "hello")]))
    ask(memory, "bob", "What is my cat called?", answer_model, None)
    start = len(server.records)

    answer = ask(memory, "alice", "What is my cat called and what does it love?",
                 answer_model, 30.0)

    assert answer.error is None and answer.output == DEFAULT_ANSWER
    (prompt,) = answer_prompts(server.records[start:])
    # the page of d1-1 (mid-term) with its time label, d1-2 (short-term), the model's notes
    assert "[S1 day 1] Alice: my cat is called Miso" in prompt and "Rex" in prompt
    assert "Alice is a pet owner." in prompt and "- User: Alice: my cat is called Miso" in prompt
    sent = "\n".join(r.prompt for r in server.records[start:])  # MemoryOS's own calls too
    assert any(is_memoryos(r) for r in server.records[start:])
    assert not any(marker in sent for marker in PLANTED), sent
    assert answer.usage.retrieved_ids == ["d1-1", "d1-2"]  # the page first, then short-term
    assert memory.fed("alice") == 2 and answer.usage.ingest_events == 2
    assert {item.event_id for item in memory.items("alice")} == {"d1-1", "d1-2", ""}
    # the same question after both plants: found, so their absence above was the cut's doing
    later = ask(memory, "alice", "What is my cat called and what does it love?",
                answer_model, 2 * DAY)
    (prompt,) = answer_prompts(server.records[-1:])
    assert "PLANTEDSESSION" in prompt and "PLANTEDDAY" in prompt
    assert "PLANTEDOTHER" not in prompt  # another key's MemoryOS, never searched
    assert later.usage.ingest_events == 2 and later.usage.ingest_replays == 0


def test_an_earlier_question_replays_the_key_and_sees_only_its_past(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory]
) -> None:
    memory = memoryos_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat is called Miso", "Nice."),
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
    assert early.usage.retrieved_ids == ["d1-1"]


def test_ingest_calls_are_charged_to_the_question_and_the_retrieval_call_to_the_answer(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory],
    tmp_path: Path
) -> None:
    from m3kit.perception.embeddings import MiniLMEmbedder

    memory = memoryos_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat is called Miso", "Nice."),
        round_event("d1-2", 5.0, "my dog is called Rex", "Good.")]))

    answer = ask(memory, "alice", "What are my pets called?", answer_model, 10.0)

    *ingest, keywords, answered = server.records
    assert all(is_memoryos(r) for r in ingest) and not is_memoryos(answered)
    assert keywords.prompt.startswith(KEYWORDS) and "What are my pets called?" in keywords.prompt
    usage = answer.usage
    assert usage.ingest_calls == len(ingest) > 0 and usage.ingest_events == 2
    assert usage.ingest_prompt_tokens == sum(tokens(r.prompt) for r in ingest)
    assert usage.ingest_completion_tokens == sum(tokens(reply(r.prompt)) for r in ingest)
    assert usage.ingest_seconds > 0
    # MemoryOS's retrieval called its model: counted with the answer's own call
    assert usage.model_calls == 2
    assert usage.prompt_tokens == tokens(keywords.prompt) + tokens(answered.prompt)
    assert usage.completion_tokens == tokens(reply(keywords.prompt)) + tokens(DEFAULT_ANSWER)
    # MemoryOS embedded with the packaged MiniLM (MemoryOS's own all-MiniLM-L6-v2, no hub)
    (page,) = [p for p in _pages(tmp_path / "store") if "Miso" in p["user_input"]]
    text = f"User: {page['user_input']} Assistant: {page['agent_response']}"
    expected = MiniLMEmbedder().embed([text])[0]
    assert np.allclose(page["page_embedding"], expected, atol=1e-5)


def test_a_failed_call_or_an_unreadable_reply_is_named_and_the_stream_goes_on(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory]
) -> None:
    """MemoryOS catches both itself (its fallback text, a general session) and stores the
    round anyway: the adapter names each round concerned."""
    server.faults["boom"] = ["server_error"] * 2  # both attempts (max_retries=1) answer 500
    server.faults["junk"] = ["garbage"]  # a body that is not JSON
    memory = memoryos_memory(max_retries=1)
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, f"{GARBLE} my cat is called Miso", "Nice."),
        round_event("d1-2", 5.0, "qid=boom my dog is called Rex", "Good."),
        round_event("d1-3", 7.0, "qid=junk my bird is called Kiwi", "Tweet."),
        round_event("d1-4", 9.0, "my fish is called Bubbles", "Wet.")]))

    answer = ask(memory, "alice", "What is my fish called?", answer_model, 10.0)

    assert answer.error is None
    garbled, failed, junk = memory.skipped("alice")
    assert (garbled.file, garbled.record, garbled.field) == ("alice", "d1-1", "memoryos")
    assert "topic-summary reply is not its JSON" in garbled.reason
    assert "Sure! Here are the topics" in garbled.reason
    assert failed.record == "d1-2" and "InternalServerError" in failed.reason
    assert "Error: Could not get response from LLM." in failed.reason
    assert junk.record == "d1-3" and "its model call failed" in junk.reason
    assert [r.outcome for r in server.requests_for("boom")][:2] == ["server_error"] * 2
    assert {i.event_id for i in memory.items("alice")} >= {"d1-1", "d1-2", "d1-3", "d1-4"}
    assert "Bubbles" in answer_prompts(server.records)[-1]


def test_a_lost_connection_fails_the_question_and_the_next_one_rebuilds_the_key(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory]
) -> None:
    """MemoryOS would store its fallback text in place of every reply of a server that is
    down: the adapter stops instead, drops the key's store and fails the question; the next
    question rebuilds the key from its first event."""
    from openai import APIConnectionError

    server.faults["lost"] = ["down"]  # the first MemoryOS call about d1-2: connection dropped
    memory = memoryos_memory(max_retries=0)
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat is called Miso", "Nice."),
        round_event("d1-2", 5.0, "qid=lost my dog is Rex", "Good.")]))
    ask(memory, "alice", "What is my cat called?", answer_model, 1.0)
    with pytest.raises(Exception) as raised:
        ask(memory, "alice", "What is my dog called?", answer_model, 6.0)
    assert any(isinstance(e, APIConnectionError) for e in _chain(raised.value))
    assert memory.skipped("alice") == [] and memory.fed("alice") == 0
    assert memory.items("alice") == []

    answer = ask(memory, "alice", "What is my dog called?", answer_model, 6.0)

    assert answer.error is None and memory.skipped("alice") == []
    assert answer.usage.ingest_replays == 1 and answer.usage.ingest_events == 2
    assert "Rex" in answer_prompts(server.records)[-1]


def test_retrieve_from_picks_the_layers_the_answer_sees(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory]
) -> None:
    """The M3Exam release's choice (``retrieve_context`` only: mid-term pages and knowledge)
    leaves out the latest round (short-term) and the profile, which MemoryOS's own answer
    shows."""
    events = [round_event("d1-1", 0.0, "my cat is called Miso", "Nice."),
              round_event("d1-2", 5.0, "my dog is called Rex", "Good.")]
    prompts = []
    for retrieve_from in (None, ["mid_term", "knowledge"]):
        settings = {} if retrieve_from is None else {"retrieve_from": retrieve_from}
        memory = memoryos_memory({"short_term_capacity": 2, **HOT}, **settings)
        asyncio.run(memory.ingest("alice", events))
        answer = ask(memory, "alice", "What is my cat called?", answer_model, 10.0)
        prompts.append(answer_prompts(server.records)[-1])
        assert answer.usage.retrieved_ids == (["d1-1", "d1-2"] if retrieve_from is None
                                              else ["d1-1"])
    everything, release = prompts
    assert "Rex" in everything and "Alice is a pet owner." in everything
    assert "Rex" not in release and "Alice is a pet owner." not in release
    assert "[S1 day 1] Alice: my cat is called Miso" in release  # the mid-term page
    assert "- User: Alice: my cat is called Miso" in release  # knowledge
    assert memory.config()["retrieve_from"] == ["mid_term", "knowledge"]


def test_a_round_carries_its_attachments_text(
    server: ScriptedServer, answer_model: Any, memoryos_memory: Callable[..., MemoryosMemory],
    tmp_path: Path
) -> None:
    photo = tmp_path / "fox.png"
    Image.new("RGB", (32, 24), (200, 30, 30)).save(photo)
    memory = memoryos_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "look at this photo"),
        MemoryEvent(id="d1-1/img_1", kind="image", time=0.0, speaker="Alice",
                    text="a red fox in the snow", media=ImageRef(path=str(photo)))]))

    answer = ask(memory, "alice", "What animal is in the photo?", answer_model, 1.0)

    assert not any(r.image_urls for r in server.records)
    assert ("Alice: look at this photo\n[image d1-1/img_1: a red fox in the snow]"
            in answer_prompts(server.records)[-1])
    assert answer.usage.retrieved_ids == ["d1-1", "d1-1/img_1"]


def test_no_key_in_the_config_or_in_any_stored_file(
    scripted: Callable[..., ScriptedServer], serve: Callable[..., str], secret: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import get_model

    server = scripted(answer=reply, api_key=secret)  # a request without the key gets 401
    monkeypatch.setenv("MEMORYOS_TEST_KEY", secret)
    memory = make_memory("memoryos", llm={"base_url": server.base_url, "model": "scripted",
                                          "api_key_env": "MEMORYOS_TEST_KEY"},
                         memoryos={"short_term_capacity": 1}, store_dir=str(tmp_path))
    assert isinstance(memory, MemoryosMemory)
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso",
                                                    "Nice.")]))
    model = get_model(serve("scripted", server), memoize=False)
    ask(memory, "alice", "What is my cat called?", model, 1.0)
    assert "Miso" in answer_prompts(server.records)[-1]
    assert any(is_memoryos(r) for r in server.records)
    assert all(r.authorized for r in server.records)

    assert secret not in json.dumps(memory.config())
    assert memory.config()["llm"]["api_key_env"] == "MEMORYOS_TEST_KEY"
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.name == "mid_term.json" for path in files)
    assert not any(secret.encode() in path.read_bytes() for path in files)
    memory.close()
    assert list(tmp_path.iterdir()) == []  # the run's folder is gone


def test_make_memory_builds_it_and_names_the_install_command_when_memoryos_is_missing(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory("memoryos")
    assert isinstance(memory, MemoryosMemory) and memory.replay == "stream"
    assert memory.config()["retrieve_from"] == ["short_term", "mid_term", "profile",
                                                "knowledge"]
    with pytest.raises(ValueError, match="retrieve_from: unknown"):
        make_memory("memoryos", retrieve_from=["long_term"])
    with pytest.raises(ValueError, match="short_term_capacity"):
        make_memory("memoryos", memoryos={"short_term_capacity": 0})
    monkeypatch.setitem(sys.modules, "memoryos", None)  # as if not installed
    with pytest.raises(MemoryosNotInstalledError,
                       match=r"pip install --no-deps memoryos-pro==0\.1\.0") as raised:
        make_memory("memoryos")
    assert isinstance(raised.value, M3kitError)
    # the registry (so every memory) imports without memoryos: the adapter loads it when used
    listed = "import sys; sys.modules['memoryos'] = None; from m3kit.memory.registry import " \
             "memory_names; assert 'memoryos' in memory_names()"
    subprocess.run([sys.executable, "-c", listed], check=True)


def _pages(folder: Path) -> list[dict[str, Any]]:
    """Every mid-term page MemoryOS wrote under ``folder``."""
    return [page for path in folder.rglob("mid_term.json")
            for session in json.loads(path.read_text())["sessions"].values()
            for page in session["details"]]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = exc
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


@pytest.mark.slow
def test_an_m3exam_run_answers_through_memoryos(
    server: ScriptedServer, serve: Callable[..., str], tmp_path: Path, isolated_dirs: Path
) -> None:
    """The whole harness: M3Exam's task with ``memory=memoryos`` on one persona, MemoryOS's
    model and the model under evaluation both on the scripted server."""
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
    settings = {"llm": {"base_url": server.base_url, "model": "scripted"},
                "memoryos": {"short_term_capacity": 1}, "store_dir": str(tmp_path / "mos")}

    log = run_benchmark_task("m3exam", serve("scripted", server), log_dir=tmp_path / "logs",
                             task_args={"data": str(folder), "memory": "memoryos",
                                        "memory_config": settings})

    assert log.status == "success"
    samples = read_eval_log(log.location).samples or []
    records = [read_record(sample.metadata) for sample in samples]
    assert len(records) == 2 and all(r.failure is None and r.memory == "memoryos"
                                     for r in records)
    # one key, fed once: its three rounds (the photo within its round) charged across its
    # questions, as four events
    assert sum(r.usage.ingest_events for r in records) == 4
    assert sum(r.usage.ingest_replays for r in records) == 0
    assert all(r.usage.ingest_calls > 0 for r in records if r.usage.ingest_events)
    assert any("Miso" in prompt for prompt in answer_prompts(server.records))
    assert any("D1:1" in r.usage.retrieved_ids for r in records)
