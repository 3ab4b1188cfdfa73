"""``graphiti`` (``m3kit.memory.adapters.graphiti``): the real Graphiti (``graphiti-core``, one
embedded Kuzu graph per key) fed through m3kit's streaming protocol. The scripted server
(``tests/fakeserver.py``) is Graphiti's model (its JSON-schema requests answered by
``extraction``), its embeddings endpoint (hashed bags of words) and the model under evaluation
at once, so every request, and so every prompt, is read back from it."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from fakeserver import DEFAULT_ANSWER, RequestRecord, ScriptedServer, minimal_instance
from m3kit.errors import M3kitError
from m3kit.memory import MemoryEvent, make_memory
from m3kit.memory.adapters.graphiti import GraphitiMemory, GraphitiNotInstalledError
from m3kit.schema import ImageRef

from .conftest import DAY, PLANTED, ask

# Not importorskip: importing graphiti here would import it before the adapter turns its
# telemetry off.
pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("graphiti_core") is None,
                       reason="the graphiti extra (pip install 'm3kit[graphiti]')"),
    # graphiti-core 0.31.2 warns on each Kuzu graph that its Kuzu backend is deprecated
    pytest.mark.filterwarnings("ignore:The Kuzu backend is deprecated:DeprecationWarning"),
]

GARBLE = "GARBLE"  # an episode whose entity extraction reply is not JSON
# Planted after the question's time (or in another key): never in any request of the question.
LATER_SAME_SESSION = "Alice feeds Miso PLANTEDSESSION tuna"
LATER_DAY = "Alice renamed Miso PLANTEDDAY"
OTHER_KEY = "Bob calls his cat PLANTEDOTHER"
_CURRENT = re.compile(r"<CURRENT[ _]MESSAGE>\s*(.*?)\s*</CURRENT[ _]MESSAGE>", re.S)
_ENTITIES = re.compile(r"<ENTITIES>\s*(.*?)\s*</ENTITIES>", re.S)


def extraction(prompt: str, schema: Mapping[str, Any]) -> str:
    """Graphiti's model, scripted: its entities are the capitalised words of the episode's
    first line, its one fact links the first to the last and is that line's sentence; anything
    else it asks (deduplication, summaries, dates) gets the least its schema accepts."""
    current = _CURRENT.search(prompt)
    message = current.group(1) if current else ""
    said = message.split(": ", 1)[-1].split("\n", 1)[0]  # the user's line, not the reply
    if schema.get("title") == "ExtractedEntities":
        if GARBLE in message:
            return "Sure! The entities are: a cat, a dog"
        names = list(dict.fromkeys(re.findall(r"\b[A-Z][A-Za-z0-9]+\b", said)))
        return json.dumps({"extracted_entities": [
            {"name": name, "entity_type_id": 0, "episode_indices": [0]} for name in names]})
    if schema.get("title") == "ExtractedEdges":
        listed = _ENTITIES.search(prompt)
        names = [entity["name"] for entity in json.loads(listed.group(1))] if listed else []
        if len(names) < 2:
            return json.dumps({"edges": []})
        return json.dumps({"edges": [{
            "source_entity_name": names[0], "target_entity_name": names[-1],
            "relation_type": "SAID", "fact": said, "valid_at": None, "invalid_at": None}]})
    return json.dumps(minimal_instance(schema))


def is_graphiti(record: RequestRecord) -> bool:
    return record.response_format is not None


def answer_prompts(records: list[RequestRecord]) -> list[str]:
    """The prompts the model under evaluation was sent (Graphiti's own calls left out)."""
    return [r.prompt for r in records if not is_graphiti(r)]


def round_event(id: str, time: float, said: str, reply: str = "", *, session: str = "S1",
                date: str = "2024-02-01") -> MemoryEvent:
    """A round as ``conversation_events`` makes it: its session's id and ISO date."""
    text = f"Alice: {said}" + (f"\nassistant: {reply}" if reply else "")
    return MemoryEvent(id=id, kind="round", time=time, text=text, speaker="Alice",
                       metadata={"when": f"{session} {date}", "session_id": session,
                                 "session_date": date})


@pytest.fixture
def server(scripted: Callable[..., ScriptedServer]) -> ScriptedServer:
    return scripted(structured=extraction)


@pytest.fixture
def graphiti_memory(server: ScriptedServer, tmp_path: Path
                    ) -> Iterator[Callable[..., GraphitiMemory]]:
    made: list[GraphitiMemory] = []

    def make(**settings: Any) -> GraphitiMemory:
        endpoints = {"llm": {"base_url": server.base_url, "model": "scripted"},
                     "embedder": {"base_url": server.base_url, "model": "bow", "dims": 64}}
        memory = make_memory("graphiti", store_dir=str(tmp_path), **{**endpoints, **settings})
        assert isinstance(memory, GraphitiMemory)
        made.append(memory)
        return memory

    yield make
    for memory in made:
        memory.close()


def sent_since(server: ScriptedServer, start: int, embedded: int) -> str:
    """Every chat prompt and every embedded text the server got since then."""
    return "\n".join([r.prompt for r in server.records[start:]] + server.embedded[embedded:])


def test_the_answer_never_sees_what_came_after_the_question(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory]
) -> None:
    memory = graphiti_memory()
    alice = [round_event("d1-1", 0.0, "my cat Miso loves Salmon", "What a nice name."),
             round_event("d1-2", 60.0, LATER_SAME_SESSION),
             round_event("d2-1", DAY, LATER_DAY, session="S2", date="2024-02-02")]
    asyncio.run(memory.ingest("alice", alice))
    asyncio.run(memory.ingest("bob", [round_event("b-1", 0.0, OTHER_KEY)]))
    ask(memory, "bob", "What is my cat called?", answer_model, None)
    start, embedded = len(server.records), len(server.embedded)

    answer = ask(memory, "alice", "What does Miso love?", answer_model, 30.0)

    assert answer.error is None and answer.output == DEFAULT_ANSWER
    (prompt,) = answer_prompts(server.records[start:])
    # the fact before the cut, the episode it came from with its session and date
    assert "- my cat Miso loves Salmon [from d1-1]" in prompt
    assert "[S1 2024-02-01] round d1-1: Alice: my cat Miso loves Salmon" in prompt
    sent = sent_since(server, start, embedded)  # Graphiti's own requests too
    assert not any(marker in sent for marker in PLANTED), sent
    # Graphiti was told the episode's time: its session's date
    assert "2024-02-01 00:00:00+00:00" in sent
    assert answer.usage.retrieved_ids == ["d1-1"]
    assert memory.fed("alice") == 1 and answer.usage.ingest_events == 1
    assert [item.event_id for item in memory.items("alice")] == ["d1-1"]
    # the same question after both plants: found, so their absence above was the cut's doing
    later = ask(memory, "alice", "What does Miso love?", answer_model, 2 * DAY)
    (prompt,) = answer_prompts(server.records[-1:])
    assert "PLANTEDSESSION" in prompt and "PLANTEDDAY" in prompt
    assert "[S2 2024-02-02] round d2-1" in prompt
    assert "PLANTEDOTHER" not in prompt  # another key's graph, never searched
    assert later.usage.ingest_events == 2 and later.usage.ingest_replays == 0


