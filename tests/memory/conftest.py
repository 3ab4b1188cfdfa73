"""Fixtures for the memory tests: real perception models loaded once, frames with rendered text,
and a model that records the exact message a memory sends.

The recording model is inspect's ``mockllm/model`` with a callable output: it answers a fixed
string and reports fixed token usage, so the tests can check what each memory *assembled* and
*accounted* — never the quality of an answer.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from m3kit.memory import MemoryEvent
from m3kit.perception import MiniLMEmbedder, RapidTextReader
from m3kit.schema import ImageRef

REPLY = "recorded"
INPUT_TOKENS = 120
CACHED_TOKENS = 30
OUTPUT_TOKENS = 7

# Frames with text on them, (time, text): two mention the red fox, one after the other.
TEXT_FRAMES = [
    (1.0, "the red fox jumps over the fence"),
    (2.0, "a blue whale swims in the ocean"),
    (4.0, "the red fox sleeps in its den"),
]


@dataclass
class Recorder:
    """An inspect model plus every message list it was asked to answer."""

    model: Any
    calls: list[list[Any]] = field(default_factory=list)
    reply: str = REPLY
    prompt_tokens: int = INPUT_TOKENS + CACHED_TOKENS  # what a memory must report
    completion_tokens: int = OUTPUT_TOKENS

    def last_content(self) -> list[Any]:
        """The content parts of the single user message of the last call."""
        (message,) = self.calls[-1]
        assert message.role == "user"
        if isinstance(message.content, str):  # text only: sent as a string
            from inspect_ai.model import ContentText

            return [ContentText(text=message.content)]
        return list(message.content)

    def last_text(self) -> str:
        return "\n".join(p.text for p in self.last_content() if p.type == "text")

    def last_images(self) -> list[bytes]:
        """The bytes of each image sent in the last call (inspect sends data URIs)."""
        return [base64.b64decode(p.image.split(",", 1)[1])
                for p in self.last_content() if p.type == "image"]


@pytest.fixture
def recorder() -> Recorder:
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    calls: list[list[Any]] = []

    def respond(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        calls.append(list(messages))
        output = ModelOutput.from_content(model="mockllm", content=REPLY)
        # Set explicitly: mockllm would otherwise count tokens with tiktoken (a download).
        output.usage = ModelUsage(input_tokens=INPUT_TOKENS, output_tokens=OUTPUT_TOKENS,
                                  input_tokens_cache_read=CACHED_TOKENS)
        return output

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    return Recorder(model=model, calls=calls)


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    """The real MiniLM embedder, loaded once for the session."""
    model = MiniLMEmbedder()
    model.embed(["warm up"])
    return model


@pytest.fixture(scope="session")
def reader() -> RapidTextReader:
    """The real RapidOCR reader, shared by the session (loads on its first read)."""
    return RapidTextReader()


def render_text(path: Path, text: str, *, size: tuple[int, int] = (480, 96)) -> Path:
    """Write a JPEG with ``text`` drawn in white on a dark background."""
    image = Image.new("RGB", size, (24, 24, 32))
    ImageDraw.Draw(image).text((16, size[1] // 3), text, fill=(255, 255, 255),
                               font=ImageFont.load_default(size=24))
    Image.fromarray(np.asarray(image)).save(path, format="JPEG", quality=95)
    return path


def blank_image(path: Path, shade: int) -> Path:
    Image.new("RGB", (64, 48), (shade, shade, shade)).save(path, format="JPEG")
    return path


@pytest.fixture(scope="session")
def text_frame_events(tmp_path_factory: pytest.TempPathFactory) -> list[MemoryEvent]:
    """``frame`` events for ``TEXT_FRAMES``, each pointing at a JPEG with its text drawn."""
    folder = tmp_path_factory.mktemp("text_frames")
    return [
        MemoryEvent(id=f"frame-{n}", kind="frame", time=t,
                    media=ImageRef(path=str(render_text(folder / f"f{n}.jpg", text))))
        for n, (t, text) in enumerate(TEXT_FRAMES)
    ]


@pytest.fixture(scope="session")
def image_events(tmp_path_factory: pytest.TempPathFactory) -> list[MemoryEvent]:
    """Four plain ``image`` events at t = 0, 1, 2, 3 with descriptions (no text in pixels)."""
    folder = tmp_path_factory.mktemp("images")
    return [
        MemoryEvent(id=f"img-{n}", kind="image", time=float(n), text=f"photo number {n}",
                    media=ImageRef(path=str(blank_image(folder / f"i{n}.jpg", 40 * n))))
        for n in range(4)
    ]


@pytest.fixture(scope="session")
def make_text_events() -> Callable[..., list[MemoryEvent]]:
    """``make(prefix, count, start=0.0)`` -> text events ``{prefix}-0..`` one second apart,
    each naming its prefix in its text."""

    def make(prefix: str, count: int, *, start: float = 0.0) -> list[MemoryEvent]:
        return [
            MemoryEvent(id=f"{prefix}-{n}", kind="text", time=start + n,
                        text=f"{prefix} note {n}: the {prefix} project detail number {n}")
            for n in range(count)
        ]

    return make
