"""Prompt assembly: what every memory needs to talk to a model.

``PromptBuilder`` builds one user message of text and images (the memory's items or chunks,
then the question); ``ask_model`` sends it to the request's model and reads the usage back.
Every memory answers through these two.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.errors import M3kitError, MediaNotFoundError
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryItem
from m3kit.memory.events import VISUAL_KINDS, item_label
from m3kit.schema.media import ImageRef, MediaRef
from m3kit.schema.prediction import Usage

if TYPE_CHECKING:
    from inspect_ai.model import Content


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
            # sent_as_image already checks the source is an ImageRef; isinstance narrows it here
            if sent_as_image(item, send_images) and isinstance(item.source, ImageRef):
                self.text(f"{item_label(item)}:")
                self.image(item.source)
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

    async def content(self) -> str | list[Content]:
        """The message content; images are read into data URIs, as inspect requires of
        anything it sends (a bare path is refused at generate time). Plain text when no image
        is sent: text-only chat templates (llama.cpp's for one) join content parts as a string
        and refuse a list."""
        from inspect_ai.model import ContentImage, ContentText

        self._flush()
        if all(kind == "text" for kind, _ in self._parts):
            return "\n".join(value for _, value in self._parts)
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


def json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (a fence or prose around it allowed; single quotes
    read as double when that is what makes it parse, as VideoAgent's release does), else
    ``None``: how a memory reads the JSON it asked its model for."""
    for variant in (text, text.replace("'", '"')):
        for match in re.finditer(r"\{", variant):
            try:
                value, _ = json.JSONDecoder().raw_decode(variant[match.start():])
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
    return None


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
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, model_calls=1,
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
