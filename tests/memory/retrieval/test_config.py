"""The retrieval record: its checks, its presets, how flat and nested settings reach it, and
the record a memory's ``config()`` shows."""

from __future__ import annotations

import pytest

from m3kit.memory import RagMemory, make_memory
from m3kit.memory.hierarchical import HierarchicalMemory
from m3kit.memory.proctor import ProctorMemory
from m3kit.memory.retrieval.config import (
    BM25_SEARCH,
    DEFAULT_RETRIEVAL,
    DENSE_SEARCH,
    PRESETS,
    RETRIEVAL_MODES,
    RetrievalConfig,
    settings_record,
)
from m3kit.memory.retrieval.fusion import FusionSettings
from m3kit.perception.embeddings import E5SmallEmbedder


def test_record_is_what_config_always_showed() -> None:
    assert DEFAULT_RETRIEVAL.model_dump(by_alias=True) == {
        "retrieval": "hybrid", "index": "faiss", "views": True, "rewriting": True,
        "expander": None, "reranker": None, "rerank_depth": None}
    reranked = RetrievalConfig(reranker="mockllm/model", expander="mockllm/model",
                               rerank_depth=4, index="numpy")
    assert reranked.model_dump(by_alias=True) == {
        "retrieval": "hybrid", "index": "numpy", "views": True, "rewriting": True,
        "expander": "model:mockllm/model", "reranker": "model:mockllm/model",
        "rerank_depth": 4}
    assert RetrievalConfig(reranker="maxsim").model_dump(by_alias=True)["reranker"] == "maxsim"


def test_views_are_off_outside_a_fusion_and_checks_keep_their_messages() -> None:
    assert RetrievalConfig(mode="dense").views is False
    assert RetrievalConfig(mode="lexical", views=True).views is False
    with pytest.raises(ValueError, match="unknown retrieval 'sparse'; known: hybrid"):
        RetrievalConfig(mode="sparse")  # type: ignore[arg-type]  # the wrong value under test
    with pytest.raises(ValueError, match="rerank_depth must be at least 2, got 1"):
        RetrievalConfig(reranker="maxsim", rerank_depth=1)
    assert RetrievalConfig(rerank_depth=1).rerank_depth == 1  # unused without a reranker
    with pytest.raises(ValueError, match="Extra inputs"):
        RetrievalConfig.model_validate({"k": 3})
    with pytest.raises(ValueError, match="frozen"):
        DEFAULT_RETRIEVAL.views = False  # type: ignore[misc]  # the refusal under test


def test_no_preset_is_named_like_a_mode() -> None:
    assert not set(PRESETS) & set(RETRIEVAL_MODES)
    assert PRESETS["default"] is DEFAULT_RETRIEVAL and PRESETS["bm25"] is BM25_SEARCH


@pytest.mark.parametrize(("settings", "record", "rest"), [
    ({"k": 3}, DEFAULT_RETRIEVAL, {"k": 3}),
    ({"retrieval": "dense", "k": 3}, RetrievalConfig(mode="dense"), {"k": 3}),
    ({"reranker": "maxsim", "rerank_depth": 4}, RetrievalConfig(reranker="maxsim",
                                                                rerank_depth=4), {}),
    ({"retrieval": {"mode": "dense", "reranker": "maxsim"}},
     RetrievalConfig(mode="dense", reranker="maxsim"), {}),
    ({"retrieval": "embedding"}, DENSE_SEARCH, {}),
    ({"retrieval": {"preset": "bm25", "rerank_depth": 10}, "send_images": True},
     RetrievalConfig(mode="lexical", rewriting=False, rerank_depth=10), {"send_images": True}),
    ({"retrieval": {"preset": "bm25"}, "rewriting": True},
     RetrievalConfig(mode="lexical"), {}),
])  # fmt: skip
def test_settings_reach_the_record_flat_or_nested(settings, record, rest) -> None:
    assert settings_record(settings) == (record, rest)


