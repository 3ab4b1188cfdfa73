"""OCR with RapidOCR (ONNX models shipped inside the ``rapidocr`` wheel)."""

from __future__ import annotations

import queue
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from m3kit.forks import ProcessLocal
from m3kit.media.budget import usable_cpus
from m3kit.perception.base import TextLine, lines_text


class RapidTextReader:
    """``TextReader`` backed by RapidOCR; engines load on first use.

    ``min_score`` drops low-confidence lines (RapidOCR's own recognition score). A batch of
    images is read on ``workers`` engines at once (default: one per usable CPU), each engine with
    one ONNX Runtime thread. RapidOCR's default, one engine with ONNX Runtime's own thread pool,
    was measured 2.7x slower on 256x256 frames on 2 cores (48 frames: 4.8 s against 1.8 s, the
    same text; ``perf/ocr_engines.py``): intra-op threads on small images mostly spin and wait.
    The engines and the thread pool are each process's own (``m3kit.forks``): a forked child
    loads engines of its own.
    """

    name = "rapidocr"

    def __init__(self, *, min_score: float = 0.5, workers: int | None = None) -> None:
        self.min_score = min_score
        self.workers = usable_cpus() if workers is None else workers
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, got {self.workers}")
        # Engines not in use: each ONNX session is used by one thread at a time.
        self._idle: ProcessLocal[queue.SimpleQueue[Any]] = ProcessLocal(queue.SimpleQueue)
        self._pool = ProcessLocal(lambda: ThreadPoolExecutor(max_workers=self.workers,
                                                             thread_name_prefix="m3kit-ocr"))

    def _new_engine(self) -> Any:
        from rapidocr import RapidOCR  # heavy: imported on first use

        # RapidOCR's default detector upscales small frames (short side to 736 px), which
        # triples the time on video frames and reads no more text; cap the long side instead.
        return RapidOCR(params={
            "Global.log_level": "error",
            "Det.limit_type": "max",
            "Det.limit_side_len": 960,
            "EngineConfig.onnxruntime.intra_op_num_threads": 1,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        })

    def _read_one(self, image: np.ndarray) -> list[TextLine]:
        idle = self._idle.get()
        try:
            engine = idle.get_nowait()
        except queue.Empty:  # as many engines as threads ever read at once
            engine = self._new_engine()
        try:
            result = engine(np.ascontiguousarray(image[:, :, ::-1]))  # RapidOCR wants BGR
        finally:
            idle.put(engine)
        return _lines(result, self.min_score)

    def read(self, images: Sequence[np.ndarray]) -> list[list[TextLine]]:
        """The text lines of each RGB image, top to bottom, left to right."""
        if self.workers == 1 or len(images) < 2:
            return [self._read_one(image) for image in images]
        return list(self._pool.get().map(self._read_one, images))

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
