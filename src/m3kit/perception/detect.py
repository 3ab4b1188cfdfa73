"""Object detection on keyframes, and the short scene text Video-RAG's DET database holds.

Video-RAG (Luo et al., 2024) detects objects on CLIP-selected keyframes with APE and turns the
boxes into text by the retrieval request's ``TYPE``: how many of each object (``number``),
where each one is (``location``), and how they lie to one another (``relation``).

No learned, general object detector ships its weights inside an installable package (PyPI was
searched: YOLO/DETR wrappers download weights at run time; opencv-python-headless carries no
cascades), so the offline default, ``ColorRegionDetector``, is a classical one: connected
regions of saturated colour, named by their hue ("red region"). It is honest about it: its name
says what it is, and every scene text it writes starts with ``DETECTOR_CAVEAT``. Any other
``ObjectDetector`` (a vision-language model asked what it sees) plugs in through
``Perceivers``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict

DetType = Literal["location", "number", "relation"]
DET_TYPES: tuple[DetType, ...] = ("location", "number", "relation")

# The offline default's own words at the head of its scene text: no object classes, colours.
DETECTOR_CAVEAT = "(colour regions: no object detector ships offline)"

# Hue bins (OpenCV hue, 0..179) and their names; red wraps around 0.
_HUES: tuple[tuple[int, int, str], ...] = (
    (0, 8, "red"), (8, 22, "orange"), (22, 34, "yellow"), (34, 85, "green"),
    (85, 100, "cyan"), (100, 130, "blue"), (130, 160, "purple"), (160, 180, "red"),
)


class Detection(BaseModel):
    """One object seen in an image: what, how sure, and where (pixels: x0, y0, x1, y1)."""

    model_config = ConfigDict(frozen=True)

    label: str
    score: float
    box: tuple[float, float, float, float]


@runtime_checkable
class ObjectDetector(Protocol):
    """The objects in each image (RGB ``uint8`` arrays)."""

    name: str

    def detect(self, images: Sequence[np.ndarray]) -> list[list[Detection]]: ...


class ColorRegionDetector:
    """Connected regions of saturated colour, each named by its hue: the offline default.

    A region must cover at least ``min_area`` of the image and at most ``max_area`` (larger is
    background: a wall, a floor). Saturation at least ``min_saturation`` and value at least
    ``min_value`` (0..255) make a pixel coloured; grey, black and white are never objects.
    """

    name = "color-regions"

    def __init__(self, *, min_area: float = 0.002, max_area: float = 0.25,
                 min_saturation: int = 90, min_value: int = 60, max_regions: int = 12) -> None:
        self.min_area = min_area
        self.max_area = max_area
        self.min_saturation = min_saturation
        self.min_value = min_value
        self.max_regions = max_regions

    def detect(self, images: Sequence[np.ndarray]) -> list[list[Detection]]:
        return [self._detect(image) for image in images]

    def _detect(self, image: np.ndarray) -> list[Detection]:
        import cv2  # opencv-python-headless, a dependency of the offline extra

        hsv = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_RGB2HSV)
        hue, sat, val = hsv[:, :, 0], hsv[:, :, 1], hsv[:, :, 2]
        coloured = (sat >= self.min_saturation) & (val >= self.min_value)
        area = float(image.shape[0] * image.shape[1])
        found: list[Detection] = []
        for low, high, colour in _HUES:
            mask = (coloured & (hue >= low) & (hue < high)).astype(np.uint8)
            if not mask.any():
                continue
            count, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
            for n in range(1, count):
                x, y, w, h, pixels = (int(v) for v in stats[n])
                share = pixels / area
                if not self.min_area <= share <= self.max_area:
                    continue
                found.append(Detection(label=f"{colour} region", score=min(1.0, share * 20),
                                       box=(float(x), float(y), float(x + w), float(y + h))))
        found.sort(key=lambda d: -(d.box[2] - d.box[0]) * (d.box[3] - d.box[1]))
        return found[: self.max_regions]


def where(box: tuple[float, float, float, float], width: int, height: int) -> str:
    """A box's place in the image in words: ``top left`` ... ``centre`` ... ``bottom right``."""
    cx = (box[0] + box[2]) / 2 / max(width, 1)
    cy = (box[1] + box[3]) / 2 / max(height, 1)
    column = "left" if cx < 1 / 3 else "right" if cx > 2 / 3 else ""
    row = "top" if cy < 1 / 3 else "bottom" if cy > 2 / 3 else ""
    return " ".join(p for p in (row, column) if p) or "centre"


def scene_text(detections: Sequence[Detection], width: int, height: int,
               types: Sequence[DetType] = DET_TYPES, *, caveat: str = "") -> str:
    """The detections of one image as Video-RAG's DET text, by retrieval type: ``number``
    ("2 red region"), ``location`` ("red region: top left"), ``relation`` ("red region is left
    of blue region", between the two largest of each pair of labels). Empty without any."""
    if not detections:
        return ""
    parts: list[str] = [caveat] if caveat else []
    if "number" in types:
        counts = Counter(d.label for d in detections)
        parts.append("; ".join(f"{n} {label}" for label, n in counts.items()) + ".")
    if "location" in types:
        parts.append("; ".join(f"{d.label}: {where(d.box, width, height)}"
                               for d in detections) + ".")
    if "relation" in types:
        relations = _relations(detections)
        if relations:
            parts.append("; ".join(relations) + ".")
    return " ".join(parts)


def _relations(detections: Sequence[Detection]) -> list[str]:
    first: dict[str, Detection] = {}
    for d in detections:  # the largest of each label (detections come largest first)
        first.setdefault(d.label, d)
    labelled = list(first.values())
    out = []
    for n, a in enumerate(labelled):
        for b in labelled[n + 1:]:
            ax, bx = (a.box[0] + a.box[2]) / 2, (b.box[0] + b.box[2]) / 2
            ay, by = (a.box[1] + a.box[3]) / 2, (b.box[1] + b.box[3]) / 2
            if abs(ax - bx) >= abs(ay - by):
                out.append(f"{a.label} is {'left' if ax < bx else 'right'} of {b.label}")
            else:
                out.append(f"{a.label} is {'above' if ay < by else 'below'} {b.label}")
    return out