def test_settings_given_twice_or_unknown_are_refused() -> None:
    with pytest.raises(ValueError, match="both flat and under retrieval: reranker"):
        settings_record({"reranker": "maxsim", "retrieval": {"reranker": "x/y"}})
    with pytest.raises(ValueError, match="unknown retrieval preset 'fast'"):
        settings_record({"retrieval": {"preset": "fast"}})
    with pytest.raises(ValueError, match="unknown retrieval 'fast'"):
        settings_record({"retrieval": "fast"})
    with pytest.raises(ValueError, match="Extra inputs"):
        settings_record({"retrieval": {"k": 3}})
    with pytest.raises(ValueError, match="retrieval must be a mode"):
        settings_record({"retrieval": 3})


@pytest.mark.parametrize("memory", ["rag", "hierarchical", "proctor"])
def test_flat_and_nested_memory_config_build_the_same_memory(memory: str) -> None:
    flat = make_memory(memory, retrieval="dense", reranker="mockllm/model", rerank_depth=5,
                       index="numpy", ocr=False)
    nested = make_memory(memory, ocr=False, retrieval={
        "mode": "dense", "reranker": "mockllm/model", "rerank_depth": 5, "index": "numpy"})
    assert flat is not None and nested is not None
    assert flat.config() == nested.config()
    config = flat.config()
    assert (config["retrieval"], config["index"], config["views"], config["reranker"],
            config["rerank_depth"]) == ("dense", "numpy", False, "model:mockllm/model", 5)


def test_each_memory_takes_the_record_and_defaults_to_the_preset() -> None:
    for cls in (RagMemory, HierarchicalMemory, ProctorMemory):
        assert cls(ocr=False).retrieval is DEFAULT_RETRIEVAL
        assert cls(ocr=False, retrieval=BM25_SEARCH).retrieval is BM25_SEARCH
    rag = RagMemory.from_settings(k=4, retrieval="maxsim", ocr=False)
    assert rag.k == 4 and rag.rerank_stage is not None and rag.rerank_stage.name == "maxsim"


def test_a_preset_applies_over_the_memory_s_own_default() -> None:
    """A preset sets its own fields over the memory's default: Video-RAG keeps its cosine gate
    under ``fused`` or ``embedding``, and ``default`` is the memory's own default."""

    videorag = make_memory("videorag", store=False)
    assert make_memory("videorag", retrieval="default", store=False).retrieval == \
        videorag.retrieval
    dense = make_memory("videorag", retrieval="embedding", store=False).retrieval
    assert (dense.mode, dense.min_cosine) == ("dense", 0.3)
    assert make_memory("rag", retrieval="default").config() == make_memory("rag").config()
    assert make_memory("rag", retrieval="bm25").config() == \
        make_memory("rag", retrieval={"mode": "lexical", "rewriting": False}).config()


def test_fusion_and_feedback_show_only_when_set_and_reach_the_index() -> None:
    record = RetrievalConfig(fusion={"method": "score", "weights": {"bm25": 2.0}},
                             feedback=True).model_dump(by_alias=True)
    assert record["fusion"] == {"method": "score", "weights": {"bm25": 2.0}}
    assert record["feedback"] is True
    assert "fusion" not in DEFAULT_RETRIEVAL.model_dump(by_alias=True)
    memory = make_memory("rag", fusion={"weights": {"window_bm25": 0.5}}, feedback=True)
    assert isinstance(memory, RagMemory)
    assert memory.retrieval.fusion == FusionSettings(weights={"window_bm25": 0.5})
    assert memory.config()["feedback"] is True
    with pytest.raises(ValueError, match="unknown rankings"):
        make_memory("rag", fusion={"weights": {"splade": 1.0}})


def test_the_embedder_is_a_setting_by_name() -> None:
    configs = {name: memory.config() for name, memory in (
        ("rag", make_memory("rag")), ("rag/e5", make_memory("rag", embedder="e5-small")))
        if memory is not None}
    assert configs["rag"]["embedder"] == "all-MiniLM-L6-v2"  # every memory's default
    assert configs["rag/e5"]["embedder"] == E5SmallEmbedder.name
    with pytest.raises(ValueError, match="unknown embedder 'bge'; known: minilm, e5-small"):
        make_memory("rag", embedder="bge")
