"""Fixtures for the model-provider tests: the offline perception models, loaded once per
session, a text-frame renderer, and the tiny random Qwen2.5-VL checkpoint."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent


def load_helper(name: str) -> Any:
    """A helper module of this folder, by path (the suite imports tests in importlib mode)."""
    spec = importlib.util.spec_from_file_location(f"m3kit_tests_models_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def embedder() -> Any:
    from m3kit.perception.embeddings import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def reader() -> Any:
    from m3kit.perception.ocr import RapidTextReader

    return RapidTextReader()


@pytest.fixture(scope="session")
def builtin(embedder: Any, reader: Any) -> Any:
    """``get_model("m3kit/builtin")`` sharing the session's embedder and OCR reader."""
    from inspect_ai.model import get_model

    import m3kit.models  # noqa: F401  (registers the m3kit model API)

    return get_model("m3kit/builtin", embedder=embedder, reader=reader, memoize=False)


@pytest.fixture(scope="session")
def render_frame(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Path]:
    """``render(name, lines=(), background=(255, 255, 255))`` -> a 360x240 JPEG frame showing
    the lines in black 24 px text (or a plain colour when there are none).

    Frames are 4:3 and small on purpose: RapidOCR scales the short side up to 736 px before
    detection, so a wide strip would cost several times more to read."""
    folder = tmp_path_factory.mktemp("frames")
    font = ImageFont.load_default(size=24)

    def render(
        name: str, lines: Sequence[str] = (), background: tuple[int, int, int] = (255, 255, 255)
    ) -> Path:
        image = Image.new("RGB", (360, 240), background)
        draw = ImageDraw.Draw(image)
        for n, line in enumerate(lines):
            draw.text((16, 80 + 40 * n), line, fill=(0, 0, 0), font=font)
        path = folder / f"{name}.jpg"
        image.save(path, quality=95)
        return path

    return render


@pytest.fixture(scope="session")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny randomly initialised Qwen2.5-VL checkpoint folder."""
    builder = load_helper("tiny_qwen")
    return builder.build_tiny_qwen(tmp_path_factory.mktemp("tiny_qwen") / "ckpt")
