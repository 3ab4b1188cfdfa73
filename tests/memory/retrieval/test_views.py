"""Passages and turn windows (``memory.retrieval.views``), and what they change in a hybrid
search: a fact at the end of a long round is found by its passage, a short reply by the turn it
answers."""

from __future__ import annotations

import asyncio

import pytest

from m3kit.memory import MemoryEvent, MemoryItem, RagMemory
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.memory.retrieval.hybrid import HybridIndex
from m3kit.memory.retrieval.index import make_index
from m3kit.memory.retrieval.views import is_turn, passages, turn_windows


def _item(item_id: str, session: str | None = "S1", modality: str = "text",
          **metadata: str) -> MemoryItem:
    return MemoryItem(id=item_id, key="k", event_id=item_id, modality=modality,  # type: ignore[arg-type]
                      text=item_id, metadata={"session_id": session, **metadata})


def test_passages_overlap_by_half_and_end_with_the_text() -> None:
    text = " ".join(str(n) for n in range(130))
    got = passages(text)
    # starts 0, 30, 60 (stride 30) and 70 (the last 60 words): 130 - 60 = 70
    assert [p.split()[0] for p in got] == ["0", "30", "60", "70"]
    assert all(len(p.split()) == 60 for p in got)
    assert got[-1].split()[-1] == "129"
    assert passages("a short round") == ["a short round"]
    sixty = " ".join(["w"] * 60)
    assert passages(sixty) == [sixty]  # exactly the passage size: one passage
    assert [p.split()[0] for p in passages(" ".join(str(n) for n in range(90)))] == ["0", "30"]
    with pytest.raises(ValueError, match="positive"):
        passages(text, stride=0)


def test_what_is_a_turn() -> None:
    assert is_turn(_item("round"))
    assert is_turn(_item("line", modality="transcript"))
    assert not is_turn(_item("photo", modality="image"))
    assert not is_turn(_item("caption", attachment_id="img_1"))
    assert not is_turn(_item("summary", chunk="session_summary"))
    assert not is_turn(_item("frame", modality="frame"))


def test_turn_windows_hold_the_previous_turn_of_the_session_only() -> None:
    items = [_item("a"), _item("b"), _item("img", modality="image", attachment_id="x"),
             _item("c"), _item("d", session="S2"), None]
    texts = ["a", "b", "img", "c", "d", "summary"]
    # b after a; c after b (the attachment between them is no turn); d opens S2; None is no item
    assert turn_windows(items, texts) == ["a", "a\nb", "img", "b\nc", "d", "summary"]


def test_a_long_turn_and_a_blank_one_keep_their_own_text() -> None:
    long = " ".join(["word"] * 60)
    items = [_item("a"), _item("long"), _item("blank"), _item("z")]
    assert turn_windows(items, ["a", long, " ", "z"]) == ["a", long, " ", f"{long}\nz"]
    assert turn_windows(items, ["a", long, " ", "z"], words=61) == ["a", f"a\n{long}", " ",
                                                                    f"{long}\nz"]
    with pytest.raises(ValueError, match="items"):
        turn_windows(items, ["a"])


def test_a_window_never_holds_a_later_turn() -> None:
    items = [_item(f"t{n}") for n in range(6)]
    texts = [f"turn number {n}" for n in range(6)]
    for n, window in enumerate(turn_windows(items, texts)):
        assert all(f"turn number {m}" not in window for m in range(n + 1, 6))


# A round whose fact comes after 300 words of another topic: past MiniLM's 256 word pieces.
FILLER = " ".join(["We talked about the weather, the garden and the new fence at home."] * 22)
LONG_ROUND = f"{FILLER} Later the vet gave the hamster enrofloxacin for its sneezing."
QUESTION = "Which antibiotic did the vet give the hamster for sneezing?"
ROUNDS = {
    "long": LONG_ROUND,
    "clinic": "The clinic opens at nine on Mondays.",
    "garden": "The garden needs new soil in spring.",
    "food": "Hamster food with seeds and dried fruit is on sale.",
}


