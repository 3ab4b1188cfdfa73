"""Hybrid search (FTS5 BM25 + MiniLM over faiss, fused): the causal filter is inside the search,
so a future item that would rank first is never returned and never takes a slot."""

from __future__ import annotations

import asyncio

import pytest

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.hybrid import HybridIndex
from m3kit.memory.retrieval.index import make_index
from m3kit.memory.retrieval.query import RetrievalQuery

QUESTION = "Which antibiotic was the hamster given for its sneezing?"
# The future item repeats the question's words: first for BM25 and for the embedding alike.
TEXTS = {
    "past-1": "The hamster started sneezing last night.",
    "past-2": "We bought a new cage for the hamster.",
    "past-3": "The parrot plucks its feathers.",
    "past-4": "Gloves for the clinic arrived.",
    "future": "The hamster was given the antibiotic enrofloxacin for its sneezing.",
}


@pytest.fixture
def hybrid(embedder) -> HybridIndex:
    index = HybridIndex(embedder, make_index("faiss", dim=embedder.dim))
    index.add(list(TEXTS), list(TEXTS.values()))
    return index


def test_future_item_ranks_first_unfiltered(hybrid) -> None:
    assert hybrid.search(QUESTION, 1)[0][0] == "future"
    assert hybrid.lexical.search(QUESTION, 1)[0][0] == "future"
    assert hybrid.vectors.search(hybrid.embedder.embed([QUESTION]), 1)[0][0][0] == "future"


@pytest.mark.parametrize("k", [1, 2, 4])
def test_filter_inside_the_hybrid_search(hybrid, k) -> None:
    past = [i for i in TEXTS if i != "future"]
    hits = hybrid.search(QUESTION, k, allow=past)
    assert "future" not in {h for h, _ in hits}
    assert len(hits) == k  # every slot goes to a visible item
    assert hits[0][0] == "past-1"
    # a scope cannot bring the future back either: it is searched inside ``allow`` too
    scoped = hybrid.search(RetrievalQuery(text=QUESTION), k, allow=past,
                           scopes=[["future", "past-2"]])
    assert "future" not in {h for h, _ in scoped} and len(scoped) == k


def test_scores_are_normalised_fused_ranks(hybrid) -> None:
    hits = hybrid.search(QUESTION, 5)
    assert hits[0] == ("future", pytest.approx(1.0))  # first in both lists
    assert all(0 < s <= 1 for _, s in hits)
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_memory_retrieve_at_a_time_never_returns_the_future(embedder) -> None:
    events = [MemoryEvent(id=i, kind="text", time=float(n), text=t)
              for n, (i, t) in enumerate(TEXTS.items())]
    memory = RagMemory(embedder=embedder, k=3, ocr=False)
    asyncio.run(memory.ingest("pets", events))
    assert asyncio.run(memory.retrieve("pets", QUESTION))[0].id == "future"
    before = asyncio.run(memory.retrieve("pets", QUESTION, time=3.0))
    assert before[0].id == "past-1" and len(before) == 3
    assert all(i.time is not None and i.time <= 3.0 for i in before)


def test_single_retriever_modes(embedder) -> None:
    for mode in ("dense", "lexical"):
        index = HybridIndex(embedder, make_index("numpy", dim=embedder.dim), mode=mode)
        index.add(list(TEXTS), list(TEXTS.values()))
        hits = index.search(QUESTION, 2, allow=[i for i in TEXTS if i != "future"])
        assert "future" not in {h for h, _ in hits} and len(hits) == 2
        assert (len(index.lexical) == 0) == (mode == "dense")
        assert (len(index.vectors) == 0) == (mode == "lexical")
    with pytest.raises(ValueError, match="unknown retrieval"):
        HybridIndex(embedder, make_index("numpy", dim=embedder.dim), mode="sparse")  # type: ignore[arg-type]
