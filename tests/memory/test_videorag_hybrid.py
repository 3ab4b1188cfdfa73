"""``videorag``'s retrieval modes: the causal cut inside hybrid (and dense, lexical) search, a
rare number found by BM25 that the embedding blurs, Video-RAG's cosine threshold kept in
``dense``, and one stored build shared by every mode."""

from __future__ import annotations

from functools import partial

import pytest

from m3kit.memory.videorag import VideoRagMemory

from .longvideo import (
    FUTURE_LINE,
    PARCEL_LINES,
    PARCEL_QUERY,
    RARE_LINE,
    check_modes_share_one_store,
    speech_lines,
    sync,
)

STEP = 20.0  # seconds between lines: three lines per one-minute shard
CUT = 300.0


def memory(tmp_path, embedder, *, k: int = 3, **kw) -> VideoRagMemory:
    return VideoRagMemory(embedder=embedder, speech="transcripts", store=tmp_path / "store",
                          shard_seconds=60.0, k=k, request=False, **kw)


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
        mem = memory(tmp_path, embedder, retrieval=retrieval, threshold=0.0, k=10)
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
async def test_every_mode_loads_one_stored_build(tmp_path, embedder):
    await check_modes_share_one_store(partial(memory, tmp_path, embedder), "v", events())


def test_unknown_retrieval_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown retrieval"):
        VideoRagMemory(store=tmp_path, retrieval="sparse")  # type: ignore[arg-type]
