"""RapidOCR on several engines at once reads what one engine reads, in the order given."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from m3kit.perception.ocr import RapidTextReader

from ..forking import check_in_forked_child

pytest.importorskip("rapidocr")

WORDS = ["amber kettle", "violet ladder", "seven owls", "copper gate", "quiet harbor",
         "north tower"]


def caption(text: str) -> np.ndarray:
    image = Image.new("RGB", (320, 96), (20, 40, 80))
    ImageDraw.Draw(image).text((12, 30), text, fill=(255, 255, 255),
                               font=ImageFont.load_default(size=26))
    return np.asarray(image)


def test_a_batch_on_two_engines_reads_what_one_engine_reads():
    images = [caption(w) for w in WORDS]
    one = RapidTextReader(workers=1).read(images)
    two_reader = RapidTextReader(workers=2)
    two = two_reader.read(images)
    assert [[line.text for line in lines] for lines in two] == [[w] for w in WORDS]
    assert two == one  # text, score and box: one engine's reading, image by image
    assert two_reader._idle.get().qsize() == 2  # an engine per thread, each back in the pool


def test_readers_on_several_threads_share_the_engines():
    reader = RapidTextReader(workers=2)
    images = [caption(w) for w in WORDS]
    results: dict[int, list[str]] = {}

    def read(n: int) -> None:
        results[n] = reader.read_text(images[n::3])

    threads = [threading.Thread(target=read, args=(n,)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {n: WORDS[n::3] for n in range(3)}


def test_workers_must_be_positive():
    with pytest.raises(ValueError, match="workers"):
        RapidTextReader(workers=0)


def test_a_reader_used_before_a_fork_reads_in_the_child():
    # the parent's pool threads and engines do not exist in a forked child: it makes its own
    reader = RapidTextReader(workers=2)
    images = [caption(w) for w in WORDS[:3]]
    want = reader.read_text(images)
    assert want == WORDS[:3]
    check_in_forked_child(lambda: reader.read_text(images) == want)
    assert reader.read_text(images) == want  # the parent's pool and engines still serve it
