"""``cognee`` (``m3kit.memory.adapters.cognee``): the real cognee 1.6.5 (SQLite, LanceDB,
Ladybug) fed through m3kit's streaming protocol. cognee's pins conflict with m3kit's main
environment: these tests run in cognee's own (README, "Memory"; ``.ci/run``) and are skipped
in the main one. The scripted server (``tests/fakeserver.py``) is cognee's graph-extraction
model (a knowledge graph built from each chunk's words, as JSON of the schema cognee sends), its
embeddings endpoint and the model under evaluation at once, so every request is read back."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("cognee", reason="cognee runs in an environment of its own: "
                                     "pip install -e '.[cognee]' there (README, Memory)")

from fakeserver import DEFAULT_ANSWER, ScriptedServer, minimal_instance
from m3kit.errors import M3kitError
from m3kit.memory import MemoryEvent, make_memory
from m3kit.memory.adapters.cognee import CogneeMemory, CogneeNotInstalledError

from .conftest import DAY, PLANTED, ask

# Planted after the question's time (or in another key): in no request after the cut.
LATER_SAME_SESSION = "cat also loves PLANTEDSESSION tuna"
LATER_DAY = "cat was renamed PLANTEDDAY"
OTHER_KEY = "cat is called PLANTEDOTHER"


def graph_and_summary(chunk: str) -> dict[str, Any]:
    """What cognee's model makes of a chunk here: a knowledge graph of its capitalised words
    (one entity each, linked in order) and a summary that is the chunk itself. One object
    for both of cognee's questions (each reads its own fields)."""
    names = list(dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z]+\b", chunk)))
    nodes = [{"id": name, "name": name, "type": "Thing", "description": f"{name} in: {chunk}"}
             for name in names]
    edges = [{"source_node_id": a, "target_node_id": b, "relationship_name": "mentioned_with"}
             for a, b in zip(names, names[1:], strict=False)]
    return {"nodes": nodes, "edges": edges, "summary": chunk, "description": chunk}


def reply(prompt: str) -> str:
    """``json_object`` requests (the schema in cognee's system prompt) are the chunks, which
    start with their ``[when]`` label; anything else asks the model under evaluation."""
    if prompt.startswith("["):
        return json.dumps(graph_and_summary(prompt))
    return DEFAULT_ANSWER


def structured(prompt: str, schema: Mapping[str, Any]) -> str:
    """``json_schema`` requests: the fields of ``graph_and_summary`` that ``schema`` asks for
    (its smallest instance for any other schema)."""
    properties = schema.get("properties", {})
    made = graph_and_summary(prompt)
    if "nodes" in properties or "summary" in properties:
        return json.dumps({name: made[name] for name in properties if name in made})
    return json.dumps(minimal_instance(schema))


def answer_prompts(server: ScriptedServer, start: int = 0) -> list[str]:
    """The prompts the model under evaluation was sent (cognee's own calls ask for JSON)."""
    return [r.prompt for r in server.records[start:] if r.response_format is None]


def round_event(id: str, time: float, said: str, *, session: str = "S1") -> MemoryEvent:
    return MemoryEvent(id=id, kind="round", time=time, text=f"Alice: {said}", speaker="Alice",
                       metadata={"when": f"{session} day {int(time // DAY) + 1}"})


@pytest.fixture
def server(scripted: Callable[..., ScriptedServer]) -> ScriptedServer:
    return scripted(answer=reply, structured=structured)


@pytest.fixture
def cognee_memory(server: ScriptedServer, tmp_path: Path) -> Iterator[Callable[..., CogneeMemory]]:
    made: list[CogneeMemory] = []

    def make(**settings: Any) -> CogneeMemory:
        endpoints = {"llm": {"base_url": server.base_url, "model": "scripted"},
                     "embedder": {"base_url": server.base_url, "model": "bow", "dims": 64}}
        memory = make_memory("cognee", store_dir=str(tmp_path), **{**endpoints, **settings})
        assert isinstance(memory, CogneeMemory)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


