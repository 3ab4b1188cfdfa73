"""The OCR cache: real RapidOCR reads once; a second reader on the same root reads nothing."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from m3kit.perception.cache import CachedTextReader
from m3kit.perception.ocr import RapidTextReader

from ..forking import check_in_forked_child

pytest.importorskip("rapidocr")


def caption(text: str) -> np.ndarray:
    image = Image.new("RGB", (320, 96), (20, 40, 80))
    ImageDraw.Draw(image).text((12, 30), text, fill=(255, 255, 255),
                               font=ImageFont.load_default(size=26))
    return np.asarray(image)


@pytest.fixture(scope="module")
def reader() -> RapidTextReader:
    return RapidTextReader()


def test_second_reader_on_same_root_reads_nothing(reader, tmp_path):
    images = [caption("red fox jumps"), caption("blue whale sings"), caption("red fox jumps")]
    first = CachedTextReader(reader, tmp_path)
    texts = first.read_text(images)
    assert texts == ["red fox jumps", "blue whale sings", "red fox jumps"]
    assert (first.hits, first.misses) == (1, 2)  # the repeated image is read once

    again = CachedTextReader(reader, tmp_path)
    assert again.read_text(images) == texts
    assert (again.hits, again.misses) == (3, 0)


def test_blank_image_has_no_text(reader, tmp_path):
    blank = np.full((64, 64, 3), 128, dtype=np.uint8)
    assert CachedTextReader(reader, tmp_path).read([blank]) == [[]]


def test_a_cache_used_before_a_fork_reads_and_writes_in_the_child(reader, tmp_path):
    # the parent's SQLite connection is not carried into the child: it opens its own, and what
    # it writes is there for the parent
    cache = CachedTextReader(reader, tmp_path)
    assert cache.read_text([caption("red fox jumps")]) == ["red fox jumps"]

    def child() -> bool:
        texts = cache.read_text([caption("red fox jumps"), caption("north tower")])
        return texts == ["red fox jumps", "north tower"] and cache.hits == 1

    check_in_forked_child(child)
    assert cache.read_text([caption("north tower")]) == ["north tower"]
    assert (cache.hits, cache.misses) == (1, 1)  # the child's reading, found on disk