def test_an_earlier_question_replays_the_key_and_sees_only_its_past(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory]
) -> None:
    memory = graphiti_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat Miso loves Salmon"),
        round_event("d2-1", DAY, LATER_DAY, session="S2", date="2024-02-02")]))
    late = ask(memory, "alice", "What is Miso called now?", answer_model, 2 * DAY)
    assert "PLANTEDDAY" in answer_prompts(server.records)[-1]
    assert late.usage.ingest_replays == 0 and memory.fed("alice") == 2
    # a fact is visible once every episode it came from is
    assert [item.event_id for item in memory.visible("alice", 1.0)] == ["d1-1"]

    early = ask(memory, "alice", "What is Miso called now?", answer_model, 1.0)

    assert early.usage.ingest_replays == 1 and early.usage.ingest_events == 1
    assert memory.fed("alice") == 1
    prompt = answer_prompts(server.records)[-1]
    assert "Salmon" in prompt and "PLANTEDDAY" not in prompt
    assert {item.event_id for item in memory.items("alice")} == {"d1-1"}


def test_ingest_calls_and_tokens_are_charged_to_the_question(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory]
) -> None:
    memory = graphiti_memory()
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat Miso loves Salmon", "Nice."),
        round_event("d1-2", 5.0, "my dog Rex loves Bones")]))

    answer = ask(memory, "alice", "What do my pets love?", answer_model, 10.0)

    calls = [r for r in server.records if is_graphiti(r)]
    assert len(calls) >= 4  # at least entities and facts of each episode
    usage = answer.usage
    # the server's own counts: words of the last user message and of the reply
    assert usage.ingest_prompt_tokens == sum(len(r.prompt.split()) for r in calls)
    assert usage.ingest_completion_tokens == sum(
        max(1, len(extraction(r.prompt, r.response_format["json_schema"]["schema"]).split()))
        for r in calls)
    # each of Graphiti's chats, and every embeddings request but the question's own search
    assert usage.ingest_calls == len(calls) + server.embedding_posts - 1
    assert usage.ingest_events == 2 and usage.ingest_seconds > 0
    assert usage.prompt_tokens > 0  # the answer's own tokens stay apart
    # every reply bounded by the memory's max_tokens, also where Graphiti asks for 16,384
    assert {r.max_tokens for r in calls} <= set(range(1, memory.max_tokens + 1))
    assert os.environ["GRAPHITI_TELEMETRY_ENABLED"] == "false"