def test_the_answer_never_sees_what_came_after_the_question(
    server: ScriptedServer, answer_model: Any, cognee_memory: Callable[..., CogneeMemory]
) -> None:
    memory = cognee_memory(k=10)
    cat = [round_event("d1-1", 0.0, "my cat is called Miso"),
           round_event("d1-2", 60.0, f"my {LATER_SAME_SESSION}"),
           round_event("d2-1", DAY, f"my {LATER_DAY}", session="S2")]
    asyncio.run(memory.ingest("alice", cat))
    asyncio.run(memory.ingest("bob", [round_event("b-1", 0.0, f"my {OTHER_KEY}")]))
    ask(memory, "bob", "What is my cat called?", answer_model, None)
    start, embedded = len(server.records), len(server.embedded)

    answer = ask(memory, "alice", "What is my cat called?", answer_model, 30.0)

    assert answer.error is None and answer.output == DEFAULT_ANSWER
    (prompt,) = answer_prompts(server, start)
    assert "Miso" in prompt and "S1 day 1" in prompt  # the fact before the cut, with its time
    # cognee's own requests too: its extraction and summary prompts, every text it embedded
    sent = "\n".join([r.prompt for r in server.records[start:]] + server.embedded[embedded:])
    assert "Miso" in sent
    assert not any(marker in sent for marker in PLANTED), sent
    assert answer.usage.retrieved_ids == ["d1-1"]
    assert memory.fed("alice") == 1 and answer.usage.ingest_events == 1
    # what the advance cost, counted on the wire: cognee's chat calls and embeddings requests
    chats = [r for r in server.records[start:] if r.response_format is not None]
    assert len(chats) >= 2  # the chunk's graph and its summary
    assert all(r.response_format == {"type": "json_object"} for r in chats)  # the default way
    assert {r.max_tokens for r in chats} == {memory.max_tokens}  # every reply bounded
    assert answer.usage.ingest_calls > len(chats)  # and its embeddings
    assert answer.usage.ingest_prompt_tokens == sum(len(r.prompt.split()) for r in chats)
    assert answer.usage.ingest_completion_tokens > 0
    assert [item.event_id for item in memory.items("alice")] == ["d1-1"]
    # the same question after both plants: found, so their absence above was the cut's doing
    later = ask(memory, "alice", "My cat loves what? And was renamed what?", answer_model,
                2 * DAY)
    prompt = answer_prompts(server)[-1]
    assert "PLANTEDSESSION" in prompt and "PLANTEDDAY" in prompt
    assert "PLANTEDOTHER" not in prompt  # another key's dataset, never searched
    assert later.usage.ingest_events == 2 and later.usage.ingest_replays == 0


def test_an_earlier_question_replays_the_key_and_sees_only_its_past(
    server: ScriptedServer, answer_model: Any, cognee_memory: Callable[..., CogneeMemory]
) -> None:
    memory = cognee_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat is called Miso"),
        round_event("d2-1", DAY, f"my {LATER_DAY}", session="S2")]))
    late = ask(memory, "alice", "What is my cat called?", answer_model, 2 * DAY)
    assert "PLANTEDDAY" in answer_prompts(server)[-1]
    assert late.usage.ingest_replays == 0 and memory.fed("alice") == 2
    start = len(server.records)

    early = ask(memory, "alice", "What is my cat called?", answer_model, 1.0)

    assert early.usage.ingest_replays == 1 and early.usage.ingest_events == 1
    assert memory.fed("alice") == 1
    prompt = answer_prompts(server)[-1]
    assert "Miso" in prompt and "PLANTEDDAY" not in prompt
    assert not any("PLANTEDDAY" in r.prompt for r in server.records[start:])
    assert {item.event_id for item in memory.items("alice")} == {"d1-1"}


def test_a_later_memory_takes_cognee_over_and_the_earlier_one_refuses_to_go_on(
    server: ScriptedServer, answer_model: Any, cognee_memory: Callable[..., CogneeMemory]
) -> None:
    """cognee's configuration is per process: the memory started last has it (a run's, as
    the harness never closes one); an earlier one used again says so, never reads the later
    one's stores."""
    first, second = cognee_memory(), cognee_memory()
    asyncio.run(first.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso")]))
    asyncio.run(second.ingest("alice", [round_event("d1-1", 0.0, f"my {OTHER_KEY}")]))
    ask(first, "alice", "What is my cat called?", answer_model, 1.0)
    assert "Miso" in answer_prompts(server)[-1]

    ask(second, "alice", "What is my cat called?", answer_model, 1.0)

    prompt = answer_prompts(server)[-1]
    assert "PLANTEDOTHER" in prompt and "Miso" not in prompt
    with pytest.raises(M3kitError, match="another cognee memory was started"):
        ask(first, "alice", "What is my cat called?", answer_model, 1.0)


def test_a_batch_cognee_cannot_store_is_skipped_by_name_and_the_stream_goes_on(
    server: ScriptedServer, answer_model: Any, cognee_memory: Callable[..., CogneeMemory]
) -> None:
    server.faults["boom"] = ["server_error"] * 20  # every call on the chunk answers 500
    memory = cognee_memory(max_retries=0)  # one try: cognee's own floor would wait 240 s
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "qid=boom my dog is called Rex"),
        round_event("d1-2", 5.0, "my fish is called Bubbles")]))
    first = ask(memory, "alice", "What is my dog called?", answer_model, 1.0)

    assert first.error is None and first.usage.ingest_events == 1
    (failed,) = memory.skipped("alice")
    assert (failed.file, failed.record, failed.field) == ("alice", "d1-1", "cognee")
    assert "cognee did not store this batch" in failed.reason
    assert "InternalServerError" in failed.reason
    assert memory.items("alice") == []

    answer = ask(memory, "alice", "What is my fish called?", answer_model, 10.0)

    assert answer.error is None and answer.usage.ingest_replays == 0
    assert [item.event_id for item in memory.items("alice")] == ["d1-2"]
    assert "Bubbles" in answer_prompts(server)[-1]


