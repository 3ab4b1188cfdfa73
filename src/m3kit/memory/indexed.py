"""``IndexedMemory``: the base of the memories that retrieve by text embedding.

What ``rag``, ``hierarchical`` and ``proctor`` share: a text embedder (all-MiniLM-L6-v2 unless
one is given, loaded on first use), a vector engine, one vector index per memory key, built
once from (id, text) pairs and searched with the visible ids as a filter, and an OCR reader for
the surrogates of frames and images (``OcrSurrogates``).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.memory.base import Memory, MemoryEvent, MemoryItem
from m3kit.memory.index import Hit, IndexFactory, VectorIndex, make_index
from m3kit.memory.ocr import OcrSurrogates

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder, TextReader


class IndexedMemory(OcrSurrogates, Memory):
    """A memory with a text embedder and a vector index per key.

    Subclasses say what to store and what to embed (``_prepare``); the build runs it and the
    embedder in a worker thread and keeps the index. ``ocr`` (set by subclasses) hands the OCR
    ``reader`` to ``_prepare``.
    """

    def __init__(
        self,
        *,
        embedder: TextEmbedder | None = None,
        index: str | IndexFactory = "faiss",
        reader: TextReader | None = None,
    ) -> None:
        super().__init__()
        self.index_engine = index
        self._embedder = embedder
        self._text_reader = reader
        self._indexes: dict[str, VectorIndex] = {}

    def embedder(self) -> TextEmbedder:
        """The text embedder (all-MiniLM-L6-v2 unless one was given); loads on first use."""
        if self._embedder is None:
            from m3kit.perception.embeddings import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def index(self, key: str) -> VectorIndex:
        """The vector index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key]

    def index_config(self) -> dict[str, Any]:
        """The embedder and the vector engine: what every indexed memory's config names."""
        engine = self.index_engine
        return {
            "embedder": self.embedder().name,
            "index": engine if isinstance(engine, str) else getattr(engine, "name", repr(engine)),
        }

    def new_index(self, ids: Sequence[str], texts: Sequence[str]) -> VectorIndex:
        """A fresh index of ``texts`` under ``ids`` (blank texts are left out: they cannot be
        retrieved). Runs the embedder: call it from a worker thread."""
        pairs = [(i, t) for i, t in zip(ids, texts, strict=True) if t.strip()]
        embedder = self.embedder()
        factory = self.index_engine
        index = (make_index(factory, dim=embedder.dim) if isinstance(factory, str)
                 else factory(embedder.dim))
        index.add([i for i, _ in pairs], embedder.embed([t for _, t in pairs]))
        return index

    def search(self, key: str, query: str, k: int, allow: Sequence[str]) -> list[Hit]:
        """The ``k`` best hits for ``query`` among the ids ``allow`` in the index of ``key``.
        Runs the embedder: call it from a worker thread."""
        vector = self.embedder().embed([query])
        return self._indexes[key].search(vector, k, allow=list(allow))[0]

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        reader = self.build_reader()

        def build() -> list[MemoryItem]:
            items, ids, texts = self._prepare(key, events, reader)
            self._indexes[key] = self.new_index(ids, texts)
            return items

        return await anyio.to_thread.run_sync(build)

    def _forget(self, key: str) -> None:
        self._indexes.pop(key, None)

    @abstractmethod
    def _prepare(self, key: str, events: list[MemoryEvent], reader: TextReader | None
                 ) -> tuple[list[MemoryItem], list[str], list[str]]:
        """(the items of ``key``, the ids to index, their texts). Runs in a worker thread."""
