"""References to media: a video (optionally a time span of it), an image, a PDF page.

These records only *point* at media; decoding lives in ``m3kit.media``. Paths are kept as
given (relative paths are resolved by whoever loads the benchmark), so records stay portable.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

__all__ = [
    "INLINE_IMAGE_PREFIX",
    "REMOTE_IMAGE_PREFIXES",
    "ImageRef",
    "MediaRef",
    "PdfPageRef",
    "TimeSpan",
    "VideoRef",
]

_RECORD = ConfigDict(extra="forbid", frozen=True)

# An image reference is a file path, a web link, or the image itself as a data URI (RFC 2397;
# released data ships some: two of LoCoMo's ``img_url``s are inline JPEGs).
REMOTE_IMAGE_PREFIXES = ("http://", "https://")
INLINE_IMAGE_PREFIX = "data:"


def _end_after_start(end: float | None, info: ValidationInfo) -> float | None:
    # A field validator on ``end`` (not a model validator) so errors name the field.
    start = info.data.get("start")
    if end is not None and start is not None and not start < end:
        raise ValueError(f"end must be after start, got start={start} end={end}")
    return end


class TimeSpan(BaseModel):
    """A half-open interval ``[start, end)`` in seconds, with ``0 <= start < end``."""

    model_config = _RECORD

    start: float = Field(ge=0)
    end: float = Field(gt=0)

    @field_validator("end")
    @classmethod
    def _end_after_start(cls, end: float | None, info: ValidationInfo) -> float | None:
        return _end_after_start(end, info)

    @property
    def duration(self) -> float:
        """Length of the span in seconds."""
        return self.end - self.start

    def contains(self, t: float) -> bool:
        """Whether time ``t`` (seconds) falls inside the span."""
        return self.start <= t < self.end


class VideoRef(BaseModel):
    """A video file, or the part of it between ``start`` and ``end`` seconds.

    Either bound may be left open: ``start=None`` means from the beginning, ``end=None`` to
    the end of the file. ``clock_start`` places the file on its question's clock: the moment
    (on that clock) of the file's second 0, when the question's ``time`` is not on the video's
    own clock (SuperMemory-VQA: a person's sessions on one unix clock); ``None``: the same clock.
    """

    model_config = _RECORD

    kind: Literal["video"] = "video"
    path: str = Field(min_length=1)
    start: float | None = Field(default=None, ge=0)
    end: float | None = Field(default=None, gt=0)
    clock_start: float | None = None

    @field_validator("end")
    @classmethod
    def _end_after_start(cls, end: float | None, info: ValidationInfo) -> float | None:
        return _end_after_start(end, info)

    @property
    def span(self) -> TimeSpan | None:
        """The span as a ``TimeSpan`` when both bounds are given, else ``None``."""
        if self.start is None or self.end is None:
            return None
        return TimeSpan(start=self.start, end=self.end)


class ImageRef(BaseModel):
    """An image, with an optional caption of what it shows. ``path`` is a file path, a web
    link (``remote``) or a ``data:`` URI holding the image (``inline``)."""

    model_config = _RECORD

    kind: Literal["image"] = "image"
    path: str = Field(min_length=1)
    description: str | None = None

    @property
    def remote(self) -> bool:
        """A web link: m3kit runs offline and never fetches it; its caption stands in."""
        return self.path.startswith(REMOTE_IMAGE_PREFIXES)

    @property
    def inline(self) -> bool:
        """The image itself, as a ``data:`` URI (decoded by ``m3kit.media.image``)."""
        return self.path.startswith(INLINE_IMAGE_PREFIX)


class PdfPageRef(BaseModel):
    """One page of a PDF document; ``page`` is 0-based."""

    model_config = _RECORD

    kind: Literal["pdf_page"] = "pdf_page"
    path: str = Field(min_length=1)
    page: int = Field(ge=0)


MediaRef = Annotated[VideoRef | ImageRef | PdfPageRef, Field(discriminator="kind")]
"""Any media reference; the ``kind`` field selects the record type when parsing."""
