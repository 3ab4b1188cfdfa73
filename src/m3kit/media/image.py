"""Still images read safely: a pixel bound checked before any pixel is decoded, and every
failure a typed error naming the file.

A crafted or damaged image must cost its own item only. ``Image.open`` reads the header alone,
so the size is known before decoding; an image over ``MAX_IMAGE_PIXELS`` (a decompression bomb:
a few kilobytes of PNG that inflate to gigabytes) is refused with ``MediaTooLargeError``, a
file that does not decode with ``CorruptMediaError``.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from m3kit.errors import CorruptMediaError, MediaNotFoundError, MediaTooLargeError

if TYPE_CHECKING:
    from PIL.Image import Image as PILImage

__all__ = ["MAX_IMAGE_PIXELS", "check_image", "decode_image_rgb", "read_image_rgb"]

# Pillow's own default bound (``PIL.Image.MAX_IMAGE_PIXELS``, about 256 MiB of RGB once decoded),
# above which Pillow itself warns of a decompression bomb; m3kit refuses instead of warning.
MAX_IMAGE_PIXELS = 89_478_485


def read_image_rgb(
    path: str | Path, *, record: str | None = None, max_pixels: int = MAX_IMAGE_PIXELS
) -> np.ndarray:
    """The image at ``path`` as an RGB ``uint8`` array (height, width, 3), upright per its EXIF
    orientation. Raises ``MediaNotFoundError`` when there is no such file, ``MediaTooLargeError``
    when it has more than ``max_pixels`` pixels (checked from the header, before decoding) and
    ``CorruptMediaError`` when it does not decode; each names ``path`` and ``record``."""
    file = Path(path)
    if not file.is_file():
        raise MediaNotFoundError("image file not found", path=file, record=record)
    return np.asarray(_decode(file, shown=file, record=record, max_pixels=max_pixels,
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
    """The (width, height) of the image at ``path``, read from its header and its chunks'
    checksums without decoding a pixel: the check before an image is kept for later, so a
    decompression bomb or a file that is no image is refused up front with the errors of
    ``read_image_rgb``. (A JPEG damaged after its header passes; it fails when decoded.)"""
    from PIL import Image, UnidentifiedImageError

    file = Path(path)
    if not file.is_file():
        raise MediaNotFoundError("image file not found", path=file, record=record)
    try:
        with _bounded_warnings(), Image.open(file) as image:
            size = image.size
            _check_size(size, max_pixels, file, record)
            image.verify()
            return size
    except Image.DecompressionBombError as exc:
        raise _bomb(exc, max_pixels, file, record) from None
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError) as exc:
        raise CorruptMediaError(f"cannot read the image ({exc})", path=file,
                                record=record) from None


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
    return MediaTooLargeError(f"image over the bound of {max_pixels} pixels, refused as a "
                              f"decompression bomb ({exc})", path=shown, record=record)
