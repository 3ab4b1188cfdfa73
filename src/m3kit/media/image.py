"""Still images read safely: a pixel bound checked before any pixel is decoded, and every
failure a typed error naming the file.

A crafted or damaged image must cost its own item only. ``Image.open`` reads the header alone,
so the size is known before decoding; an image over ``MAX_IMAGE_PIXELS`` (a decompression bomb:
a few kilobytes of PNG that inflate to gigabytes) is refused with ``MediaTooLargeError``, a
file that does not decode with ``CorruptMediaError``.

An image reference (``m3kit.schema.ImageRef.path``) is a file path, a ``data:`` URI holding the
image, or a web link. Inline images are decoded here, their base64 bounded by
``MAX_INLINE_IMAGE_BYTES`` before it is decoded, a malformed one an ``InlineImageError``; a web
link is never fetched (m3kit runs offline): reading one is a ``RemoteImageError``, and
``image_available`` tells a caller beforehand, so that the image's caption stands in for it.

``image_data_uri`` is the gate every image passes before it leaves the machine (a model
message, inline, whatever provider receives it): the same pixel bound, checked from the header,
and the inline byte bound, so a bomb is refused by name where it would have been sent.
"""

from __future__ import annotations

import base64
import binascii
import io
import mimetypes
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError, MediaTooLargeError
from m3kit.schema.media import INLINE_IMAGE_PREFIX, REMOTE_IMAGE_PREFIXES

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

__all__ = [
    "MAX_IMAGE_PIXELS",
    "MAX_INLINE_IMAGE_BYTES",
    "InlineImageError",
    "RemoteImageError",
    "check_image",
    "decode_image_rgb",
    "image_available",
    "image_data_uri",
    "image_ref_label",
    "inline_image_bytes",
    "read_image_rgb",
]

# Pillow's own default bound (``PIL.Image.MAX_IMAGE_PIXELS``, about 256 MiB of RGB once decoded),
# above which Pillow itself warns of a decompression bomb; m3kit refuses instead of warning.
MAX_IMAGE_PIXELS = 89_478_485
# The largest image a data URI may hold, in decoded bytes: OpenAI's per-image upload limit
# (20 MB), the largest image a chat is expected to carry inline. Checked from the base64 text's
# length, before anything is decoded.
MAX_INLINE_IMAGE_BYTES = 20 * 1024 * 1024
# ``data:[<media type>][;<parameter>]*;base64,<payload>`` (RFC 2397); an inline image must be
# base64 (the percent-encoded form carries text, not photos) and, when typed, an image type.
_DATA_URI = re.compile(r"^data:(?P<type>[^;,]*)(?P<params>(?:;[^;,]*)*),(?P<payload>.*)$",
                       re.DOTALL)
_LABEL_CHARS = 40


class InlineImageError(CorruptMediaError):
    """A ``data:`` image reference that is not a base64 image (no payload, not base64, another
    media type)."""


class RemoteImageError(MediaError):
    """A web link read as an image: m3kit runs offline and does not fetch it."""


def image_ref_label(ref: str | Path) -> str:
    """An image reference as an error or a log names it: a data URI cut to its first
    characters (its payload can be megabytes), anything else as is."""
    text = str(ref)
    if text.startswith(INLINE_IMAGE_PREFIX) and len(text) > _LABEL_CHARS:
        return f"{text[:_LABEL_CHARS]}... ({len(text)} characters)"
    return text