def test_a_failed_extraction_skips_its_event_by_name_and_the_stream_goes_on(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory],
    tmp_path: Path
) -> None:
    server.faults["boom"] = ["server_error"] * 2  # both attempts (max_retries=1) answer 500
    memory = graphiti_memory(max_retries=1)
    blank = tmp_path / "blank.png"
    Image.new("RGB", (8, 8)).save(blank)
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, f"{GARBLE} my cat Miso loves Salmon"),
        round_event("d1-2", 5.0, "qid=boom my dog Rex loves Bones"),
        MemoryEvent(id="d1-2/img_1", kind="image", time=5.0, media=ImageRef(path=str(blank))),
        round_event("d1-3", 9.0, "my fish Bubbles loves Plankton")]))

    answer = ask(memory, "alice", "What does Bubbles love?", answer_model, 10.0)

    assert answer.error is None
    garbled, failed, blank_image = memory.skipped("alice")
    assert (garbled.file, garbled.record, garbled.field) == ("alice", "d1-1", "graphiti")
    assert "JSONDecodeError" in garbled.reason
    assert failed.record == "d1-2" and "InternalServerError" in failed.reason
    assert blank_image.record == "d1-2/img_1" and "has no text" in blank_image.reason
    assert [r.outcome for r in server.requests_for("boom")][:2] == ["server_error"] * 2
    # one try per unreadable reply: Graphiti's own retry (waits of 5 s and more) is off
    assert sum(GARBLE in r.prompt for r in server.records) == 1
    assert {item.event_id for item in memory.items("alice")} == {"d1-3"}
    assert "Plankton" in answer_prompts(server.records)[-1]


