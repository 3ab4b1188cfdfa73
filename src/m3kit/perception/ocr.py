"""OCR with RapidOCR (ONNX models shipped inside the ``rapidocr`` wheel)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from m3kit.perception.base import TextLine, lines_text


class RapidTextReader:
    """``TextReader`` backed by RapidOCR; the engine loads on first use.

    ``min_score`` drops low-confidence lines (RapidOCR's own recognition score).
    """

    name = "rapidocr"

    def __init__(self, *, min_score: float = 0.5) -> None:
        self.min_score = min_score
        self._engine: Any = None
        self._lock = threading.Lock()  # the ONNX sessions are shared; one call at a time

    def _load(self) -> Any:
        if self._engine is None:
            from rapidocr import RapidOCR  # heavy: imported on first use

            # RapidOCR's default detector upscales small frames (short side to 736 px), which
            # triples the time on video frames and reads no more text; cap the long side instead.
            self._engine = RapidOCR(params={
                "Global.log_level": "error",
                "Det.limit_type": "max",
                "Det.limit_side_len": 960,
            })
        return self._engine

    def read(self, images: Sequence[np.ndarray]) -> list[list[TextLine]]:
        """The text lines of each RGB image, top to bottom, left to right."""
        out: list[list[TextLine]] = []
        with self._lock:
            engine = self._load()
            for image in images:
                result = engine(np.ascontiguousarray(image[:, :, ::-1]))  # RapidOCR wants BGR
                out.append(_lines(result, self.min_score))
        return out

    def read_text(self, images: Sequence[np.ndarray]) -> list[str]:
        """Each image's text as one string (lines joined by newlines)."""
        return [lines_text(lines) for lines in self.read(images)]


def _lines(result: Any, min_score: float) -> list[TextLine]:
    texts = getattr(result, "txts", None) or ()
    scores = getattr(result, "scores", None) or ()
    boxes = getattr(result, "boxes", None)
    lines = []
    for n, (text, score) in enumerate(zip(texts, scores, strict=False)):
        if score < min_score or not text.strip():
            continue
        box = None
        if boxes is not None and n < len(boxes):
            pts = np.asarray(boxes[n], dtype=float)
            box = (float(pts[:, 0].min()), float(pts[:, 1].min()),
                   float(pts[:, 0].max()), float(pts[:, 1].max()))
        lines.append(TextLine(text=text.strip(), score=float(score), box=box))
    lines.sort(key=lambda line: (round((line.box or (0, 0, 0, 0))[1] / 8), (line.box or (0,))[0]))
    return lines