def image_available(ref: str | Path) -> bool:
    """Whether the image ``ref`` names can be read on this machine: an inline image (its
    payload is checked when decoded), or an existing file; never a web link. A path the file
    system refuses (too long, say) is no file."""
    text = str(ref)
    if text.startswith(INLINE_IMAGE_PREFIX):
        return True
    if text.startswith(REMOTE_IMAGE_PREFIXES):
        return False
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def inline_image_bytes(
    ref: str, *, record: str | None = None, max_bytes: int = MAX_INLINE_IMAGE_BYTES
) -> bytes:
    """The encoded image a ``data:`` URI holds. ``InlineImageError`` when it is not a base64
    image (and an empty payload is none), ``MediaTooLargeError`` when it holds more than
    ``max_bytes`` (checked from the base64 length, before decoding); each names ``record``."""
    shown = image_ref_label(ref)
    match = _DATA_URI.match(ref)
    if match is None:
        raise InlineImageError("malformed inline image: a data URI needs a ',' before its "
                               "payload", path=shown, record=record)
    media_type = match["type"].strip().lower()
    params = [p.strip().lower() for p in match["params"].split(";") if p.strip()]
    if media_type and not media_type.startswith("image/"):
        raise InlineImageError(f"inline data of type {media_type!r} is not an image",
                               path=shown, record=record)
    if "base64" not in params:
        raise InlineImageError("malformed inline image: the data URI is not base64",
                               path=shown, record=record)
    payload = "".join(match["payload"].split())
    if len(payload) // 4 * 3 > max_bytes:
        raise MediaTooLargeError(f"inline image of about {len(payload) // 4 * 3} bytes is over "
                                 f"the bound of {max_bytes} bytes", path=shown, record=record)
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise InlineImageError(f"malformed inline image: bad base64 ({exc})", path=shown,
                               record=record) from None
    if not data:
        raise InlineImageError("malformed inline image: empty payload", path=shown,
                               record=record)
    return data


def read_image_rgb(
    path: str | Path, *, record: str | None = None, max_pixels: int = MAX_IMAGE_PIXELS
) -> np.ndarray:
    """The image at ``path`` (a file, or a ``data:`` URI) as an RGB ``uint8`` array (height,
    width, 3), upright per its EXIF orientation. Raises ``MediaNotFoundError`` when there is no
    such file, ``MediaTooLargeError`` when it has more than ``max_pixels`` pixels (checked from
    the header, before decoding) and ``CorruptMediaError`` when it does not decode
    (``InlineImageError`` for a malformed data URI), ``RemoteImageError`` for a web link; each
    names ``path`` and ``record``."""
    source, shown = _source(path, record)
    return np.asarray(_decode(source, shown=shown, record=record, max_pixels=max_pixels,
                              upright=True))


def decode_image_rgb(
    data: bytes,
    *,
    path: str | Path | None = None,
    record: str | None = None,
    max_pixels: int = MAX_IMAGE_PIXELS,
    upright: bool = True,
) -> PILImage:
    """Encoded image bytes (a file's, a data URI's, a download's) as an RGB PIL image, under the
    bound and with the errors of ``read_image_rgb``; ``path`` is how the errors name the image.
    ``upright=False`` keeps the stored pixel order (what an endpoint sent the bytes receives)."""
    return _decode(io.BytesIO(data), shown=path, record=record, max_pixels=max_pixels,
                   upright=upright)


def check_image(
    path: str | Path, *, record: str | None = None, max_pixels: int = MAX_IMAGE_PIXELS
) -> tuple[int, int]:
    """The (width, height) of the image at ``path`` (a file, or a ``data:`` URI), read from its
    header and its chunks' checksums without decoding a pixel: the check before an image is
    kept for later, so a decompression bomb or a file that is no image is refused up front with
    the errors of ``read_image_rgb``. (A JPEG damaged after its header passes; it fails when
    decoded.)"""
    source, shown = _source(path, record)
    return _checked(source, shown, record, max_pixels)[0]


