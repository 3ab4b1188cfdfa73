"""``rag``: dense top-k retrieval over the items' text surrogates.

At build, every item with text (transcripts, rounds, frames and images through their
description and OCR text) is embedded in one batch and stored in a vector index of its own key.
At answer, the query (the prompt, or ``query=`` when the caller has a cleaner one) is embedded
and the ``k`` most similar items *visible at the question's time* are retrieved: the visible ids
go into the search as a filter, so the cut is exact and never costs recall. The retrieved items
are sent in time order, each with its label, then the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.memory.base import Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.context import PromptBuilder, ask_model
from m3kit.memory.events import VISUAL_KINDS, item_label, items_from_events
from m3kit.memory.index import Hit, IndexFactory, VectorIndex, make_index
from m3kit.schema.media import ImageRef, MediaRef

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder, TextReader

# The query of the ``answer`` call in progress. ``Memory.answer`` has no query parameter, so
# ``RagMemory.answer`` hands it to ``_answer`` through a context variable: each asyncio task
# sees its own value, so concurrent answers never mix their queries.
_QUERY: ContextVar[str | None] = ContextVar("m3kit_rag_query", default=None)


class RagMemory(Memory):
    """Top-``k`` items by cosine similarity of text embeddings, sent as text.

    ``index`` names a vector engine (``make_index``) or is a factory ``(dim) -> VectorIndex``.
    ``send_images`` sends retrieved frames and images as images instead of their surrogate
    text. Items without any text are kept but cannot be retrieved.
    """

    name = "rag"

    def __init__(
        self,
        *,
        embedder: TextEmbedder | None = None,
        k: int = 8,
        index: str | IndexFactory = "faiss",
        send_images: bool = False,
        ocr: bool = True,
        reader: TextReader | None = None,
    ) -> None:
        super().__init__()
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        self.k = k
        self.send_images = send_images
        self.ocr = ocr
        self.index_engine = index
        self._embedder = embedder
        self._reader = reader
        self._indexes: dict[str, VectorIndex] = {}

    def config(self) -> dict[str, Any]:
        engine = self.index_engine
        return {
            "memory": self.name,
            "k": self.k,
            "embedder": self.embedder().name,
            "index": engine if isinstance(engine, str) else getattr(engine, "name", repr(engine)),
            "send_images": self.send_images,
            "ocr": self.reader().name if self.ocr else None,
        }

    def embedder(self) -> TextEmbedder:
        """The text embedder (all-MiniLM-L6-v2 unless one was given); loads on first use."""
        if self._embedder is None:
            from m3kit.perception.embeddings import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder


    def index(self, key: str) -> VectorIndex:
        """The vector index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key]

    async def answer(
        self,
        key: str,
        prompt: str,
        model: Any,
        *,
        time: float | None = None,
        images: Sequence[MediaRef] = (),
        generate_config: Any = None,
        cache: Any = None,
        query: str | None = None,
    ) -> MemoryAnswer:
        """``Memory.answer``; ``query`` replaces the prompt as the retrieval query (e.g. the
        question without its instructions and choices)."""
        token = _QUERY.set(query)
        try:
            return await super().answer(key, prompt, model, time=time, images=images,
                                        generate_config=generate_config, cache=cache)
        finally:
            _QUERY.reset(token)

    async def retrieve(self, key: str, query: str, items: Sequence[MemoryItem]) -> list[Hit]:
        """The top-``k`` hits for ``query`` among ``items`` of ``key``, best first."""
        index = self._indexes[key]
        allow = [item.id for item in items]
        embedder = self.embedder()

        def search() -> list[Hit]:
            return index.search(embedder.embed([query]), self.k, allow=allow)[0]

        return await anyio.to_thread.run_sync(search)

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        reader = self.reader() if self.ocr else None
        embedder = self.embedder()
        factory = self.index_engine

        def build() -> tuple[list[MemoryItem], VectorIndex]:
            items = items_from_events(key, events, reader=reader)
            texted = [item for item in items if item.text.strip()]
            vectors = embedder.embed([item.text for item in texted])
            index = (make_index(factory, dim=embedder.dim) if isinstance(factory, str)
                     else factory(embedder.dim))
            index.add([item.id for item in texted], vectors)
            return items, index

        items, index = await anyio.to_thread.run_sync(build)
        self._indexes[key] = index
        return items

    async def _answer(
        self,
        key: str,
        items: list[MemoryItem],
        prompt: str,
        model: Any,
        *,
        images: Sequence[MediaRef],
        generate_config: Any,
        cache: Any,
    ) -> MemoryAnswer:
        hits = await self.retrieve(key, _QUERY.get() or prompt, items) if items else []
        ranked = [hit_id for hit_id, _ in hits]
        chosen = set(ranked)
        builder = PromptBuilder()
        if ranked:
            builder.text("Retrieved memory, oldest first:")
        for item in items:  # items are in time order
            if item.id not in chosen:
                continue
            if self.send_images and item.modality in VISUAL_KINDS and isinstance(
                item.source, ImageRef
            ):
                builder.text(f"{item_label(item)}:")
                builder.image(item.source)
            else:
                builder.text(f"{item_label(item)}: {item.text}")
        builder.question(prompt, images)
        return await ask_model(model, builder, generate_config=generate_config, cache=cache,
                               retrieved_ids=ranked)