def _index(embedder, views: bool) -> HybridIndex:
    def vectors():
        return make_index("faiss", dim=embedder.dim)

    index = HybridIndex(embedder, vectors(), view_vectors=vectors if views else None)
    index.add(list(ROUNDS), list(ROUNDS.values()))
    return index


def test_maxp_finds_the_end_of_a_long_round(embedder) -> None:
    with_views, plain = _index(embedder, True), _index(embedder, False)
    vector = embedder.embed([QUESTION])
    whole = [i for i, _ in plain.vectors.search(vector, 4)[0]]
    best_passage = with_views._best_passages(vector, 4, None)
    assert best_passage[0][0] == "long"
    assert best_passage[0][1] == max(score for _, score in best_passage)  # its passage's cosine
    assert whole[-1] == "long"  # the whole-round vector lost the fact
    assert len(with_views.passage_vectors) == len(passages(LONG_ROUND)) + 3
    # a filter applies to the passages: a hidden round's passages never surface
    assert "long" not in with_views._best_passages(vector, 4, ["clinic", "garden", "food"])
    assert with_views._best_passages(vector, 4, []) == []


def test_views_only_in_hybrid_mode(embedder) -> None:
    def vectors():
        return make_index("numpy", dim=embedder.dim)

    for mode in ("dense", "lexical"):
        index = HybridIndex(embedder, vectors(), mode=mode, view_vectors=vectors)
        assert not index.views
        index.add(list(ROUNDS), list(ROUNDS.values()))
        assert len(index.rankings(QUESTION, 4, None)) == 1
    hybrid = HybridIndex(embedder, vectors(), view_vectors=vectors)
    hybrid.add(list(ROUNDS), list(ROUNDS.values()))
    assert len(hybrid.rankings(QUESTION, 4, None)) == 4  # passages, BM25, window dense + BM25


# A one-line chat: the question's words are in the turn before the answer.
CHAT = [
    ("c1", "Gina: When are you opening the new dance studio, Jon?"),
    ("c2", "Jon: Next Friday, right after the final inspection."),
    ("c3", "Gina: My store sold out of the summer dresses this week."),
    ("c4", "Jon: I practised a tango routine with my dance students at the studio."),
    ("c5", "Gina: The new store logo is ready, the designer did great."),
    ("c6", "Jon: We bought mirrors and a sound system for the dance studio floor."),
    ("c7", "Jon: The dance studio walls are painted bright yellow now."),
]


def test_the_reply_is_found_by_the_turn_it_answers(embedder) -> None:
    events = [MemoryEvent(id=i, kind="round", time=float(n), text=t,
                          metadata={"session_id": "D1"})
              for n, (i, t) in enumerate(CHAT)]
    query = "When is Jon opening his dance studio?"
    ranks = {}
    for views in (True, False):
        memory = RagMemory(embedder=embedder, k=7, ocr=False,
                           retrieval=RetrievalConfig(views=views, rewriting=False))
        asyncio.run(memory.ingest("chat", events))
        ranks[views] = [i.id for i in asyncio.run(memory.retrieve("chat", query))].index("c2")
        assert memory.config()["views"] is views
    # measured: third with views, sixth of seven without (every Jon line says "studio")
    assert ranks[True] < ranks[False]
    assert ranks[True] <= 2


def test_views_keep_the_causal_cut(embedder) -> None:
    # The answer is said after the question's time, in a turn right after a visible one.
    events = [MemoryEvent(id=i, kind="round", time=float(n), text=t,
                          metadata={"session_id": "D1"})
              for n, (i, t) in enumerate(CHAT)]
    memory = RagMemory(embedder=embedder, k=3, ocr=False)
    asyncio.run(memory.ingest("chat", events))
    seen = asyncio.run(memory.retrieve("chat", "When does the dance studio open?", time=0.0))
    assert [i.id for i in seen] == ["c1"]  # the only visible turn, whatever c2 says
    later = asyncio.run(memory.retrieve("chat", "mirrors and a sound system", time=4.0))
    assert "c6" not in {i.id for i in later} and len(later) == 3