def test_a_lost_connection_fails_the_question_and_the_next_one_rebuilds_the_key(
    server: ScriptedServer, answer_model: Any, cognee_memory: Callable[..., CogneeMemory]
) -> None:
    server.faults["lost"] = ["down"]  # the chunk's first call: the connection dropped
    memory = cognee_memory(max_retries=0)
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso"),
                                        round_event("d1-2", 5.0, "qid=lost my dog is Rex")]))
    ask(memory, "alice", "What is my cat called?", answer_model, 1.0)
    with pytest.raises(Exception) as raised:
        ask(memory, "alice", "What is my dog called?", answer_model, 6.0)
    assert "Connection" in "".join(type(e).__name__ for e in _chain(raised.value))
    assert memory.fed("alice") == 0 and memory.items("alice") == []  # the key starts over

    answer = ask(memory, "alice", "What is my dog called?", answer_model, 6.0)

    assert answer.error is None
    assert answer.usage.ingest_replays == 1 and answer.usage.ingest_events == 2
    assert sorted(item.event_id for item in memory.items("alice")) == ["d1-1", "d1-2"]
    assert "Rex" in answer_prompts(server)[-1]


def _chain(exc: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = exc
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


def test_no_key_in_the_config_or_in_any_stored_file(
    scripted: Callable[..., ScriptedServer], serve: Callable[..., str], secret: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import get_model

    server = scripted(answer=reply, structured=structured, api_key=secret)  # no key: 401
    monkeypatch.setenv("COGNEE_TEST_KEY", secret)
    endpoint = {"base_url": server.base_url, "model": "scripted",
                "api_key_env": "COGNEE_TEST_KEY"}
    # the schema as response_format this time: both of cognee's ways run
    memory = make_memory("cognee", llm=endpoint, embedder={**endpoint, "dims": 64},
                         store_dir=str(tmp_path), structured_output="json_schema")
    assert isinstance(memory, CogneeMemory)
    try:
        asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat is called Miso")]))
        model = get_model(serve("scripted", server), memoize=False)
        ask(memory, "alice", "What is my cat called?", model, 1.0)
        assert "Miso" in answer_prompts(server)[-1]
        assert server.records and all(r.authorized for r in server.records)
        assert any((r.response_format or {}).get("type") == "json_schema"
                   for r in server.records)

        assert secret not in json.dumps(memory.config())
        assert memory.config()["llm"]["api_key_env"] == "COGNEE_TEST_KEY"
        files = [path for path in tmp_path.rglob("*") if path.is_file()]
        assert any(path.name == "cognee_db" for path in files)
        assert not any(secret.encode() in path.read_bytes() for path in files)
    finally:
        memory.close()
    assert list(tmp_path.iterdir()) == []  # the run's folder is gone


def test_make_memory_builds_it_and_names_the_environment_when_cognee_is_missing(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory("cognee")
    assert isinstance(memory, CogneeMemory) and memory.config()["search"] == "GRAPH_COMPLETION"
    with pytest.raises(ValueError, match="k must be positive"):
        make_memory("cognee", k=0)
    monkeypatch.setitem(sys.modules, "cognee", None)  # as if not installed
    with pytest.raises(CogneeNotInstalledError, match=r"\.\[cognee\]") as raised:
        make_memory("cognee")
    assert isinstance(raised.value, M3kitError)
    # the registry (so every memory) imports without cognee: the adapter loads it when used
    listed = "import sys; sys.modules['cognee'] = None; from m3kit.memory.registry import " \
             "memory_names; assert 'cognee' in memory_names()"
    subprocess.run([sys.executable, "-c", listed], check=True)


@pytest.mark.slow
def test_an_m3exam_run_answers_through_cognee(
    server: ScriptedServer, serve: Callable[..., str], tmp_path: Path, isolated_dirs: Path
) -> None:
    """The whole harness in cognee's environment: M3Exam's task with ``memory=cognee`` on one
    persona, cognee's models and the model under evaluation all on the scripted server."""
    from inspect_ai.log import read_eval_log

    from m3kit.benchmarks import run_benchmark_task
    from m3kit.schema import read_record

    folder = tmp_path / "Ann_Lee"
    folder.mkdir()
    sessions = [
        {"session_id": "D1", "date": "2024-02-01", "dialogues": [
            {"round": "D1:1", "user": "My cat is called Miso.", "assistant": "Cute."}]},
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
                 "store_dir": str(tmp_path / "cognee")}

    log = run_benchmark_task("m3exam", serve("scripted", server), log_dir=tmp_path / "logs",
                             task_args={"data": str(folder), "memory": "cognee",
                                        "memory_config": endpoints})

    assert log.status == "success"
    samples = read_eval_log(log.location).samples or []
    records = [read_record(sample.metadata) for sample in samples]
    assert len(records) == 2 and all(r.failure is None and r.memory == "cognee" for r in records)
    assert sum(r.usage.ingest_events for r in records) == 2  # one key, fed once
    assert sum(r.usage.ingest_replays for r in records) == 0
    assert all(r.usage.ingest_calls > 0 for r in records if r.usage.ingest_events)
    assert any("Miso" in prompt for prompt in answer_prompts(server))

