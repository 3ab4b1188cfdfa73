"""Memories by name."""

from __future__ import annotations

import pytest

from m3kit.memory import MEMORIES, ContextMemory, RagMemory, make_memory


def test_names_build_their_memories() -> None:
    assert MEMORIES == ("none", "context", "rag", "context-text", "context-mm", "rag-text",
                        "rag-mm", "hierarchical", "hierarchical-mm", "proctor", "videorag",
                        "egorag")
    assert make_memory("none") is None
    context = make_memory("context", token_budget=2000, image_tokens=85)
    assert isinstance(context, ContextMemory)
    assert context.config()["token_budget"] == 2000
    rag = make_memory("rag", k=3, index="numpy")
    assert isinstance(rag, RagMemory) and rag.config()["k"] == 3


def test_each_call_is_a_fresh_memory() -> None:
    assert make_memory("context") is not make_memory("context")


def test_configs_differ_when_answers_would() -> None:
    assert make_memory("context").config() != make_memory("context", image_tokens=85).config()
    assert make_memory("rag").config() != make_memory("rag", k=4).config()
    assert make_memory("rag").config() != make_memory("context").config()


def test_bad_names_and_settings_are_named() -> None:
    with pytest.raises(ValueError, match="unknown memory 'vector'; known: none, context, rag, "
                       "context-text"):
        make_memory("vector")
    with pytest.raises(ValueError, match="'none' takes no settings"):
        make_memory("none", k=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'budget'"):
        make_memory("context", budget=3)


@pytest.mark.parametrize(("name", "config", "says"), [
    ("context", {"tokens_per_char": float("inf")}, "'tokens_per_char' must be a finite number"),
    ("context", {"token_budget": float("nan")}, "'token_budget' must be a finite number"),
    ("proctor", {"alphas": {"image": float("-inf")}}, "'alphas.image' must be a finite"),
])
def test_a_setting_that_is_not_finite_is_refused(name, config, says) -> None:
    """YAML reads ``.inf`` and ``.nan`` as floats: refused by name before the memory is built
    (a NaN passes every range check a constructor makes)."""
    with pytest.raises(ValueError, match=says):
        make_memory(name, **config)


def test_text_only_and_multimodal_variants() -> None:
    """"-text" sends images' surrogates, "-mm" the images; a setting still overrides."""
    assert make_memory("context-text").send_images is False
    assert make_memory("context-mm").send_images is True
    assert make_memory("context").send_images is True  # plain context stays multimodal
    assert make_memory("rag-text").send_images is False
    assert make_memory("rag-mm").send_images is True
    assert make_memory("rag").send_images is False  # plain rag stays text-only
    assert make_memory("rag-mm", k=4).config()["k"] == 4
    assert make_memory("context-text").config() != make_memory("context-mm").config()