def test_a_lost_connection_fails_the_question_and_the_next_one_rebuilds_the_key(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory]
) -> None:
    """A connection lost after the client's retries is no property of the event: the key's
    graph (which may hold part of the batch) is dropped and the question fails with the
    error; the next question rebuilds the key from its first event."""
    from openai import APIConnectionError

    server.faults["lost"] = ["down"]  # the first request of d1-2's episode: connection dropped
    memory = graphiti_memory(max_retries=0)
    asyncio.run(memory.ingest("alice", [
        round_event("d1-1", 0.0, "my cat Miso loves Salmon"),
        round_event("d1-2", 5.0, "qid=lost my dog Rex loves Bones")]))
    ask(memory, "alice", "What does Miso love?", answer_model, 1.0)
    with pytest.raises(Exception) as raised:
        ask(memory, "alice", "What does Rex love?", answer_model, 6.0)
    assert any(isinstance(e, APIConnectionError) for e in _chain(raised.value))
    # the graph dropped (it may hold part of the batch): the key starts over at its next question
    assert memory.skipped("alice") == [] and memory.fed("alice") == 0
    assert memory.items("alice") == []

    answer = ask(memory, "alice", "What does Rex love?", answer_model, 6.0)

    assert answer.error is None
    assert answer.usage.ingest_replays == 1 and answer.usage.ingest_events == 2
    assert sorted(item.event_id for item in memory.items("alice")) == ["d1-1", "d1-2"]
    assert "Bones" in answer_prompts(server.records)[-1]


def test_json_object_with_its_schema_for_servers_without_json_schema(
    server: ScriptedServer, answer_model: Any, graphiti_memory: Callable[..., GraphitiMemory]
) -> None:
    """llama-cpp-python's server refuses ``json_schema`` and constrains ``json_object`` to a
    ``schema`` beside it: ``json_object+schema`` sends both, and the schema in the prompt."""
    memory = graphiti_memory(structured_output="json_object+schema")
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat Miso loves Salmon")]))

    answer = ask(memory, "alice", "What does Miso love?", answer_model, 1.0)

    asked = [r for r in server.records if is_graphiti(r)]
    assert asked and all(r.response_format["type"] == "json_object" for r in asked)
    entities = next(r for r in asked if r.response_format["schema"]["title"]
                    == "ExtractedEntities")
    assert "Respond with a JSON object in the following format" in entities.prompt
    assert answer.usage.retrieved_ids == ["d1-1"]
    assert "- my cat Miso loves Salmon [from d1-1]" in answer_prompts(server.records)[-1]
    assert memory.config()["structured_output"] == "json_object+schema"
    with pytest.raises(ValueError, match="structured_output must be one of"):
        make_memory("graphiti", structured_output="grammar")


def test_no_key_in_the_config_or_in_any_stored_file(
    scripted: Callable[..., ScriptedServer], serve: Callable[..., str], secret: str,
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inspect_ai.model import get_model

    # a request without the key gets 401
    server = scripted(structured=extraction, api_key=secret)
    monkeypatch.setenv("GRAPHITI_TEST_KEY", secret)
    endpoint = {"base_url": server.base_url, "model": "scripted",
                "api_key_env": "GRAPHITI_TEST_KEY"}
    memory = make_memory("graphiti", llm=endpoint, embedder={**endpoint, "dims": 64},
                         store_dir=str(tmp_path))
    assert isinstance(memory, GraphitiMemory)
    asyncio.run(memory.ingest("alice", [round_event("d1-1", 0.0, "my cat Miso loves Salmon")]))
    model = get_model(serve("scripted", server), memoize=False)
    ask(memory, "alice", "What does Miso love?", model, 1.0)
    assert "Salmon" in answer_prompts(server.records)[-1]
    assert all(r.authorized for r in server.records)

    assert secret not in json.dumps(memory.config())
    assert memory.config()["llm"]["api_key_env"] == "GRAPHITI_TEST_KEY"
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.name.startswith("graph.kuzu") for path in files)
    assert not any(secret.encode() in path.read_bytes() for path in files)
    memory.close()
    assert list(tmp_path.iterdir()) == []  # the run's folder is gone


