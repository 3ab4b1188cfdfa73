"""Glue between m3kit media (frames, pages) and inspect-ai message content, both ways.

Going in, frames become ``ContentImage`` items. By default they keep the file path: inspect
materialises a sample's media into data URIs itself just before the model call and strips the
base64 from the log, so paths keep datasets and logs small. A solver that adds images in the
middle of a run (a memory agent escalating to raw frames) must hand the model inline data, so
``inline=True`` (or ``inline_images``) encodes them at once.

Every image reference going in passes the pixel bound of ``m3kit.media.image`` first (checked
from its header; a decompression bomb is a ``MediaTooLargeError`` naming it, never sent).

Coming out, a provider pulls the images and the text back out of inspect messages:
``ContentImage.image`` may be a data URI, a local path or an http(s) URL.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import urllib.request
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from inspect_ai.model import (
    ChatMessage,
    Content,
    ContentAudio,
    ContentImage,
    ContentText,
    ContentVideo,
)
from PIL import Image

from m3kit.errors import MediaError, MediaNotFoundError
from m3kit.media.image import (
    check_image,
    decode_image_rgb,
    image_data_uri,
    image_ref_label,
    inline_image_bytes,
)

ImageLike = str | Path | np.ndarray | Image.Image
Detail = Literal["auto", "low", "high"]
Role = Literal["system", "user", "assistant", "tool"]

_URL_TIMEOUT_S = 30.0


def image_content(
    image: ImageLike, *, inline: bool = False, detail: Detail = "auto"
) -> ContentImage:
    """One image as message content.

    A path stays a path unless ``inline``; an array (RGB uint8) or a PIL image is always inlined
    as PNG, since there is no file to point at (PNG: lossless, so rendered text stays legible).
    A file or an inline image is checked against the pixel bound first (its header only):
    ``MediaTooLargeError`` for a decompression bomb, ``CorruptMediaError`` for no image.
    """
    if isinstance(image, np.ndarray | Image.Image):
        return ContentImage(image=_encode_pil(_as_pil(image)), detail=detail)
    ref = str(image)
    if ref.startswith(("http://", "https://")):
        return ContentImage(image=ref, detail=detail)
    if ref.startswith("data:"):
        check_image(ref)
        return ContentImage(image=ref, detail=detail)
    path = Path(ref).expanduser()
    if not path.is_file():
        raise MediaNotFoundError("image file not found", path=path)
    if inline:
        return ContentImage(image=file_data_uri(path), detail=detail)
    check_image(path)
    return ContentImage(image=str(path), detail=detail)


def frames_to_content(
    frames: Sequence[ImageLike],
    *,
    labels: Sequence[str] | None = None,
    inline: bool = False,
    detail: Detail = "auto",
) -> list[Content]:
    """Frames (or rendered pages) as content, optionally each preceded by a text label.

    ``labels`` (e.g. ``"Frame 3 at 12.0 s"``) must match ``frames`` one to one; models that
    read interleaved text use them to tell frames apart in time.
    """
    if labels is not None and len(labels) != len(frames):
        raise ValueError(f"{len(labels)} labels for {len(frames)} frames")
    content: list[Content] = []
    for n, frame in enumerate(frames):
        if labels is not None:
            content.append(ContentText(text=labels[n]))
        content.append(image_content(frame, inline=inline, detail=detail))
    return content


def file_data_uri(path: str | Path) -> str:
    """A data URI holding the bytes of an image file, under the pixel bound
    (``m3kit.media.image.image_data_uri``)."""
    return image_data_uri(Path(path).expanduser())


def inline_images(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """Copies of ``messages`` with every file-path image replaced by a data URI.

    inspect requires inline media at the model boundary; it inlines a sample's own input, but
    not images a solver adds later.
    """
    out: list[ChatMessage] = []
    for message in messages:
        if isinstance(message.content, str):
            out.append(message)
            continue
        content = [
            image_content(item.image, inline=True, detail=_detail(item))
            if isinstance(item, ContentImage) and not item.image.startswith(("data:", "http"))
            else item
            for item in message.content
        ]
        out.append(message.model_copy(update={"content": content}))
    return out


def image_refs(
    messages: Sequence[ChatMessage], roles: Iterable[Role] = ("user", "tool")
) -> list[str]:
    """The image references (data URI, path or URL) of the messages, in conversation order."""
    wanted = set(roles)
    return [
        item.image
        for message in messages
        if message.role in wanted and not isinstance(message.content, str)
        for item in message.content
        if isinstance(item, ContentImage)
    ]


def media_refs(
    messages: Sequence[ChatMessage], roles: Iterable[Role] = ("user", "tool")
) -> list[tuple[Literal["audio", "video"], str, str]]:
    """The audio and video items of the messages: (kind, reference, format such as ``wav``)."""
    wanted = set(roles)
    found: list[tuple[Literal["audio", "video"], str, str]] = []
    for message in messages:
        if message.role not in wanted or isinstance(message.content, str):
            continue
        for item in message.content:
            if isinstance(item, ContentAudio):
                found.append(("audio", item.audio, item.format))
            elif isinstance(item, ContentVideo):
                found.append(("video", item.video, item.format))
    return found


def count_images(messages: Sequence[ChatMessage]) -> int:
    """How many images the messages carry (any role): the "images sent" of a call."""
    return len(image_refs(messages, roles=("system", "user", "assistant", "tool")))


def image_key(ref: str) -> str:
    """A short stable key for an image reference (sha1 of the reference text).

    For a data URI the reference is the content itself; for a path it is the path, which is
    what a frame store's content-addressed file names already make unique.
    """
    return hashlib.sha1(ref.encode("utf-8", "surrogatepass")).hexdigest()


def load_image(ref: str) -> Image.Image:
    """Decode one image reference to an RGB PIL image, in its stored pixel order.

    Raises ``MediaError`` naming the reference: ``MediaNotFoundError`` for a missing file,
    ``MediaTooLargeError`` for an image over ``m3kit.media.image.MAX_IMAGE_PIXELS`` (checked
    from its header: a decompression bomb fails its own sample, it does not exhaust memory),
    ``CorruptMediaError`` for one that does not decode.
    """
    shown = image_ref_label(ref)
    try:
        if ref.startswith("data:"):
            data = inline_image_bytes(ref)
        elif ref.startswith(("http://", "https://")):
            with urllib.request.urlopen(ref, timeout=_URL_TIMEOUT_S) as response:
                data = response.read()
        else:
            path = Path(ref).expanduser()
            if not path.is_file():
                raise MediaNotFoundError("image file not found", path=path)
            data = path.read_bytes()
    except MediaError:
        raise
    except (OSError, ValueError, binascii.Error) as error:
        raise MediaError(f"cannot decode image: {error}", path=shown) from error
    return decode_image_rgb(data, path=shown, upright=False)


def load_rgb(ref: str) -> np.ndarray:
    """Decode one image reference to an RGB uint8 array (height, width, 3)."""
    return np.asarray(load_image(ref), dtype=np.uint8)


def message_images(
    messages: Sequence[ChatMessage], roles: Iterable[Role] = ("user", "tool")
) -> list[np.ndarray]:
    """The images of the messages as RGB uint8 arrays, in conversation order."""
    return [load_rgb(ref) for ref in image_refs(messages, roles)]


def message_text(
    messages: Sequence[ChatMessage],
    roles: Iterable[Role] = ("system", "user", "assistant", "tool"),
    *,
    separator: str = "\n\n",
) -> str:
    """The text of the messages (text content only, reasoning left out), joined."""
    wanted = set(roles)
    return separator.join(
        text for message in messages if message.role in wanted
        if (text := content_text(message.content))
    )


def content_text(content: str | Sequence[Content]) -> str:
    """The text items of one message's content, joined by newlines."""
    if isinstance(content, str):
        return content
    return "\n".join(item.text for item in content if isinstance(item, ContentText))


def _as_pil(image: np.ndarray | Image.Image) -> Image.Image:
    if isinstance(image, Image.Image):
        return image.convert("RGB")
    array = np.asarray(image)
    if array.dtype != np.uint8 or array.ndim not in (2, 3):
        raise ValueError(f"expected a uint8 image array, got {array.dtype} {array.shape}")
    return Image.fromarray(array).convert("RGB")


def _encode_pil(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _detail(item: ContentImage) -> Detail:
    # "original" (an OpenAI-only level) has no meaning for a path; keep the common three.
    return item.detail if item.detail in ("auto", "low", "high") else "auto"

