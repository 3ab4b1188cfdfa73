"""``OcrSurrogates``: the OCR reader of a memory that turns frames and images into text.

OCR is a perception detail, not part of the memory protocol: a memory that makes text
surrogates of pixels mixes this in, takes a ``TextReader`` in its constructor, and reads with
the shared cached RapidOCR reader when none was given (built on first use, never at import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from m3kit.perception.base import TextReader


class OcrSurrogates:
    """Mixin for memories that OCR frames and images at build time.

    ``ocr`` says whether the memory reads text from pixels; ``_text_reader`` is the reader the
    constructor was given (``None``: the shared default, built on first use).
    """

    ocr: bool = False
    _text_reader: TextReader | None = None

    def reader(self) -> TextReader:
        """The ``TextReader`` for OCR surrogates (RapidOCR behind the shared OCR cache unless
        one was given); built lazily, loads its model on first read."""
        if self._text_reader is None:
            from m3kit.perception.cache import default_text_reader

            self._text_reader = default_text_reader()
        return self._text_reader

    def build_reader(self) -> TextReader | None:
        """The reader a build uses: ``None`` when this memory does not OCR."""
        return self.reader() if self.ocr else None

    def ocr_config(self) -> str | None:
        """The OCR engine's name, for ``config()`` (the reader object itself stays out)."""
        return self.reader().name if self.ocr else None
