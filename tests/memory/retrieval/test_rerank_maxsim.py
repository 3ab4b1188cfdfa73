"""The MaxSim (late-interaction) reranker: ColBERT's score by hand on fixed token matrices,
ordering and caching over a fixed token embedder, a real MiniLM ordering, the name ``maxsim``
in a memory's config (fused with the first stage by default), and the first-stage fallback
when a query has no tokens."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from m3kit.memory import MemoryEvent, RagMemory
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.memory.retrieval.maxsim import MaxSimReranker, maxsim
from m3kit.memory.retrieval.rerank import FIRST_STAGE, ModelReranker, RerankStage
from m3kit.memory.retrieval.rerankers import named_reranker

# Token matrices by word: each word one fixed unit row in 3 dimensions.
WORDS = {
    "cat": [1.0, 0.0, 0.0],
    "vein": [0.0, 1.0, 0.0],
    "feline": [0.8, 0.6, 0.0],
    "dog": [0.0, 0.0, 1.0],
}


class WordRows:
    """A ``TokenEmbedder`` that gives each word its fixed row in ``WORDS`` (unknown words no
    row) and records the texts it was asked for."""

    name = "word-rows"
    dim = 3

    def __init__(self) -> None:
        self.asked: list[str] = []

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.asked += texts
        return [np.array([WORDS[w] for w in t.split() if w in WORDS], dtype=np.float32)
                .reshape(-1, 3) for t in texts]


def test_maxsim_by_hand() -> None:
    query = np.array([[1.0, 0.0], [0.0, 1.0]])
    document = np.array([[0.6, 0.8], [1.0, 0.0]])
    # query row 1: max(0.6, 1.0) = 1.0; row 2: max(0.8, 0.0) = 0.8
    assert maxsim(query, document) == pytest.approx(1.8)
    # a document row matched by several query rows counts for each
    assert maxsim(query, np.array([[0.6, 0.8]])) == pytest.approx(0.6 + 0.8)
    assert maxsim(query, np.zeros((0, 2))) == 0.0 and maxsim(np.zeros((0, 2)), document) == 0.0


def test_reranker_orders_by_maxsim_ties_keep_the_first_stage_and_caches_documents() -> None:
    rows = WordRows()
    reranker = MaxSimReranker(rows, fuse=False)
    assert reranker.name == "maxsim-pure"
    candidates = [("d1", "dog dog"), ("d2", "feline"), ("d3", "cat vein"), ("d4", "dog")]
    # query "cat vein": d1 0 + 0 = 0; d2 0.8 + 0.6 = 1.4; d3 1 + 1 = 2; d4 0 (ties d1: d1 first)
    order, usage = asyncio.run(reranker.rerank("cat vein", candidates))
    assert order == ["d3", "d2", "d1", "d4"]
    assert usage.prompt_tokens == 0 and usage.completion_tokens == 0
    assert reranker.scores("cat vein", ["feline"]) == [pytest.approx(1.4)]
    # each document text was embedded once; the queries each time
    assert sorted(rows.asked) == sorted(["cat vein", "dog dog", "feline", "cat vein", "dog",
                                         "cat vein"])


def test_fused_maxsim_blends_with_the_first_stage_by_reciprocal_rank() -> None:
    reranker = MaxSimReranker(WordRows())  # fused by default
    assert reranker.name == "maxsim" and reranker.fuse
    candidates = [("d1", "dog dog"), ("d2", "feline"), ("d3", "cat vein"), ("d4", "dog")]
    # MaxSim order d3 d2 d1 d4, first stage d1 d2 d3 d4; RRF (c = 60):
    # d1 = d3 = 1/61 + 1/63 = 0.032266 (d3 met first), d2 = 2/62 = 0.032258, d4 = 2/64
    order, _ = asyncio.run(reranker.rerank("cat vein", candidates))
    assert order == ["d3", "d1", "d2", "d4"]


def test_the_cache_keeps_the_most_recently_used_texts() -> None:
    rows = WordRows()
    reranker = MaxSimReranker(rows, cache_size=2)
    reranker.scores("cat", ["cat", "dog"])
    reranker.scores("cat", ["vein", "dog"])  # "cat" is the least recent: evicted
    rows.asked.clear()
    reranker.scores("dog", ["dog", "cat"])
    assert rows.asked == ["dog", "cat"]  # the query, then the evicted document only
    with pytest.raises(ValueError, match="cache_size"):
        MaxSimReranker(rows, cache_size=0)


def test_a_query_without_tokens_falls_back_to_the_first_stage_counted() -> None:
    stage = RerankStage(MaxSimReranker(WordRows(), fuse=False), depth=3)
    hits = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    texts = {"a": "dog", "b": "feline", "c": "cat vein"}
    out = asyncio.run(stage.apply("unknown words", hits, texts))
    assert [i for i, _ in out] == ["a", "b", "c"]
    assert stage.fallbacks == {f"{FIRST_STAGE}:RerankError": 1} and stage.calls == 1
    out = asyncio.run(stage.apply("cat vein", hits, texts))
    assert [i for i, _ in out] == ["c", "b", "a"]
    assert stage.calls == 2 and stage.fallbacks == {f"{FIRST_STAGE}:RerankError": 1}


def test_maxsim_on_minilm_puts_the_passage_that_answers_first(embedder) -> None:
    reranker = MaxSimReranker(embedder, fuse=False)
    candidates = [
        ("gloves", "We ordered a new box of examination gloves for the clinic."),
        ("rabbit", "The rabbit stopped eating hay after its dental surgery."),
        ("vein", ("For blood draws in cats, the medial saphenous vein is the first choice; "
                  "the cephalic vein is the alternative.")),
        ("parrot", "The parrot keeps plucking its feathers when left alone."),
    ]
    order, _ = asyncio.run(reranker.rerank("Which vein is used to draw blood from a cat?",
                                           candidates))
    assert order[0] == "vein"
    scores = reranker.scores("Which vein is used to draw blood from a cat?",
                             [t for _, t in candidates])
    # a sum over the query's word pieces of cosines: at most one per piece
    assert max(scores) == scores[2] and all(0 < s <= 13 for s in scores)


def test_the_name_maxsim_resolves_and_shares_the_memory_minilm(embedder) -> None:
    named = named_reranker("maxsim")
    assert isinstance(named, MaxSimReranker) and named.fuse
    assert isinstance(named_reranker("mockllm/model"), ModelReranker)
    events = [MemoryEvent(id=f"e{n}", kind="text", time=float(n), text=text) for n, text in
              enumerate(["the parrot plucks feathers", "gloves for the clinic",
                         "the rabbit stopped eating hay", "hay brands for rabbits"])]
    memory = RagMemory(embedder=embedder, k=3, ocr=False,
                       retrieval=RetrievalConfig(reranker="maxsim", rerank_depth=4))
    asyncio.run(memory.ingest("vet", events))
    ranked = [i.id for i in asyncio.run(memory.retrieve("vet", "Why did the rabbit stop "
                                                                "eating hay?"))]
    assert ranked[0] == "e2" and len(ranked) == 3
    stage = memory.rerank_stage
    assert stage is not None and stage.calls == 1 and stage.fallbacks == {}
    assert memory.config()["reranker"] == "maxsim" and memory.config()["rerank_depth"] == 4
    assert isinstance(stage.reranker, MaxSimReranker)
    assert stage.reranker.token_embedder() is embedder  # one MiniLM, not two
