"""``egorag``'s retrieval modes: the causal cut inside hybrid (and dense, lexical) search at
every level, a clip rebuilt at the cut searched by BM25 with its visible text only, a rare
number found by BM25 that the embedding blurs, one stored build shared by every mode, and query
rewriting of the shared engine's search reaching every level."""

from __future__ import annotations

from functools import partial

import pytest

from m3kit.memory.egorag import EgoRagMemory

from .longvideo import (
    FUTURE_LINE,
    PARCEL_LINES,
    PARCEL_QUERY,
    RARE_LINE,
    check_modes_share_one_store,
    speech_lines,
    sync,
)

STEP = 40.0  # seconds between lines: one line per 30-second clip
CUT = 250.0  # inside the window of line 6 (240 s) and of the later line (262 s)


def memory(tmp_path, embedder, *, k: int = 3, **kw) -> EgoRagMemory:
    return EgoRagMemory.from_settings(embedder=embedder, speech="none", store=tmp_path / "store",
                                      k=k, **kw)


def events():
    return [*speech_lines(PARCEL_LINES, STEP),
            *speech_lines([FUTURE_LINE], 0.0, start=262.0, prefix="later")]


def clip_of(n: int) -> str:
    return f"clip-{int(n * STEP // 30):06d}"


@pytest.mark.parametrize("retrieval", ["hybrid", "dense", "lexical"])
@sync
async def test_the_cut_is_inside_the_search(tmp_path, embedder, retrieval):
    mem = memory(tmp_path, embedder, retrieval=retrieval)
    await mem.ingest("p", events())
    stored = next(i for i in mem.items("p") if i.id == clip_of(6))
    assert "locker twelve" in stored.text and stored.time > CUT  # the later line joined it
    before = await mem.retrieve("p", PARCEL_QUERY, time=CUT)
    # the clip holding the query's words is seen as rebuilt at the cut, without them; the k
    # clips are k visible ones
    assert len(before) == 3 and all(i.time <= CUT for i in before)
    assert not any("locker twelve" in i.text for i in before)
    assert before == await mem.retrieve("p", PARCEL_QUERY, time=CUT)  # no trace left
    after = await mem.retrieve("p", PARCEL_QUERY, time=262.0)
    assert after[0].id == clip_of(6) and "locker twelve" in after[0].text


@sync
async def test_a_rare_number_is_found_by_hybrid_not_by_dense(tmp_path, embedder):
    # the only clip with 7395, rebuilt at the cut (the later line falls in its window), so
    # named as cut
    rare = f"{clip_of(RARE_LINE)}@cut"
    ranked = {}
    for retrieval in ("dense", "hybrid", "lexical"):
        mem = memory(tmp_path, embedder, retrieval=retrieval, k=10)
        await mem.ingest("p", events())
        ranked[retrieval] = [i.id for i in await mem.retrieve("p", PARCEL_QUERY, time=CUT)]
    assert ranked["lexical"][0] == rare
    assert ranked["hybrid"][0] == rare
    assert ranked["dense"].index(rare) >= 2  # parcel talk first: the number is blurred


@sync
async def test_rewriting_reaches_every_level(tmp_path, embedder):
    """With rewriting on, a comparison's parts are searched each (their rankings take turns):
    the first thing compared leads, where the whole question put the other first."""
    question = "Which came first: the parcel with socks or buying apples at the market?"
    socks, apples = clip_of(10), clip_of(8)  # "the parcel had socks...", "we bought apples..."
    ranked = {}
    for rewriting in (False, True):
        mem = memory(tmp_path, embedder, rewriting=rewriting)
        await mem.ingest("p", events())
        assert mem.config()["rewriting"] is rewriting
        ranked[rewriting] = [i.id for i in await mem.retrieve("p", question, time=CUT + 200.0)]
    assert ranked[True][:2] == [socks, apples]
    assert ranked[False][:2] == [apples, socks]


@sync
async def test_every_mode_loads_one_stored_build(tmp_path, embedder):
    await check_modes_share_one_store(partial(memory, tmp_path, embedder), "p", events())
