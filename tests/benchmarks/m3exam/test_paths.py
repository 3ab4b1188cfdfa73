"""A crafted persona or LoCoMo file cannot make m3kit read a file outside its folder: each
refused path is a named skip, and the rest of the persona loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam.load import load_m3exam_persona
from m3kit.benchmarks.m3exam.locomo import load_locomo
from m3kit.schema import ImageRef, PdfPageRef

HOSTILE = ["../../secret.png", "/abs/secret.png", "out.png", "nul\x00.png"]


def _hostile_persona(tmp_path: Path) -> Path:
    import pypdfium2

    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    folder = tmp_path / "personas" / "Eve_Crafted"
    (folder / "images").mkdir(parents=True)
    (folder / "pdfs").mkdir()
    (folder / "images" / "img_1.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    (folder / "images" / "out.png").symlink_to(secret)
    (folder / "pdfs" / "out.pdf").symlink_to(secret)
    doc = pypdfium2.PdfDocument.new()
    doc.new_page(200, 300)
    doc.save(str(folder / "pdfs" / "ok.pdf"))
    doc.close()
    dialogues = [
        {"round": "D1:1", "user": "photos", "assistant": "ok",
         "img_file": ["img_1.jpg", *HOSTILE]},
        {"round": "D1:2", "user": "documents", "assistant": "ok",
         "pdf_file": ["ok.pdf", "../../secret.pdf", "/abs/x.pdf", "out.pdf", "nul\x00.pdf",
                      {"file": "ok.pdf", "page": "abc"}, {"file": "ok.pdf", "page": 0}]},
    ]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": dialogues}]), encoding="utf-8")
    (folder / "question.json").write_text(json.dumps([
        {"question": "Which photo?", "answer": ["img_1"], "supporting_facts": "D1:1",
         "type": "fm"},
        {"question": "What temperature?", "answer": [{"value": 93}], "supporting_facts": "D1:2",
         "type": "ss"},
        {"question": "What year?", "answer": [2023], "type": "ss"},
    ]), encoding="utf-8")
    return folder


def test_hostile_persona_paths_are_named_skips(tmp_path: Path) -> None:
    folder = _hostile_persona(tmp_path)
    conv, questions, issues = load_m3exam_persona(folder)
    photos, documents = conv.round("D1:1"), conv.round("D1:2")
    assert [a.media for a in photos.attachments] == [
        ImageRef(path=str((folder / "images" / "img_1.jpg").resolve()))]
    assert [a.media for a in documents.attachments] == [
        PdfPageRef(path=str((folder / "pdfs" / "ok.pdf").resolve()), page=0)]
    skips = [(s.record, s.field, s.reason) for s in issues]
    assert [(r, f) for r, f, _ in skips[:4]] == [("D1:1", "img_file")] * 4
    reasons = [reason for _, _, reason in skips]
    assert "leaves the persona's images/ folder" in reasons[0]
    assert "is absolute" in reasons[1]
    assert "through a symbolic link" in reasons[2]
    assert "NUL byte" in reasons[3]
    assert all(r.endswith("round kept without it") for r in reasons[:10])
    assert [(r, f) for r, f, _ in skips[4:10]] == [("D1:2", "pdf_file")] * 4 + [
        ("D1:2", "pdf_file.page"), ("D1:2", "pdf_file")]
    assert "through a symbolic link" in reasons[6] and "NUL byte" in reasons[7]
    assert "'abc' is not a page number" in reasons[8] and "pages count from 1" in reasons[9]
    # quiet coercions are named: an object answer skips its question; a number is text
    assert [q.id for q in questions] == ["Eve_Crafted/0", "Eve_Crafted/2"]
    assert questions[1].answer == "2023"
    assert skips[10] == ("Eve_Crafted/1", "answer",
                         "question skipped: answer {'value': 93} is not text or a number")
    assert skips[11][:2] == ("Eve_Crafted/2", "supporting_facts")
    assert "(question kept)" in skips[11][2]
    assert all(s.file == str(folder / "sessions.json") for s in issues[:10])
    assert len(issues) == 12


@pytest.mark.parametrize("url", ["../secret.png", "/etc/secret.png", "out.png", "nul\x00.png"])
def test_locomo_local_image_paths_stay_in_the_file_folder(tmp_path: Path, url: str) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(b"\x89PNG not yours")
    data = tmp_path / "locomo"
    (data / "images").mkdir(parents=True)
    (data / "images" / "ok.png").write_bytes(b"\x89PNG")
    (data / "out.png").symlink_to(secret)
    turns = [{"speaker": "Ann", "dia_id": "D1:1", "text": "see",
              "img_url": ["https://example.org/a.jpg", "images/ok.png", url],
              "blip_caption": "a lake"}]
    sample = {"sample_id": "conv-9",
              "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1": turns},
              "qa": [{"question": "What?", "answer": {"text": "a lake"}, "evidence": ["D1:1"],
                      "category": 4},
                     {"question": "Where?", "answer": "the lake", "category": 4}]}
    path = data / "locomo10.json"
    path.write_text(json.dumps([sample]), encoding="utf-8")
    loaded = load_locomo(path)
    (turn,) = loaded.conversations["conv-9"].iter_rounds()
    assert [a.media.path for a in turn.attachments] == [
        "https://example.org/a.jpg", str((data / "images" / "ok.png").resolve())]
    named = [(s.record, s.field) for s in loaded.skipped]
    # the web link is no skip: one notice for the file says it stays a caption-only attachment
    assert named == [("conv-9 D1:1", "img_url"), ("conv-9/0", "answer"),
                     ("conv-9/1", "evidence"), (None, "img_url")]
    assert "1 shared images are web links" in loaded.skipped[-1].reason
    assert loaded.skipped[0].reason.startswith("image skipped: ")
    assert "is not text or a number" in loaded.skipped[1].reason
    assert [q.id for q in loaded.questions] == ["conv-9/1"]