def image_data_uri(
    ref: str | Path,
    *,
    record: str | None = None,
    max_pixels: int = MAX_IMAGE_PIXELS,
    max_bytes: int = MAX_INLINE_IMAGE_BYTES,
) -> str:
    """The image ``ref`` names (a file, or a ``data:`` URI) as the data URI a model is sent,
    checked first as ``check_image`` checks it: over ``max_pixels`` (a decompression bomb) it is
    a ``MediaTooLargeError``, no image a ``CorruptMediaError``, a web link a ``RemoteImageError``
    (never fetched), no file a ``MediaNotFoundError``; a file over ``max_bytes`` (the bound an
    inline image has) is refused before it is read. Each error names ``ref`` and ``record``. The
    media type is the one the image's header shows, not its file name's."""
    text = str(ref)
    if text.startswith(INLINE_IMAGE_PREFIX):
        check_image(text, record=record, max_pixels=max_pixels)
        return text
    if text.startswith(REMOTE_IMAGE_PREFIXES):
        _source(text, record)  # raises RemoteImageError
    file = Path(ref)
    if not image_available(file):
        raise MediaNotFoundError("image file not found", path=file, record=record)
    try:
        size = file.stat().st_size
        if size > max_bytes:
            raise MediaTooLargeError(f"image file of {size} bytes is over the bound of "
                                     f"{max_bytes} bytes", path=file, record=record)
        data = file.read_bytes()
    except FileNotFoundError:
        raise MediaNotFoundError("image file not found", path=file, record=record) from None
    except OSError as exc:
        raise CorruptMediaError(f"cannot read the image ({exc})", path=file,
                                record=record) from None
    mime = _checked(io.BytesIO(data), file, record, max_pixels)[1]
    mime = mime or mimetypes.guess_type(file.name)[0] or "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _checked(
    source: Path | io.BytesIO, shown: str | Path | None, record: str | None, max_pixels: int
) -> tuple[tuple[int, int], str | None]:
    """The size and media type of the image ``source`` holds, from its header and checksums."""
    from PIL import Image, UnidentifiedImageError

    try:
        with _bounded_warnings(), Image.open(source) as image:
            size = image.size
            _check_size(size, max_pixels, shown, record)
            mime = Image.MIME.get(image.format or "")
            image.verify()
            return size, mime
    except Image.DecompressionBombError as exc:
        raise _bomb(exc, max_pixels, shown, record) from None
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        raise CorruptMediaError(f"cannot read the image ({exc})", path=shown,
                                record=record) from None


def _source(path: str | Path, record: str | None) -> tuple[Path | io.BytesIO, str | Path]:
    """What Pillow opens for an image reference, and how errors name it."""
    text = str(path)
    if text.startswith(INLINE_IMAGE_PREFIX):
        return io.BytesIO(inline_image_bytes(text, record=record)), image_ref_label(text)
    if text.startswith(REMOTE_IMAGE_PREFIXES):
        raise RemoteImageError("a web image is not fetched (m3kit runs offline): its caption "
                               "stands in for it", path=text, record=record)
    file = Path(path)
    if not image_available(file):
        raise MediaNotFoundError("image file not found", path=file, record=record)
    return file, file


def _decode(
    source: Path | io.BytesIO, *, shown: str | Path | None, record: str | None,
    max_pixels: int, upright: bool,
) -> PILImage:
    from PIL import Image, ImageOps, UnidentifiedImageError

    try:
        with _bounded_warnings(), Image.open(source) as image:
            _check_size(image.size, max_pixels, shown, record)
            return (ImageOps.exif_transpose(image) if upright else image).convert("RGB")
    except Image.DecompressionBombError as exc:
        raise _bomb(exc, max_pixels, shown, record) from None
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        # Pillow raises SyntaxError for some malformed headers (PNG chunks, TGA).
        raise CorruptMediaError(f"cannot read the image ({exc})", path=shown,
                                record=record) from None


@contextmanager
def _bounded_warnings() -> Iterator[None]:
    # Pillow warns above its own bound and raises above twice it; ``max_pixels`` decides.
    from PIL import Image

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        yield


def _check_size(
    size: tuple[int, int], max_pixels: int, shown: str | Path | None, record: str | None
) -> None:
    width, height = size
    if width * height > max_pixels:
        raise MediaTooLargeError(
            f"image of {width}x{height} pixels is over the bound of {max_pixels} pixels "
            "(a decompression bomb, or a photo too large to decode)", path=shown, record=record)


def _bomb(
    exc: Exception, max_pixels: int, shown: str | Path | None, record: str | None
) -> MediaTooLargeError:
    # Pillow's own text names its limit (twice its warning bound), not m3kit's: only the size
    found = re.search(r"\((\d+) pixels\)", str(exc))
    size = f" ({found.group(1)} pixels)" if found else ""
    return MediaTooLargeError(f"image over the bound of {max_pixels} pixels, refused as a "
                              f"decompression bomb{size}", path=shown, record=record)