def test_make_memory_builds_it_and_names_the_extra_when_graphiti_is_missing(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = make_memory("graphiti")
    assert isinstance(memory, GraphitiMemory) and memory.config()["k"] == 5
    with pytest.raises(ValueError, match="k must be positive"):
        make_memory("graphiti", k=0)
    monkeypatch.setitem(sys.modules, "graphiti_core", None)  # as if not installed
    with pytest.raises(GraphitiNotInstalledError,
                       match=r"pip install 'm3kit\[graphiti\]'") as raised:
        make_memory("graphiti")
    assert isinstance(raised.value, M3kitError)
    # the registry (so every memory) imports without graphiti: the adapter loads it when used
    listed = "import sys; sys.modules['graphiti_core'] = None; from m3kit.memory.registry " \
             "import memory_names; assert 'graphiti' in memory_names()"
    subprocess.run([sys.executable, "-c", listed], check=True)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    current: BaseException | None = exc
    while current is not None:
        yield current
        current = current.__cause__ or current.__context__


@pytest.mark.slow
def test_an_m3exam_run_answers_through_graphiti(
    server: ScriptedServer, serve: Callable[..., str], tmp_path: Path, isolated_dirs: Path
) -> None:
    """The whole harness: M3Exam's task with ``memory=graphiti`` on one persona, Graphiti's
    models and the model under evaluation all on the scripted server."""
    from inspect_ai.log import read_eval_log

    from m3kit.benchmarks import run_benchmark_task
    from m3kit.schema import read_record

    folder = tmp_path / "Ann_Lee"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (40, 30), (200, 30, 30)).save(folder / "images" / "img_1.png")
    sessions = [
        {"session_id": "D1", "date": "2024-02-01", "dialogues": [
            {"round": "D1:1", "user": "My cat Miso loves Salmon.", "assistant": "Cute."},
            {"round": "D1:2", "user": "A photo of my fox.", "assistant": "Nice.",
             "img_file": ["img_1.png"], "img_id": [1], "img_description": ["a red Fox"]}]},
        {"session_id": "D2", "date": "2024-02-03", "dialogues": [
            {"round": "D2:1", "user": "My dog Rex loves Bones.", "assistant": "Good dog."}]}]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps([
        {"question": f"{text} qid={qid}", "answer": [answer], "supporting_facts": [fact],
         "type": "ss"}
        for qid, text, answer, fact in [("q1", "What does Miso love?", "Salmon", "D1:1"),
                                        ("q2", "What does Rex love?", "Bones", "D2:1")]]))
    settings = {"llm": {"base_url": server.base_url, "model": "scripted"},
                "embedder": {"base_url": server.base_url, "model": "bow", "dims": 64},
                "store_dir": str(tmp_path / "graphiti")}

    log = run_benchmark_task("m3exam", serve("scripted", server), log_dir=tmp_path / "logs",
                             task_args={"data": str(folder), "memory": "graphiti",
                                        "memory_config": settings})

    assert log.status == "success"
    samples = read_eval_log(log.location).samples or []
    records = [read_record(sample.metadata) for sample in samples]
    assert len(records) == 2 and all(r.failure is None and r.memory == "graphiti"
                                     for r in records)
    # one key, fed once: its four events (three rounds, one photo) charged across its questions
    assert sum(r.usage.ingest_events for r in records) == 4
    assert sum(r.usage.ingest_replays for r in records) == 0
    assert all(r.usage.ingest_calls > 0 for r in records if r.usage.ingest_events)
    prompts = answer_prompts(server.records)
    assert any("Salmon" in prompt for prompt in prompts)
    # the episodes were dated by their sessions: D2 two days after D1
    graphiti_prompts = "\n".join(r.prompt for r in server.records if is_graphiti(r))
    assert "2024-02-03 00:00:00+00:00" in graphiti_prompts
