"""``hierarchical``: round summaries, session summaries, coarse-to-fine retrieval (real MiniLM,
faiss); the model is inspect's ``mockllm`` recording what was sent."""

from __future__ import annotations

import asyncio

import pytest

from m3kit.memory import HierarchicalMemory, conversation_events, make_memory
from m3kit.memory.hierarchical import round_summary
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import Attachment, Conversation, ImageRef, Round, Session

from .conftest import blank_image

TOPICS = {
    "D1": ["My parrot keeps plucking its feathers.", "The parrot's cage is near a window."],
    "D2": ["Which surgical gloves should the clinic buy?", "Ansell gloves fit the techs well."],
    "D3": ["The rabbit stopped eating hay yesterday.", "Its gut sounds are very quiet."],
}


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Conversation:
    photo = blank_image(tmp_path_factory.mktemp("hier") / "img_3.jpg", 120)
    sessions = []
    for s, (sid, texts) in enumerate(TOPICS.items()):
        rounds = [Round(id=f"{sid}:{n + 1}", speaker="Alex", text=text,
                        response=f"Reply about {text.split()[1]}. More detail follows.")
                  for n, text in enumerate(texts)]
        sessions.append(Session(id=sid, date=f"2023-03-0{s + 1}", rounds=rounds))
    rabbit = sessions[2].rounds[0].model_copy(update={"attachments": [Attachment(
        media=ImageRef(path=str(photo)), id="img_3", description="A rabbit on a scale.")]})
    sessions[2] = sessions[2].model_copy(update={"rounds": [rabbit, sessions[2].rounds[1]]})
    return Conversation(id="vet", sessions=sessions)


@pytest.fixture(scope="module")
def memory(conversation, embedder) -> HierarchicalMemory:
    """The original routing: only the chosen sessions' rounds compete."""
    memory = HierarchicalMemory(embedder=embedder, sessions=1, k=2, routing="filter",
                                retrieval=RetrievalConfig(index="numpy"))
    asyncio.run(memory.ingest("vet", conversation_events(conversation)))
    return memory


def test_round_summary_is_first_sentences(memory) -> None:
    rabbit = next(i for i in memory.items("vet") if i.id == "D3:1")
    assert round_summary(rabbit) == (
        "The rabbit stopped eating hay yesterday. [img_3 (image)] A rabbit on a scale. "
        "Reply: Reply about rabbit."
    )


def test_coarse_session_then_fine_rounds(memory, recorder) -> None:
    question = "What was wrong with the rabbit's eating?"
    visible = memory.visible("vet")
    assert [s.id for s in memory.top_sessions("vet", question, visible)] == [
        "session:D3"]  # coarse: one session
    rounds = asyncio.run(memory.retrieve("vet", question))
    assert {r.id for r in rounds} == {"D3:1", "D3:2"}  # fine: only that session's rounds
    answer = asyncio.run(memory.answer("vet", question, recorder.model, query=question))
    assert answer.usage.retrieved_ids == [r.id for r in rounds]  # what retrieve ranked
    assert answer.usage.retrieved_ids[0] == "D3:1"
    assert answer.metadata == {"sessions": ["D3"]}
    text = recorder.last_text()
    assert text.index("Session summaries:") < text.index("Session D3 2023-03-03: 2 rounds.") \
        < text.index("[D3 2023-03-03] D3:1: Alex: The rabbit") < text.index(question)
    assert "parrot" not in text and answer.usage.images_sent == 0
    assert answer.usage.prompt_tokens == recorder.prompt_tokens


def test_query_not_the_prompt_drives_both_levels(memory, recorder) -> None:
    """The prompt's choices talk about gloves; the query about the parrot: retrieval follows
    the query, the model is asked the prompt (mockllm records)."""
    prompt = "Which gloves did the clinic buy? (A) Ansell surgical gloves (B) none"
    plain = asyncio.run(memory.answer("vet", prompt, recorder.model))
    assert plain.metadata == {"sessions": ["D2"]}
    steered = asyncio.run(memory.answer("vet", prompt, recorder.model,
                                        query="Why is the parrot plucking its feathers?"))
    assert steered.metadata == {"sessions": ["D1"]}
    assert set(steered.usage.retrieved_ids) == {"D1:1", "D1:2"}
    assert recorder.last_text().endswith(prompt)


def test_retrieve_holds_the_causal_cut_and_k(memory, recorder) -> None:
    """Session D3 is dated 2023-03-03: asked before it, the rabbit's rounds and summary are
    not visible, and the best of what is visible answers; ``answer`` reports ``retrieve``'s
    ids (mockllm records)."""
    d3 = min(i.time for i in memory.items("vet") if i.metadata.get("session_id") == "D3")
    question = "What was wrong with the rabbit's eating?"
    before = asyncio.run(memory.retrieve("vet", question, time=d3 - 1))
    assert before and all(r.metadata["session_id"] != "D3" for r in before)
    answer = asyncio.run(memory.answer("vet", question, recorder.model, time=d3 - 1))
    assert answer.usage.retrieved_ids == [r.id for r in before]
    assert "rabbit" not in recorder.last_text().replace(question, "")
    assert [r.id for r in asyncio.run(memory.retrieve("vet", question, k=1))] == ["D3:1"]


def test_multimodal_variant_sends_the_round_photos(conversation, embedder, recorder) -> None:
    memory = make_memory("hierarchical-mm", embedder=embedder, sessions=1, k=2, index="numpy")
    assert isinstance(memory, HierarchicalMemory) and memory.send_images
    asyncio.run(memory.ingest("vet", conversation_events(conversation)))
    answer = asyncio.run(memory.answer("vet", "How much did the rabbit weigh on the scale?",
                                       recorder.model))
    assert answer.usage.images_sent == 1 == len(recorder.last_images())
    assert "img_3:" in recorder.last_text()


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        HierarchicalMemory(sessions=0)
    assert make_memory("hierarchical").config()["sessions"] == 3


def test_preferred_routing_lifts_the_chosen_session_without_hiding_the_others(
        conversation, embedder) -> None:
    """A question about two sessions with one session routed: the filter routing returns that
    session's rounds only; the default ("prefer") fuses the routed session in as a scope and
    still finds the other session's round."""
    question = "Did the parrot pluck its feathers, and did the rabbit stop eating hay?"
    built = {}
    for routing in ("filter", "prefer"):
        built[routing] = HierarchicalMemory(embedder=embedder, sessions=1, k=3, routing=routing,
                                            retrieval=RetrievalConfig(index="numpy"))
        asyncio.run(built[routing].ingest("vet", conversation_events(conversation)))
    assert HierarchicalMemory().routing == "prefer"
    (routed,) = built["prefer"].top_sessions("vet", question, built["prefer"].visible("vet"))
    filtered = asyncio.run(built["filter"].retrieve("vet", question))
    assert {r.metadata["session_id"] for r in filtered} == {routed.metadata["session_id"]}
    preferred = asyncio.run(built["prefer"].retrieve("vet", question))
    assert {r.metadata["session_id"] for r in preferred} == {"D1", "D3"}
    assert preferred[0].metadata["session_id"] == routed.metadata["session_id"]
    with pytest.raises(ValueError, match="routing"):
        HierarchicalMemory(routing="maybe")
