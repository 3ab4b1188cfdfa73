"""``m3kit/hf`` end to end on CPU with a tiny random Qwen2.5-VL built in the test.

The weights are random, so the words are noise; what is checked is the plumbing: messages with
an image become Qwen-VL inputs, generation runs, only new tokens are decoded, usage and image
tokens are counted, greedy decoding is deterministic.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    ModelOutput,
    get_model,
)

import m3kit.models  # noqa: F401  (registers the m3kit model API)
from m3kit.models import image_content
from m3kit.models.errors import ModelArgError, ModelLoadError
from m3kit.models.hf import HFVisionModelAPI, _expand, to_hf_chat

# 112 x 56 px is a multiple of 28 (patch 14 x merge 2) within the tiny processor's pixel bounds,
# so it is not resized: (56/14) * (112/14) = 32 patches, merged 2x2 into 8 image tokens.
WIDTH, HEIGHT, IMAGE_TOKENS = 112, 56, 8


def image_message(text: str = "What is written in the image?") -> ChatMessageUser:
    pixels = np.zeros((HEIGHT, WIDTH, 3), dtype=np.uint8)
    pixels[:, : WIDTH // 2] = (200, 40, 40)
    return ChatMessageUser(content=[image_content(pixels), ContentText(text=text)])


def generate(model: Any, messages: list[Any], **config: Any) -> ModelOutput:
    return asyncio.run(model.generate(messages, config=GenerateConfig(**config)))


@pytest.fixture(scope="module")
def hf_model(tiny_qwen: Path) -> Any:
    return get_model("m3kit/hf", model_path=str(tiny_qwen), memoize=False)


def test_text_and_image_end_to_end(hf_model: Any) -> None:
    output = generate(hf_model, [image_message()], max_tokens=6)
    assert isinstance(output.completion, str)
    assert output.usage is not None
    assert 1 <= output.usage.output_tokens <= 6
    meta = output.metadata["m3kit"]
    assert meta["images"] == 1 and meta["image_tokens"] == IMAGE_TOKENS
    assert output.usage.input_tokens > IMAGE_TOKENS  # the template's text around the image
    assert output.usage.total_tokens == output.usage.input_tokens + output.usage.output_tokens
    assert meta["device"] == "cpu" and meta["dtype"] == "float32"
    assert meta["do_sample"] is False
    assert output.stop_reason in ("stop", "max_tokens")
    # Greedy decoding: the same input gives the same tokens.
    again = generate(hf_model, [image_message()], max_tokens=6)
    assert again.completion == output.completion and again.usage == output.usage


def test_conversation_without_images(hf_model: Any) -> None:
    messages = [ChatMessageSystem(content="Be brief."), ChatMessageUser(content="Hello"),
                ChatMessageAssistant(content="Hi."), ChatMessageUser(content="Bye")]
    output = generate(hf_model, messages, max_tokens=3)
    meta = output.metadata["m3kit"]
    assert meta["images"] == 0 and meta["image_tokens"] == 0
    assert output.usage is not None and output.usage.output_tokens <= 3


def test_model_name_may_carry_the_path(tiny_qwen: Path) -> None:
    model = get_model(f"m3kit/hf/{tiny_qwen}", memoize=False)
    assert isinstance(model.api, HFVisionModelAPI)
    assert model.api.model_path == tiny_qwen
    assert str(model) == f"m3kit/hf/{tiny_qwen}"


def test_bad_arguments_are_named(tiny_qwen: Path, tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="not found"):
        HFVisionModelAPI("hf", model_path=str(tmp_path / "missing"))
    with pytest.raises(ModelArgError, match="temperatur"):
        HFVisionModelAPI("hf", model_path=str(tiny_qwen), temperatur=0.5)
    with pytest.raises(ModelArgError, match="dtype"):
        HFVisionModelAPI("hf", model_path=str(tiny_qwen), dtype="int3")


def test_messages_become_a_transformers_chat() -> None:
    chat, images = to_hf_chat([
        ChatMessageSystem(content="sys"), image_message("q"),
        ChatMessageTool(content="42", tool_call_id="t1"),
    ])
    assert [turn["role"] for turn in chat] == ["system", "user", "user"]
    assert chat[1]["content"] == [{"type": "image"}, {"type": "text", "text": "q"}]
    assert chat[2]["content"][0]["text"].startswith("Tool result")
    assert len(images) == 1 and images[0].size == (WIDTH, HEIGHT)


def test_image_token_expansion() -> None:
    assert _expand("a<i>b<i>c", "<i>", [2, 1]) == "a<i><i>b<i>c"
    with pytest.raises(ModelArgError, match="2 image tokens for 1 images"):
        _expand("<i><i>", "<i>", [3])
