"""``m3kit video``: the verbs work on real files, and bad input is one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from PIL import Image

from m3kit.cli.main import main


def test_info_json(pancake, capsys):
    assert main(["video", "info", str(pancake), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["frame_count"] == 310 and info["width"] == 426 and info["codec"] == "h264"


def test_info_table(pancake, capsys):
    assert main(["video", "info", str(pancake)]) == 0
    out = capsys.readouterr().out
    assert "frame_count" in out and "310" in out


def test_frames_uniform_writes_images_and_manifest(pancake, tmp_path, capsys):
    out = tmp_path / "frames"
    assert main(["video", "frames", str(pancake), "--n", "8", "--policy", "uniform",
                 "--out", str(out)]) == 0
    manifest = json.loads((out / "frames.json").read_text())
    # round(linspace(0, 309, 8)) = 0, 44, 88, 132, 177, 221, 265, 309
    assert [row["index"] for row in manifest["frames"]] == [0, 44, 88, 132, 177, 221, 265, 309]
    first = manifest["frames"][1]
    assert first["time"] == pytest.approx(44 / 30, abs=1e-3)
    assert Image.open(out / first["file"]).size == (426, 240)


def test_frames_fps_policy_with_span_and_store(pancake, tmp_path):
    out = tmp_path / "frames"
    args = ["video", "frames", str(pancake), "--policy", "fps", "--fps", "2", "--span", "2", "4",
            "--out", str(out), "--format", "png", "--store", str(tmp_path / "store")]
    assert main(args) == 0
    rows = json.loads((out / "frames.json").read_text())["frames"]
    # 2 fps between 2 s and 4 s at 30 fps: instants 2.0, 2.5, 3.0, 3.5, 4.0 -> frames 60 .. 120
    assert [r["index"] for r in rows] == [60, 75, 90, 105, 120]
    assert all(r["file"].endswith(".png") for r in rows)
    assert main(args) == 0  # second run is served by the store


def test_frames_uniform_inner(pancake, tmp_path):
    out = tmp_path / "inner"
    assert main(["video", "frames", str(pancake), "--n", "4", "--policy", "uniform_inner",
                 "--out", str(out)]) == 0
    rows = json.loads((out / "frames.json").read_text())["frames"]
    assert [r["index"] for r in rows] == [62, 124, 186, 248]  # int(i * 310 / 5)


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["video", "info", "{tmp}/missing.mp4"], "no such file"),
        (["video", "info", "{tmp}"], "is a directory"),
        (["video", "info", "{tmp}/empty.mp4"], "empty file"),
        (["video", "info", "{tmp}/notes.mp4"], "not a video"),
        (["video", "frames", "{pancake}", "--n", "0", "--out", "{tmp}/o"], "positive"),
        (["video", "frames", "{pancake}", "--n", "-4", "--out", "{tmp}/o"], "positive"),
        (["video", "frames", "{pancake}", "--span", "50", "60", "--out", "{tmp}/o"], "span"),
        (["video", "frames", "{pancake}", "--policy", "random", "--out", "{tmp}/o"],
         "unknown policy"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, reason, pancake, tmp_path, capsys):
    (tmp_path / "empty.mp4").write_bytes(b"")
    (tmp_path / "notes.mp4").write_text("not a video\n" * 20)
    argv = [a.format(tmp=tmp_path, pancake=pancake) for a in args]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("m3kit: error: ") and reason in err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_console_script_on_corrupted_video(corrupted, tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "m3kit", "video", "frames", str(corrupted), "--n", "50",
         "--out", str(tmp_path / "o")],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    lines = [line for line in result.stderr.splitlines() if line.startswith("m3kit: error")]
    assert len(lines) == 1 and str(corrupted) in lines[0] and "frame" in lines[0]
    assert "Traceback" not in result.stderr
