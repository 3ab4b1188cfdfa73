"""``context``: the whole history in the prompt, within a token budget, oldest evicted first.

The baseline every other memory is measured against: no ranking, no index, just the newest
items (visible at the question's time) that fit ``token_budget``, in time order, then the
question; what it retrieves is that stretch, most recent first. Frames and images go as
images (``send_images``) or as their text surrogates.

It talks to the model as every memory does (``prompt``: ``PromptBuilder``, ``ask_model``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.memory.base import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import item_label, items_from_events
from m3kit.memory.ocr import OcrSurrogates
from m3kit.memory.prompt import PromptBuilder, ask_model, sent_as_image
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from m3kit.perception.base import TextReader


# m3kit's token estimate where no tokenizer is at hand (this memory's budget, M3Exam's ``full``
# regime, SuperMemory's transcript budget): a quarter of a token per character, the usual
# English rate of BPE tokenizers (about 4 characters a token).
TOKENS_PER_CHAR = 0.25


def estimated_tokens(text: str, tokens_per_char: float = TOKENS_PER_CHAR) -> int:
    """The tokens ``text`` is counted as against a budget: ``ceil(chars * tokens_per_char)``."""
    return math.ceil(len(text) * tokens_per_char)


class ContextMemory(OcrSurrogates, Memory):
    """Everything that fits: the newest visible items within ``token_budget`` tokens.

    An item costs ``image_tokens`` when it goes as an image (a frame or image with an image
    file, and ``send_images``), else ``ceil(len(text) * tokens_per_char)``; its label line
    (``[when] modality id``) is counted at the same rate. Eviction is FIFO: the kept items are
    always the newest contiguous stretch, so the first item that does not fit evicts it and
    everything older. The question itself is not charged to the budget.

    ``ocr`` reads text from frames and images at build time (with ``reader``, else the shared
    default); it is only done when images are not sent (a model that sees the pixels needs no
    OCR surrogate).

    Its retrieval has no ranking, only the budget: ``retrieve`` gives the items the prompt
    would hold, most recent first (the first ``k`` of them are the newest ``k``, what a smaller
    budget would keep first), and the prompt lists them oldest first.
    """

    name = "context"

    def __init__(
        self,
        *,
        token_budget: int = 32_000,
        image_tokens: int = 256,
        send_images: bool = True,
        tokens_per_char: float = TOKENS_PER_CHAR,
        ocr: bool = True,
        reader: TextReader | None = None,
    ) -> None:
        super().__init__()
        if token_budget < 0 or image_tokens < 0 or tokens_per_char <= 0:
            raise ValueError("token_budget and image_tokens must be >= 0, tokens_per_char > 0")
        self.token_budget = token_budget
        self.image_tokens = image_tokens
        self.send_images = send_images
        self.tokens_per_char = tokens_per_char
        self.ocr = ocr and not send_images
        self._text_reader = reader

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name,
            "token_budget": self.token_budget,
            "image_tokens": self.image_tokens,
            "send_images": self.send_images,
            "tokens_per_char": self.tokens_per_char,
            "ocr": self.ocr_config(),
        }

    def cost(self, item: MemoryItem) -> int:
        """Tokens ``item`` takes in the prompt, its label included."""
        label = self._tokens(item_label(item))
        if self._as_image(item):
            return label + self.image_tokens
        return label + self._tokens(item.text)

    def kept(self, items: Sequence[MemoryItem]) -> list[MemoryItem]:
        """The newest contiguous run of ``items`` (time-ordered) that fits the budget."""
        spent = 0
        start = len(items)
        for n in range(len(items) - 1, -1, -1):
            spent += self.cost(items[n])
            if spent > self.token_budget:
                break
            start = n
        return list(items[start:])

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        skipped: list[SkippedRecord] = []
        items = await anyio.to_thread.run_sync(partial(
            items_from_events, key, events, reader=self.build_reader(), skipped=skipped))
        self._skip(key, skipped)
        return items

    async def _retrieve(
        self, key: str, query: str, items: list[MemoryItem], k: int | None
    ) -> list[MemoryItem]:
        newest = self.kept(items)[::-1]
        return newest if k is None else newest[:k]

    async def _answer(
        self, key: str, items: list[MemoryItem], request: AnswerRequest
    ) -> MemoryAnswer:
        retrieved = await self.retrieve(key, request.query, time=request.time)
        builder = PromptBuilder()
        builder.items("Memory, oldest first:", retrieved[::-1], send_images=self.send_images)
        builder.question(request.prompt, request.images)
        return await ask_model(request, builder, retrieved_ids=[item.id for item in retrieved])

    def _as_image(self, item: MemoryItem) -> bool:
        return sent_as_image(item, self.send_images)

    def _tokens(self, text: str) -> int:
        return estimated_tokens(text, self.tokens_per_char)
