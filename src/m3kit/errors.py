"""Typed m3kit errors.

Every error that bad input can cause is an ``M3kitError``: it names the file, and where it
applies the record and the field, so a run can report what it skipped and go on. The CLI prints
``str(error)`` as one line and exits non-zero; it never shows a library traceback.
"""

from __future__ import annotations

from pathlib import Path


class M3kitError(Exception):
    """Base of every error m3kit raises on purpose.

    ``path`` is the file the problem is in, ``record`` the record inside it (a question id, a
    frame index, a JSON line number), ``field`` the field of that record, ``reason`` a short
    human sentence.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | Path | None = None,
        record: str | int | None = None,
        field: str | None = None,
    ) -> None:
        self.reason = reason
        self.path = str(path) if path is not None else None
        self.record = str(record) if record is not None else None
        self.field = field
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = []
        if self.path is not None:
            where.append(self.path)
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.field is not None:
            where.append(f"field {self.field!r}")
        prefix = ": ".join(where)
        return f"{prefix}: {self.reason}" if prefix else self.reason

    def __reduce__(self):  # keep errors picklable across worker processes
        return (
            _rebuild_error,
            (type(self), self.reason, self.path, self.record, self.field),
        )


def _rebuild_error(cls, reason, path, record, field):
    return cls(reason, path=path, record=record, field=field)


class MediaError(M3kitError):
    """A media file cannot be used."""


class MediaNotFoundError(MediaError, FileNotFoundError):
    """The path does not exist."""


class NotAVideoError(MediaError):
    """The path exists but holds no decodable video: a directory, an empty file, audio only,
    a still image, an unrecognised container."""


class CorruptMediaError(MediaError):
    """The container opened but its data cannot be decoded (truncated, damaged packets)."""


class MediaTooLargeError(MediaError):
    """The media would not fit in memory once decoded (an image over its pixel bound: a
    decompression bomb, or a photo too large to hold; video frames past the memory budget)."""


class DecodeTimeoutError(MediaError, TimeoutError):
    """Decoding took longer than its time bound."""


class MediaRequestError(M3kitError, ValueError):
    """A request to the media engine is out of range: a non-positive frame rate, length, size
    or resize, a rate past its bound."""


class SamplingError(M3kitError, ValueError):
    """A frame-sampling request is invalid: n <= 0, a span outside the video, a bad rate."""


class CompositionError(M3kitError, ValueError):
    """A probe composition recipe is invalid or one of its sources is unusable."""


class FrameStoreError(M3kitError):
    """The frame store's directory or index cannot be used."""


class SchemaError(M3kitError, ValueError):
    """A record does not match m3kit's schema (names the file, the record and the field)."""


class UnsafePathError(SchemaError):
    """A path read from a data file cannot be used safely: it is absolute, it leaves its data
    root (through ``..`` or a symbolic link), or it is not a valid path string (a NUL byte, a
    control character, too long, not encodable)."""
