"""A corpus of hostile inputs, written at test time (small files, nothing binary committed).

Each file holds good items beside bad ones, so a test can check both halves of the policy in
docs/metrics.md ("Bad input"): every bad item skipped, named and counted; every good one scored.

- ``m3exam/Eve_Crafted``: a persona whose round names images by ``../../x.png``, ``/abs/x.png``,
  a link out of ``images/`` and a NUL byte, plus a decompression-bomb PNG and a torn PNG that the
  loader accepts (their paths are fine) and a memory must skip at ingest; its predictions file
  has a non-UTF-8 line and an id given twice.
- ``m3eval``: a released root whose split-screen file has a NUL byte in one ``video`` field.
- ``videomme_v2``: ``test.jsonl`` with one line that is not JSON (in group ``002``).
- ``logs``: a folder with a damaged ``.eval`` beside a good M3Eval score file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from m3kit.perception import MiniLMEmbedder, RapidTextReader

from ..benchmarks.videomme_v2.conftest import rows, write_table
from ..media.test_image import png_header_only

# M3Exam: the image names of round D1:1, good first; the last four are refused by the loader.
HOSTILE_IMAGES = ["../../x.png", "/abs/x.png", "out.png", "nul\x00.png"]
PERSONA = "Eve_Crafted"


@dataclass(frozen=True)
class HostileCorpus:
    root: Path
    persona: Path  # an M3Exam persona folder
    m3exam_predictions: Path
    m3eval: Path  # an M3Eval released root
    m3eval_predictions: Path
    videomme: Path  # a Video-MME-v2 folder
    videomme_predictions: Path
    logs: Path  # a folder for ``m3kit report``
    damaged_log: Path
    bomb: Path
    torn: Path
    secret: Path  # outside every data root: must never be read


def _text_image(path: Path, text: str) -> Path:
    image = Image.new("RGB", (320, 80), "white")
    ImageDraw.Draw(image).text((10, 25), text, fill="black", font=ImageFont.load_default(size=22))
    image.save(path)
    return path


def _torn_png(path: Path) -> Path:
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(path)  # noise: the pixel data fills the file
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # the pixel data cut in half
    return path


def _jsonl(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _line(record: dict) -> bytes:
    return json.dumps(record).encode("utf-8")


def _persona(root: Path, secret: Path) -> tuple[Path, Path, Path]:
    folder = root / "m3exam" / PERSONA
    images = folder / "images"
    images.mkdir(parents=True)
    _text_image(images / "img_1.png", "the red fox")
    bomb = png_header_only(images / "bomb.png", 40_000, 40_000)
    torn = _torn_png(images / "torn.png")
    (images / "out.png").symlink_to(secret)
    dialogues = [
        {"round": "D1:1", "user": "Here are my photos of the fox.", "assistant": "Nice.",
         "img_file": ["img_1.png", *HOSTILE_IMAGES, "bomb.png", "torn.png"],
         "img_description": ["a red fox", "x", "x", "x", "x", "a barn", "a square of noise"]},
        {"round": "D1:2", "user": "My cat Miso has a sore paw.", "assistant": "Rest it."},
    ]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": dialogues}]), encoding="utf-8")
    (folder / "question.json").write_text(json.dumps([
        {"question": "What is the cat called?", "answer": ["Miso"], "supporting_facts": "D1:2",
         "type": "ss"},
        {"question": "Which animal is in the photo?", "answer": ["fox"],
         "supporting_facts": "D1:1", "type": "ss"},
    ]), encoding="utf-8")
    return folder, bomb, torn


def _m3eval(root: Path) -> Path:
    base = root / "m3eval"
    (base / "videos" / "split_screen").mkdir(parents=True)
    options = ["A. the cook stirs the pot", "B. the cook chops onions",
               "C. the cook plates the dish", "D. the cook washes a pan"]

    def record(rid: str, video: str, answer: str) -> dict:
        return {"id": rid, "video": video, "question": f"Question {rid}?", "options": options,
                "answer": answer, "paper_v4_metric_detail": "storyline_reconstruction",
                "storyline_error_type": "source_confusion", "source_dimension": "spatial",
                "paper_v4_metric_group": "swap0"}

    qa = base / "qa_root" / "split_screen"
    qa.mkdir(parents=True)
    (qa / "split_screen_qa.json").write_text(json.dumps([
        record("ss-1", "videos/split_screen/pair1_swap0.mp4", "A"),
        record("ss-nul", "videos/split_screen/pair1\x00swap0.mp4", "A"),
        record("ss-2", "videos/split_screen/pair1_swap0.mp4", "B"),
    ]), encoding="utf-8")
    return base


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> HostileCorpus:
    root = tmp_path_factory.mktemp("hostile")
    secret = root / "secret.png"
    _text_image(secret, "not yours")
    persona, bomb, torn = _persona(root, secret)
    m3exam_predictions = _jsonl(root / "m3exam_predictions.jsonl", [
        _line({"id": f"{PERSONA}/0", "prediction": "Miso"}),
        b'{"id": "' + PERSONA.encode() + b'/1", "prediction": "\xff\xfe fox"}',  # not UTF-8
        _line({"id": f"{PERSONA}/1", "prediction": "fox"}),
        _line({"id": f"{PERSONA}/0", "prediction": "Tom"}),  # the id again: the first counts
    ])
    m3eval = _m3eval(root)
    m3eval_predictions = _jsonl(root / "m3eval_predictions.jsonl", [
        _line({"id": "ss-1", "prediction": "The final answer is A"}),
        b'{"id": "ss-2", "prediction": "The final answer is \xffB"}',  # not UTF-8
        _line({"id": "ss-2", "prediction": "The final answer is B"}),
        _line({"id": "ss-1", "prediction": "The final answer is C"}),  # the id again
    ])
    videomme = root / "videomme_v2"
    videomme.mkdir()
    table = write_table(videomme / "test.jsonl", rows())
    lines = table.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5][: len(lines[5]) // 2]  # question 002-2: a line cut in half, not JSON
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    answers = {r["question_id"]: r["answer"] for r in rows()}
    # Every question answered right but 002-2, whose table line is damaged: a harness that read
    # the same table has no prediction for it.
    videomme_predictions = _jsonl(root / "videomme_predictions.jsonl", [
        b'{"question_id": "001-1", "prediction": "The answer is \xff."}',  # not UTF-8
        *(_line({"question_id": qid, "prediction": f"The answer is {letter}."})
          for qid, letter in answers.items() if qid != "002-2"),
        _line({"question_id": "001-1", "prediction": "The answer is H."}),  # the id again
    ])
    logs = root / "logs"
    logs.mkdir()
    damaged = logs / "2024-01-01T00-00-00_m3eval_damaged.eval"
    damaged.write_bytes(b"PK\x03\x04 truncated")
    return HostileCorpus(
        root=root, persona=persona, m3exam_predictions=m3exam_predictions, m3eval=m3eval,
        m3eval_predictions=m3eval_predictions, videomme=videomme,
        videomme_predictions=videomme_predictions, logs=logs, damaged_log=damaged, bomb=bomb,
        torn=torn, secret=secret,
    )


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    return MiniLMEmbedder()


@pytest.fixture(scope="session")
def reader() -> RapidTextReader:
    return RapidTextReader()
