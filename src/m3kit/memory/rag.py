"""``rag``: top-k retrieval over the items' text surrogates.

At build, every item with text (transcripts, rounds, frames and images through their
description and OCR text) is embedded in one batch and indexed, with BM25, in a hybrid index of
its own key (``hybrid``). ``retrieve`` searches with the query (at answer: ``query=`` when the
caller gives the bare question, else the prompt) and returns the ``k`` best items *visible at
the question's time*, best first: the visible ids go into each engine's search as a filter, so
the cut is exact and never costs recall. ``retrieval=DENSE_SEARCH`` (``retrieval.config``) is
the embedding-only rag of before. The retrieved items are sent in time order, each with its
label, then the question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryItem
from m3kit.memory.indexed import IndexedMemory
from m3kit.memory.prompt import PromptBuilder, ask_model

if TYPE_CHECKING:
    from m3kit.memory.retrieval.config import RetrievalConfig
    from m3kit.perception.base import TextEmbedder, TextReader


class RagMemory(IndexedMemory):
    """Top-``k`` items by hybrid search (BM25 and text embeddings, fused): their text, and
    their raw images too when ``send_images``.

    ``send_images`` sends retrieved frames and images as images instead of their surrogate
    text. Items without any text are kept but cannot be retrieved. ``retrieval``: the search
    (``IndexedMemory``).
    """

    name = "rag"

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        k: int = 8,
        send_images: bool = False,
        ocr: bool = True,
        reader: TextReader | None = None,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, reader=reader, retrieval=retrieval)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        self.k = k
        self.send_images = send_images
        self.ocr = ocr

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name,
            "k": self.k,
            **self.search_config(),
            "send_images": self.send_images,
            "ocr": self.ocr_config(),
        }

    async def _retrieve(
        self, key: str, query: str, items: list[MemoryItem], k: int | None
    ) -> list[MemoryItem]:
        by_id = {item.id: item for item in items}
        hits = await self.ranked(key, query, k or self.k, by_id)
        return [by_id[hit_id] for hit_id, _ in hits]

    async def _answer(
        self, key: str, items: list[MemoryItem], request: AnswerRequest
    ) -> MemoryAnswer:
        retrieved = await self.retrieve(key, request.query, time=request.time)
        chosen = {item.id for item in retrieved}
        builder = PromptBuilder()
        # Sent in time order (items are), not rank order: the model reads a story.
        builder.items("Retrieved memory, oldest first:",
                      [item for item in items if item.id in chosen], send_images=self.send_images)
        builder.question(request.prompt, request.images)
        return await ask_model(request, builder, retrieved_ids=[i.id for i in retrieved])
