"""``m3kit compose`` and ``m3kit demo``: real renders, manifests checked against the recipe."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.media import video_info
from m3kit.media.generate import write_pattern_video


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("sources")
    a = write_pattern_video(root / "a.mp4", seconds=4, fps=25, width=128, height=96)
    b = write_pattern_video(root / "b.mp4", seconds=4, fps=25, width=128, height=96, hue=0.5)
    return a, b


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def test_split_with_swaps(sources, tmp_path, capsys):
    a, b = sources
    out = tmp_path / "P.mp4"
    assert main(["compose", "split", str(a), str(b), "--swaps", "3", "--out", str(out)]) == 0
    manifest = load(tmp_path / "P.json")
    assert manifest["recipe"]["swap_times"] == [1.0, 2.0, 3.0]  # D = 4 s, k = 3: j * D / 4
    frames = manifest["frames"]
    assert len(frames) == 100 and video_info(out).frame_count == 100
    left_at = [next(t["source"] for t in f["tiles"] if t["side"] == "left") for f in frames]
    # A starts left and trades places at 1, 2 and 3 s (frames 25, 50, 75 at 25 fps)
    assert left_at[:25] == ["a"] * 25 and left_at[25:50] == ["b"] * 25
    assert left_at[50:75] == ["a"] * 25 and left_at[75:] == ["b"] * 25
    assert [f["tiles"][0]["segment"] for f in frames[::25]] == [0, 1, 2, 3]
    tile = frames[60]["tiles"][0]
    assert set(tile) >= {"source", "source_time", "side", "segment"}
    assert tile["source_time"] == pytest.approx(2.4)
    assert "split_screen probe" in capsys.readouterr().out


def test_concat_with_repetition(sources, tmp_path):
    a, b = sources
    out = tmp_path / "AAB.mp4"
    assert main(["compose", "concat", str(a), str(a), str(b), "--out", str(out)]) == 0
    manifest = load(tmp_path / "AAB.json")
    assert [s["source"] for s in manifest["segments"]] == ["a", "a", "b"]
    frames = manifest["frames"]
    assert len(frames) == 300
    # the second A starts over from its first frame
    assert frames[100]["tiles"][0]["source_index"] == 0
    assert frames[100]["tiles"][0]["segment"] == 1
    assert {t["side"] for f in frames for t in f["tiles"]} == {"full"}


def test_interleave_and_virtual(sources, tmp_path):
    a, b = sources
    out = tmp_path / "I.mp4"
    assert main(["compose", "interleave", str(a), str(b), "--segments", "2", "--out", str(out),
                 "--virtual"]) == 0
    assert not out.exists()  # virtual: the manifest only
    manifest = load(tmp_path / "I.json")
    order = [(s["source"], s["part"]) for s in manifest["segments"]]
    assert order == [("a", 0), ("b", 0), ("a", 1), ("b", 1)]
    # B's first part starts at output 2 s and shows B from 0 s
    first_b = manifest["frames"][50]["tiles"][0]
    assert (first_b["source"], first_b["source_index"]) == ("b", 0)


def test_sequence(sources, tmp_path):
    a, b = sources
    out = tmp_path / "S.mp4"
    assert main(["compose", "sequence", str(a), str(b), str(a), "--out", str(out)]) == 0
    manifest = load(tmp_path / "S.json")
    assert [s["segment"] for s in manifest["segments"]] == [0, 1, 2]
    assert video_info(out).frame_count == len(manifest["frames"]) == 300


def test_unreadable_source_leaves_no_output(sources, tmp_path, capsys):
    a, _ = sources
    bad = tmp_path / "broken.mp4"
    bad.write_text("not a video")
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert main(["compose", "split", str(a), str(bad), "--out", str(out_dir / "P.mp4")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("m3kit: error: ") and str(bad) in err
    assert list(out_dir.iterdir()) == []


def test_demo(pancake, tmp_path, capsys):
    assert main(["demo", str(pancake), "--out", str(tmp_path), "--swaps", "2"]) == 0
    captured = capsys.readouterr()
    assert "split_screen probe: 852x240" in captured.out and "swaps: 2" in captured.out
    assert (tmp_path / "split_probe.mp4").exists() and (tmp_path / "split_probe.json").exists()
    assert "deprecated" not in captured.err


def test_demo_out_dir_is_a_deprecated_alias(pancake, tmp_path, capsys):
    old = tmp_path / "old"
    assert main(["demo", str(pancake), "--out-dir", str(old), "--swaps", "1"]) == 0
    assert "--out-dir is deprecated, use --out" in capsys.readouterr().err
    assert (old / "split_probe.mp4").exists()
    # both, naming different folders: refused rather than guessed
    assert main(["demo", str(pancake), "--out-dir", str(old), "--out", str(tmp_path / "new"),
                 "--swaps", "1"]) == 2
    assert "disagree" in capsys.readouterr().err


def test_split_of_unequal_sources_says_what_it_cuts(sources, tmp_path, capsys):
    a, _ = sources
    longer = write_pattern_video(tmp_path / "long.mp4", seconds=6, fps=25, width=128, height=96)
    out = tmp_path / "P.mp4"
    assert main(["compose", "split", str(a), str(longer), "--out", str(out), "--virtual"]) == 0
    err = capsys.readouterr().err
    assert f"notice: {longer} plays 6.00 s; the probe shows its first 4.00 s" in err
    assert str(a) not in err  # the shorter source is shown whole
    assert load(out.with_suffix(".json"))["duration"] == 4.0
    # an explicit length is the user's choice: no notice
    assert main(["compose", "split", str(a), str(longer), "--out", str(out), "--virtual",
                 "--duration", "2"]) == 0
    assert "notice" not in capsys.readouterr().err
    assert load(out.with_suffix(".json"))["duration"] == 2.0
    # equal sources: nothing to say
    assert main(["compose", "split", str(a), str(a), "--out", str(out), "--virtual"]) == 0
    assert "notice" not in capsys.readouterr().err


def test_outputs_have_ordinary_file_modes(sources, tmp_path):
    import os

    a, b = sources
    out = tmp_path / "P.mp4"
    umask = os.umask(0)
    os.umask(umask)
    assert main(["compose", "split", str(a), str(b), "--out", str(out)]) == 0
    for path in (out, out.with_suffix(".json")):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path
