"""``m3kit eval m3exam --memory <name>``: an image the memory cannot read at ingest (a
decompression bomb, a torn PNG) costs its own attachment, and the summary names it once, however
many samples ask about that persona."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.cli.main import main

from ..media.test_image import png_header_only

pytestmark = pytest.mark.usefixtures("isolated_dirs")


def _persona(root: Path) -> tuple[Path, Path, Path]:
    folder = root / "Gus_Photos"
    images = folder / "images"
    images.mkdir(parents=True)
    Image.new("RGB", (40, 30), (200, 30, 30)).save(images / "img_1.png")
    bomb = png_header_only(images / "bomb.png", 40_000, 40_000)  # 1.6e9 pixels claimed
    torn = images / "torn.png"
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(torn)
    torn.write_bytes(torn.read_bytes()[: torn.stat().st_size // 2])  # pixel data cut in half
    dialogues = [
        {"round": "D1:1", "user": "Photos of my fox.", "assistant": "Nice.",
         "img_file": ["img_1.png", "bomb.png", "torn.png"],
         "img_description": ["a red fox", "a barn", "a square of noise"]},
        {"round": "D1:2", "user": "My cat Miso has a sore paw.", "assistant": "Rest it."},
    ]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": dialogues}]))
    (folder / "question.json").write_text(json.dumps([
        {"question": "What is the cat called?", "answer": ["Miso"], "supporting_facts": "D1:2",
         "type": "ss"},
        {"question": "Which animal is in the photo?", "answer": ["fox"],
         "supporting_facts": "D1:1", "type": "ss"},
    ]))
    return folder, bomb, torn


@pytest.mark.parametrize("memory", ["rag", "proctor"])
def test_ingest_skips_are_printed_once_after_the_run(tmp_path: Path, capsys, memory: str
                                                     ) -> None:
    persona, bomb, torn = _persona(tmp_path)
    code = main(["eval", "m3exam", "-T", f"data={persona}", "--memory", memory, "--model",
                 "m3kit/builtin", "--log-dir", str(tmp_path / "logs")])
    out = capsys.readouterr().out
    assert code == 0, out
    lines = out.splitlines()
    # both questions answered: the bad images cost their attachments, not the persona
    overall = next(line for line in lines if line.split()[:1] == ["all"])
    assert overall.split()[1] == "2"
    start = lines.index("skipped 2 attachment(s) at memory ingest:")
    assert lines[start + 1].startswith(f"  {bomb}: record D1:1/")
    assert lines[start + 1].endswith(": image over the bound of 89478485 pixels, refused as a "
                                     "decompression bomb (1600000000 pixels)")
    assert lines[start + 2].startswith(f"  {torn}: record D1:1/")
    assert ": cannot read the image" in lines[start + 2]
    assert lines[start + 3].startswith("log: ")
    assert sum("bomb.png" in line for line in lines) == 1  # once, not once per question
