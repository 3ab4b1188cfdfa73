"""OCR throughput on small video frames: RapidOCR's default engine against m3kit's reader.

    python perf/ocr_engines.py --frames 48

Renders ``--frames`` 256x256 frames with on-screen text (the quickstart's frame size), then reads
them all three ways, each after one untimed warm-up read:

* ``default``: one RapidOCR engine with ONNX Runtime's default thread pool (RapidOCR's own
  default, and m3kit's reader before issue 25);
* ``1 engine, 1 thread``: one engine, one ONNX Runtime thread;
* ``m3kit``: ``RapidTextReader()``: one single-threaded engine per usable CPU, the batch spread
  over them.

Prints wall seconds, frames per second and whether every way read the same text.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from PIL import Image, ImageDraw, ImageFont

WORDS = ("kitchen", "garage", "office", "garden", "bedroom", "station", "market", "library")
ENGINE = {"Global.log_level": "error", "Det.limit_type": "max", "Det.limit_side_len": 960}


def frames(n: int) -> list[np.ndarray]:
    font = ImageFont.load_default(size=22)
    out = []
    for i in range(n):
        image = Image.new("RGB", (256, 256), (40 + 5 * (i % 20), 60, 90))
        draw = ImageDraw.Draw(image)
        draw.rectangle((20 + i % 50, 120, 120 + i % 50, 200), fill=(200, 40, 40))
        draw.text((12, 20), f"{WORDS[i % 8].upper()} {100 + i}", fill=(255, 255, 255), font=font)
        draw.text((12, 60), WORDS[(i * 3) % 8], fill=(255, 255, 0), font=font)
        out.append(np.asarray(image))
    return out


def engine_reads(params: dict[str, object], images: list[np.ndarray]) -> tuple[float, list]:
    from rapidocr import RapidOCR

    engine = RapidOCR(params=params)
    engine(np.ascontiguousarray(images[0][:, :, ::-1]))  # warm-up
    start = time.perf_counter()
    texts = [list(engine(np.ascontiguousarray(im[:, :, ::-1])).txts or ()) for im in images]
    return time.perf_counter() - start, texts


def m3kit_reads(images: list[np.ndarray]) -> tuple[float, list, int]:
    from m3kit.perception.ocr import RapidTextReader

    reader = RapidTextReader()
    reader.read(images[: reader.workers])  # warm-up: one engine per worker
    start = time.perf_counter()
    lines = reader.read(images)
    return time.perf_counter() - start, [[line.text for line in ls] for ls in lines], reader.workers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--frames", type=int, default=48)
    args = parser.parse_args()
    images = frames(args.frames)
    load = os.getloadavg()
    default_s, default_texts = engine_reads(ENGINE, images)
    single = {**ENGINE, "EngineConfig.onnxruntime.intra_op_num_threads": 1,
              "EngineConfig.onnxruntime.inter_op_num_threads": 1}
    single_s, single_texts = engine_reads(single, images)
    m3kit_s, m3kit_texts, workers = m3kit_reads(images)
    # RapidOCR drops low-score lines itself at 0.5, as m3kit's reader does
    result = {
        "frames": args.frames, "usable_cpus": workers, "load_average_start": load,
        "load_average_end": os.getloadavg(),
        "seconds": {"default": default_s, "1 engine, 1 thread": single_s, "m3kit": m3kit_s},
        "frames_per_s": {"default": args.frames / default_s,
                         "1 engine, 1 thread": args.frames / single_s,
                         "m3kit": args.frames / m3kit_s},
        "default / m3kit": default_s / m3kit_s,
        "same text": default_texts == single_texts == m3kit_texts,
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
