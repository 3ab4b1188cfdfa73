"""``context``: the whole history in the prompt, within a token budget, oldest evicted first.

The baseline every other memory is measured against: no ranking, no index, just the newest
items (visible at the question's time) that fit ``token_budget``, in time order, then the
question; what it retrieves is that stretch, most recent first. Frames and images go as
images (``send_images``) or as their text surrogates.

This module also holds what every memory needs to talk to a model: ``PromptBuilder`` (one user
message of text and images: the memory's items or chunks, then the question) and ``ask_model``
(generate, then read the usage back). Every memory answers through these two.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.errors import M3kitError, MediaNotFoundError
from m3kit.memory.base import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import VISUAL_KINDS, item_label, items_from_events
from m3kit.memory.ocr import OcrSurrogates
from m3kit.schema.media import ImageRef, MediaRef
from m3kit.schema.prediction import Usage
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from inspect_ai.model import Content

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


def sent_as_image(item: MemoryItem, send_images: bool) -> bool:
    """Whether ``item`` goes to the model as its image (a frame or image with an image file or
    inline image, when images are sent) rather than as its text surrogate; a web image is never
    fetched (m3kit runs offline), its caption goes instead."""
    return (send_images and item.modality in VISUAL_KINDS and isinstance(item.source, ImageRef)
            and not item.source.remote)


class PromptBuilder:
    """One user message: text lines (adjacent ones merged) and images, in order."""

    def __init__(self) -> None:
        self._parts: list[tuple[str, str]] = []  # ("text", str) | ("image", path)
        self._lines: list[str] = []

    @property
    def images(self) -> int:
        return sum(1 for kind, _ in self._parts if kind == "image")

    def text(self, line: str) -> None:
        self._lines.append(line)

    def image(self, ref: ImageRef) -> None:
        self._flush()
        self._parts.append(("image", ref.path))

    def items(self, header: str, items: Sequence[MemoryItem], *, send_images: bool) -> None:
        """``header``, then each item (in the given order) as ``label: text``, or its label and
        its image when it is sent as one; nothing when ``items`` is empty."""
        if items:
            self.text(header)
        for item in items:
            if sent_as_image(item, send_images):
                self.text(f"{item_label(item)}:")
                self.image(item.source)  # type: ignore[arg-type]
            else:
                self.text(f"{item_label(item)}: {item.text}")

    def chunks(self, header: str, chunks: Sequence[MemoryItem],
               raw: Mapping[str, Sequence[tuple[str, ImageRef]]] | None = None) -> None:
        """``header``, then each chunk (a round of a conversation, in the given order) as
        ``[when] id: text``, followed by the raw images ``raw`` names for it."""
        if chunks:
            self.text(header)
        for chunk in chunks:
            when = chunk.metadata.get("when")
            self.text(f"[{when}] {chunk.id}: {chunk.text}" if when else
                      f"{chunk.id}: {chunk.text}")
            for name, ref in (raw or {}).get(chunk.id, ()):
                self.text(f"{name}:")
                self.image(ref)

    def question(self, prompt: str, images: Sequence[MediaRef] = ()) -> None:
        """The question's own images, then its text: always last, after the memory."""
        if self._lines:
            self._lines.append("")  # a blank line between the memory and the question
        for ref in images:
            if not isinstance(ref, ImageRef):
                # Rendering pages and clips into message content is m3kit.models' job.
                raise M3kitError(f"a question's {ref.kind} cannot be sent by a memory, only "
                                 "image files", path=ref.path)
            self.image(ref)
        self.text(prompt)

    async def content(self) -> list[Content]:
        """The message content; images are read into data URIs, as inspect requires of
        anything it sends (a bare path is refused at generate time)."""
        from inspect_ai.model import ContentImage, ContentText

        self._flush()
        parts: list[Content] = []
        for kind, value in self._parts:
            if kind == "text":
                parts.append(ContentText(text=value))
            else:
                parts.append(ContentImage(image=await _data_uri(value)))
        return parts

    def _flush(self) -> None:
        if self._lines:
            self._parts.append(("text", "\n".join(self._lines)))
            self._lines = []


async def ask_model(
    request: AnswerRequest, builder: PromptBuilder, *, retrieved_ids: Sequence[str] = ()
) -> MemoryAnswer:
    """Send the built message to the request's inspect ``Model`` and account for what it cost.

    The answer's ``provider_metadata`` is what the provider reported about its output (a
    memory that judges the answer, M3Proctor's confidence test, reads it).
    """
    from inspect_ai.model import ChatMessageUser, GenerateConfig

    kwargs: dict[str, Any] = {"config": request.generate_config or GenerateConfig()}
    if request.cache is not None:  # inspect's default (no caching, or the config's) otherwise
        kwargs["cache"] = request.cache
    content = await builder.content()
    output = await request.model.generate(input=[ChatMessageUser(content=content)], **kwargs)
    usage = output.usage
    prompt_tokens = completion_tokens = 0
    if usage is not None:
        # inspect's input_tokens excludes cached tokens; the prompt's size includes them.
        prompt_tokens = (usage.input_tokens + (usage.input_tokens_cache_read or 0)
                         + (usage.input_tokens_cache_write or 0))
        completion_tokens = usage.output_tokens
    return MemoryAnswer(
        output=output.completion,
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                    images_sent=builder.images, retrieved_ids=list(retrieved_ids)),
        error=output.error,
        provider_metadata=dict(getattr(output, "metadata", None) or {}),
    )


async def _data_uri(path: str) -> str:
    # through the pixel bound every sent image passes (the ingest checked it already)
    from m3kit.media.image import image_data_uri

    try:
        return await anyio.to_thread.run_sync(image_data_uri, path)
    except FileNotFoundError:
        # A frame evicted from the frame store since the build: name it, do not hide it.
        raise MediaNotFoundError("image file not found when sending it", path=path) from None
