"""Hybrid search (FTS5 BM25 + MiniLM over faiss, fused): the causal filter is inside the search,
so a future item that would rank first is never returned and never takes a slot; and the
settings the stored memories search with (shards, the cosine gate, ties by id, transient
items), checked by hand."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.fusion import FusionSettings
from m3kit.memory.retrieval.hybrid import HybridIndex, TransientItem
from m3kit.memory.retrieval.index import make_index
from m3kit.memory.retrieval.lexical import LexicalIndex
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.retrieval.sharded import ShardedIndex

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


# -- the engine as the stored memories use it (Video-RAG's shards, EgoButler's levels) -------------


def _unit_rows(cosines: list[float]) -> np.ndarray:
    """2-D unit rows at these cosines to the query direction ``QUERY_VECTOR``."""
    return np.asarray([(c, (1 - c * c) ** 0.5) for c in cosines], dtype=np.float32)


QUERY_VECTOR = np.asarray([[1.0, 0.0]], dtype=np.float32)


def test_sharded_dense_search_is_video_rag_s_merge(embedder) -> None:
    """Each shard searched among its allowed ids, hits merged by cosine, equal cosines in shard
    order (not in the order the ids were added), the gate applied: checked by hand."""
    shard_of = {"a": 1, "b": 0, "c": 1, "d": 0, "e": 2}
    vectors = ShardedIndex(2, lambda: make_index("numpy", dim=2), shard_of.get)
    vectors.add(["a", "b", "c", "d", "e"], _unit_rows([0.6, 0.6, 0.9, 0.2, 0.6]))
    engine = HybridIndex(embedder, vectors, mode="dense", min_cosine=0.3)
    hits = engine.search("where", 10, vector=QUERY_VECTOR)
    assert [(i, round(s, 6)) for i, s in hits] == [("c", 0.9), ("b", 0.6), ("a", 0.6),
                                                   ("e", 0.6)]
    # the filter reaches inside every shard: "c" is not allowed, nor is shard 2 at all
    assert [i for i, _ in engine.search("where", 10, allow=["a", "b", "d"],
                                        vector=QUERY_VECTOR)] == ["b", "a"]
    assert vectors.remove(["a", "e"]) == 2 and len(vectors) == 3


def test_transient_items_join_one_search_ranked_by_id_on_ties(embedder) -> None:
    """A transient item (a level rebuilt at the cut) competes in the search it is given to,
    dense and BM25, with equal scores ordered by id, and leaves no trace in the indexes."""
    vectors = make_index("numpy", dim=2)
    vectors.add(["b", "c"], _unit_rows([0.5, 0.8]))
    lexical = LexicalIndex()
    lexical.add(["b", "c"], ["the red fox", "a blue whale"])
    engine = HybridIndex(embedder, vectors, lexical=lexical, ties="id")
    rebuilt = TransientItem("a", "the red fox again", _unit_rows([0.5])[0])
    dense = HybridIndex(embedder, vectors, mode="dense", ties="id")
    assert [i for i, _ in dense.search("fox", 3, vector=QUERY_VECTOR,
                                       transient=[rebuilt])] == ["c", "a", "b"]
    before = lexical.search("red fox", 5)
    fused = engine.search("red fox", 3, allow=["a", "b", "c"], vector=QUERY_VECTOR,
                          transient=[rebuilt])
    assert {i for i, _ in fused} == {"a", "b", "c"}
    assert engine.search("red fox", 3, allow=["b", "c"], vector=QUERY_VECTOR,
                         transient=[rebuilt])[0][0] != "a"  # the filter holds for it too
    assert lexical.search("red fox", 5) == before and len(lexical) == len(vectors) == 2


def test_feedback_ranking_joins_the_fusion_and_never_reads_the_future(embedder) -> None:
    """The feedback ranking is BM25 of the question plus RM3's words from the top *visible*
    hits: a future item that holds the question's words gives none of its words, and is not
    returned."""
    index = HybridIndex(embedder, make_index("faiss", dim=embedder.dim), feedback=True)
    index.add(list(TEXTS), list(TEXTS.values()))
    past = [i for i in TEXTS if i != "future"]
    names = [name for name, _ in index.rankings(QUESTION, 10, set(past))]
    assert names == ["dense", "bm25", "feedback"]
    assert "enrofloxacin" not in index.lexical.feedback_terms(QUESTION, allow=set(past))
    assert "enrofloxacin" in index.lexical.feedback_terms(QUESTION)
    hits = index.search(QUESTION, 4, allow=past)
    assert "future" not in {h for h, _ in hits} and len(hits) == 4


def test_fusion_settings_reach_the_search(embedder) -> None:
    """BM25 alone at weight 1 and the dense ranking at 0: the fused order is BM25's."""
    index = HybridIndex(embedder, make_index("faiss", dim=embedder.dim),
                        fusion=FusionSettings(weights={"dense": 0.0}))
    index.add(list(TEXTS), list(TEXTS.values()))
    lexical = [i for i, _ in index.lexical.search(QUESTION, 5)]
    assert [i for i, _ in index.search(QUESTION, len(lexical))] == lexical
    scored = HybridIndex(embedder, make_index("faiss", dim=embedder.dim),
                         fusion=FusionSettings(method="score"))
    scored.add(list(TEXTS), list(TEXTS.values()))
    hits = scored.search(QUESTION, 5)
    assert hits[0] == ("future", pytest.approx(1.0))  # first in both: 1 after min-max
    assert all(0 <= s <= 1 for _, s in hits)


def test_e5_with_views_and_feedback_keeps_the_causal_cut() -> None:
    """The e5 embedder (queries and texts under their own prefixes), the views and the
    feedback ranking: the planted future answer ranks first unfiltered and never filtered."""
    from m3kit.perception.embeddings import E5SmallEmbedder

    e5 = E5SmallEmbedder()

    def vectors():
        return make_index("numpy", dim=e5.dim)

    index = HybridIndex(e5, vectors(), view_vectors=vectors, feedback=True)
    index.add(list(TEXTS), list(TEXTS.values()))
    assert index.search(QUESTION, 1)[0][0] == "future"
    past = [i for i in TEXTS if i != "future"]
    assert {name for name, _ in index.rankings(QUESTION, 10, set(past))} == {
        "dense", "bm25", "window_dense", "window_bm25", "feedback"}
    hits = index.search(QUESTION, 4, allow=past)
    assert "future" not in {h for h, _ in hits} and len(hits) == 4
