"""M3Exam's data fingerprint covers the images and PDFs attached to its rounds; a text-only
persona keeps the fingerprint it had when only the question files counted."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from m3kit.benchmarks import benchmark_named
from m3kit.benchmarks.m3exam.load import data_files, load_m3exam, media_files
from m3kit.benchmarks.m3exam.task import m3exam
from m3kit.schema.card import TASK_CARD_KEY, files_fingerprint

from ...conftest import shared_data_path


def _persona(root: Path, *, image: bool) -> Path:
    """A one-session persona: one round (with ``images/img_1.png`` when ``image``), one
    question on it."""
    root.mkdir(parents=True)
    dialogue = {"round": "D1:1", "user": "Look at my dog.", "assistant": "A fine dog."}
    if image:
        (root / "images").mkdir()
        Image.new("RGB", (8, 8), (200, 10, 10)).save(root / "images" / "img_1.png")
        dialogue |= {"img_file": ["img_1.png"], "img_id": [1], "img_description": ["a dog"]}
    sessions = [{"session_id": "D1", "date": "2024-02-01", "dialogues": [dialogue]}]
    questions = [{"question": "What pet?", "answer": ["a dog"], "label": "a dog",
                  "supporting_facts": "D1:1", "type": "ss"}]
    (root / "sessions.json").write_text(json.dumps(sessions), encoding="utf-8")
    (root / "question.json").write_text(json.dumps(questions), encoding="utf-8")
    return root


def _fingerprint(folder: Path) -> str:
    return m3exam(data=str(folder)).metadata[TASK_CARD_KEY]["data_fingerprint"]


def test_a_text_only_persona_keeps_its_fingerprint(tmp_path: Path) -> None:
    folder = _persona(tmp_path / "Bea_Text", image=False)
    assert media_files(load_m3exam(folder)) == []
    # the fingerprint of the question files alone: what every run recorded before media counted
    assert _fingerprint(folder) == files_fingerprint(data_files(folder))


def test_an_attached_image_enters_the_fingerprint(tmp_path: Path) -> None:
    folder = _persona(tmp_path / "Cy_Image", image=True)
    image = folder / "images" / "img_1.png"
    assert media_files(load_m3exam(folder)) == [image.resolve()]
    before = _fingerprint(folder)
    assert before != files_fingerprint(data_files(folder))
    Image.new("RGB", (8, 8), (10, 200, 10)).save(image)  # another picture, the same name
    after = _fingerprint(folder)
    assert after != before
    # m3kit score m3exam's card names the same data set
    declared = benchmark_named("m3exam")
    assert declared is not None
    card = declared.predictions_card(folder, folder / "none.jsonl", {})
    assert card.data_fingerprint == after


def test_the_released_persona_fingerprint_changes_with_its_images() -> None:
    """The released Alex persona attaches images: its fingerprint is not the one runs recorded
    before media entered it (docs/metrics.md says so)."""
    alex = shared_data_path("m3exam", "Alex_Veterinarian")
    media = media_files(load_m3exam(alex))
    assert media and all(path.is_file() for path in media)
    assert _fingerprint(alex) != files_fingerprint(data_files(alex))
