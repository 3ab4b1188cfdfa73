"""``videorag``'s retrieval modes: the causal cut inside hybrid (and dense, lexical) search, a
rare number found by BM25 that the embedding blurs, Video-RAG's cosine threshold kept in
``dense`` (the released search, checked by hand), one stored build shared by every mode, and a
reranker of the shared engine's search reaching Video-RAG's databases."""

from __future__ import annotations

from functools import partial

import pytest

from m3kit.memory import MemoryEvent
from m3kit.memory.videorag import VideoRagMemory

from .longvideo import (
    FUTURE_LINE,
    PARCEL_LINES,
    PARCEL_QUERY,
    RARE_LINE,
    AngleEmbedder,
    check_modes_share_one_store,
    speech_lines,
    sync,
)

STEP = 20.0  # seconds between lines: three lines per one-minute shard
CUT = 300.0


def memory(tmp_path, embedder, *, k: int = 3, **kw) -> VideoRagMemory:
    return VideoRagMemory.from_settings(embedder=embedder, speech="transcripts",
                                        store=tmp_path / "store", shard_seconds=60.0, k=k,
                                        request=False, **kw)


def events():
    return [*speech_lines(PARCEL_LINES, STEP),
            *speech_lines([FUTURE_LINE], 0.0, start=CUT + 100.0, prefix="later")]


@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
@sync
async def test_the_cut_is_inside_the_search(tmp_path, embedder, retrieval):
    mem = memory(tmp_path, embedder, retrieval=retrieval)
    await mem.ingest("v", events())
    assert {i.metadata["shard"] for i in mem.items("v")} == {0, 1, 2, 3, 6}
    before = await mem.retrieve("v", PARCEL_QUERY, time=CUT)
    # the later line holds the query's words, yet the k hits are k visible lines
    assert len(before) == 3 and all(i.time <= CUT for i in before)
    assert "later-0" not in [i.id for i in before]
    after = await mem.retrieve("v", PARCEL_QUERY, time=CUT + 100.0)
    assert after[0].id == "later-0"


@sync
async def test_a_rare_number_is_found_by_hybrid_not_by_dense(tmp_path, embedder):
    rare = f"line-{RARE_LINE}"
    ranked = {}
    for retrieval in ("dense", "hybrid", "lexical"):
        mem = memory(tmp_path, embedder, retrieval=retrieval, min_cosine=0.0, k=10)
        await mem.ingest("v", events())
        ranked[retrieval] = [i.id for i in await mem.retrieve("v", PARCEL_QUERY, time=CUT)]
    assert ranked["lexical"][0] == rare  # the only line with 7395
    assert rare not in ranked["dense"][:3]  # MiniLM puts parcel talk first
    assert rare in ranked["hybrid"][:3]
    assert ranked["hybrid"].index(rare) < ranked["dense"].index(rare)


@sync
async def test_dense_keeps_the_cosine_threshold(tmp_path, embedder):
    mem = memory(tmp_path, embedder, retrieval="dense", k=10)
    await mem.ingest("v", events())
    hits = mem.search("v", PARCEL_QUERY, None, mem.visible("v", CUT))
    assert hits and all(score >= 0.3 for _, score in hits)
    # weather and shopping are far from parcels: below 0.3, never a dense hit
    assert not {i.id for i, _ in hits} & {"line-7", "line-8"}
    hybrid = memory(tmp_path, embedder, k=10)
    await hybrid.ingest("v", events())
    fused = hybrid.search("v", PARCEL_QUERY, None, hybrid.visible("v", CUT))
    # under hybrid a line neither gate lets through (no cosine >= 0.3, no term shared) is no hit
    assert "line-7" not in {i.id for i, _ in fused}
    assert all(0.0 < score <= 1.0 for _, score in fused)


@sync
async def test_dense_is_the_released_search_checked_by_hand(tmp_path):
    """Video-RAG as released: each shard's index searched, the hits at cosine >= 0.3 merged by
    cosine, equal cosines in shard order, ``k`` per database; nothing after the cut."""
    cosines = {"alpha": 0.6, "bravo": 0.2, "charlie": 0.9, "delta": 0.6, "echo": 0.35,
               "foxtrot": 0.6}
    # one-minute shards: alpha and bravo in shard 0, charlie and delta in 1, echo, foxtrot in 2
    lines = [MemoryEvent(id=text, kind="transcript", time=t, text=text, metadata={"start": t})
             for text, t in zip(cosines, (10.0, 20.0, 70.0, 80.0, 130.0, 140.0), strict=True)]
    embedder = AngleEmbedder(cosines)
    found = {}
    for k in (3, 10):
        mem = memory(tmp_path, embedder, retrieval="dense", k=k)
        await mem.ingest("v", lines)
        found[k] = [(i.id, round(s, 6)) for i, s in mem.search("v", "where", None,
                                                                mem.visible("v", None))]
        assert [i.id for i in await mem.retrieve("v", "where", time=100.0)] == [
            "charlie", "alpha", "delta"][:k]
    # bravo (0.2) is under the gate; the three at 0.6 in shard order: alpha, delta, foxtrot
    assert found[10] == [("charlie", 0.9), ("alpha", 0.6), ("delta", 0.6), ("foxtrot", 0.6),
                         ("echo", 0.35)]
    assert found[3] == found[10][:3]


@sync
async def test_a_reranker_reaches_the_search(tmp_path, embedder):
    """A reranker set in the search record reorders each database's first stage before its
    ``k`` are kept: MaxSim reads the rare number the pooled embedding blurs."""
    rare = f"line-{RARE_LINE}"
    first = memory(tmp_path, embedder, retrieval="hybrid")
    await first.ingest("v", events())
    before = [i.id for i in await first.retrieve("v", PARCEL_QUERY, time=CUT)]
    reranked = memory(tmp_path, embedder, retrieval="hybrid", reranker="maxsim")
    await reranked.ingest("v", events())
    after = [i.id for i in await reranked.retrieve("v", PARCEL_QUERY, time=CUT)]
    assert reranked.config()["reranker"] == "maxsim"
    assert reranked.rerank_stage is not None and reranked.rerank_stage.calls == 1  # ASR only
    assert after[0] == rare and before[0] != rare


@sync
async def test_every_mode_loads_one_stored_build(tmp_path, embedder):
    await check_modes_share_one_store(partial(memory, tmp_path, embedder), "v", events())


def test_unknown_retrieval_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown retrieval"):
        VideoRagMemory.from_settings(store=tmp_path, retrieval="sparse")
    # the stored index keeps each text's vector only: a search with views is refused, not run
    # without them
    with pytest.raises(ValueError, match="searches no views"):
        VideoRagMemory.from_settings(store=tmp_path, retrieval={"views": True})
