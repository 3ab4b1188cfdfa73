"""``m3kit video`` and ``m3kit compose`` on hostile input: bounded, exact, named errors.

Every refusal is one line on stderr and exit 2; a damaged video is reported at the same frame by
``video info``, ``video frames`` and ``compose``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.cli.main import main
from m3kit.media.decode import VideoDecoder
from m3kit.media.generate import write_pattern_video


@pytest.fixture(scope="module")
def clip(tmp_path_factory) -> Path:
    return write_pattern_video(tmp_path_factory.mktemp("clip") / "clip.mp4", seconds=2, fps=25,
                               width=128, height=96)


def one_line_error(argv: list[str], capsys) -> str:
    """The one error line of a refused command (a progress bar that had started may precede
    it on stderr)."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("m3kit: error: ")]
    assert len(lines) == 1 and "Traceback" not in err
    return lines[0]


# -- store formats ------------------------------------------------------------------------------


def test_png_store_gives_png_files_bit_identical_on_every_run(clip, tmp_path, capsys):
    store = tmp_path / "store"
    runs = []
    for run in ("first", "second"):
        out = tmp_path / run
        assert main(["video", "frames", str(clip), "--n", "6", "--format", "png",
                     "--store", str(store), "--out", str(out)]) == 0
        rows = json.loads((out / "frames.json").read_text())["frames"]
        runs.append({r["index"]: (out / r["file"]).read_bytes() for r in rows})
    assert runs[0] == runs[1]  # the same bytes, file for file
    assert list(runs[0]) == [0, 10, 20, 29, 39, 49]  # round(linspace(0, 49, 6))
    assert all(data.startswith(b"\x89PNG") for data in runs[0].values())
    stored = [p for p in (store / "frames").rglob("*") if p.is_file()]
    assert stored and {p.suffix for p in stored} == {".png"}  # the store is a PNG store
    with VideoDecoder(clip) as decoder:
        exact = decoder.get_frames(list(runs[0]))
    for frame, want in zip(runs[0], exact, strict=True):
        got = np.asarray(Image.open(tmp_path / "second" / f"frame_{frame:07d}.png"))
        assert np.array_equal(got, want)  # lossless: the decoder's pixels


def test_jpeg_store_runs_are_byte_identical_too(clip, tmp_path):
    store = tmp_path / "store"
    outs = [tmp_path / "a", tmp_path / "b"]
    for out in outs:
        assert main(["video", "frames", str(clip), "--n", "4", "--store", str(store),
                     "--out", str(out)]) == 0
    files = sorted(p.name for p in outs[0].glob("frame_*.jpg"))
    assert len(files) == 4
    assert all((outs[0] / f).read_bytes() == (outs[1] / f).read_bytes() for f in files)


# -- refusals ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["video", "generate", "{tmp}/g.mp4", "--fps", "0"], "field 'fps': must be a positive"),
        (["video", "generate", "{tmp}/g.mp4", "--seconds", "-1"], "field 'seconds'"),
        (["video", "generate", "{tmp}/g.mp4", "--width", "0"], "field 'width'"),
        (["video", "frames", "{clip}", "--max-side", "-3", "--out", "{tmp}/o"],
         "field 'max_side': must be a positive number of pixels, got -3"),
        (["video", "frames", "{clip}", "--max-side", "0", "--out", "{tmp}/o"], "max_side"),
        (["video", "frames", "{clip}", "--policy", "fps", "--fps", "1e9", "--out", "{tmp}/o"],
         "at most 1000"),
        (["compose", "concat", "{clip}", "{clip}", "--fps", "1000", "--out", "{tmp}/P.mp4"],
         "at most 240"),
        (["compose", "split", "{clip}", "{clip}", "--fps", "1e12", "--out", "{tmp}/P.mp4"],
         "at most 240"),
        (["compose", "interleave", "{clip}", "{clip}", "--segments", "100000",
          "--out", "{tmp}/P.mp4"], "segments"),
        (["compose", "split", "{clip}", "{clip}", "--swaps", "1000000",
          "--out", "{tmp}/P.mp4"], "swaps"),
    ],
)
def test_out_of_range_settings_are_one_line_and_exit_2(args, needle, clip, tmp_path, capsys):
    argv = [a.format(tmp=tmp_path, clip=clip) for a in args]
    assert needle in one_line_error(argv, capsys)
    assert not (tmp_path / "g.mp4").exists() and not (tmp_path / "P.mp4").exists()
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "verb",
    [
        ["compose", "split", "{clip}", "{loop}"],
        ["compose", "concat", "{loop}", "{clip}"],
        ["compose", "interleave", "{clip}", "{loop}"],
        ["compose", "sequence", "{loop}"],
        ["video", "info", "{loop}"],
        ["video", "frames", "{loop}"],
    ],
)
def test_a_symbolic_link_loop_is_named_in_every_verb(verb, clip, tmp_path, capsys):
    loop = tmp_path / "loop.mp4"
    loop.symlink_to(tmp_path / "loop2.mp4")
    (tmp_path / "loop2.mp4").symlink_to(loop)
    argv = [a.format(clip=clip, loop=loop) for a in verb]
    argv += ["--out", str(tmp_path / ("P.mp4" if verb[0] == "compose" else "o"))]
    if verb[:2] == ["video", "info"]:
        argv = argv[:-2]
    err = one_line_error(argv, capsys)
    assert f"{loop}: is a symbolic link loop" in err and "no such file" not in err


# -- a damaged video: one failing frame, named alike everywhere ----------------------------------


def test_info_warns_where_decoding_fails(corrupted, capsys):
    assert main(["video", "info", str(corrupted), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["frame_count"] == 50 and info["decodable_frames"] == 28
    assert any(w.startswith("frame 28 of 50 does not decode") and "frames 0..27 decode" in w
               for w in info["warnings"])
    assert main(["video", "info", str(corrupted)]) == 0
    out = capsys.readouterr().out
    assert "frame 28 of 50 does not decode" in " ".join(out.split())


def test_info_quick_skips_the_decode_and_says_so(corrupted, pancake, capsys):
    assert main(["video", "info", str(corrupted), "--json", "--quick"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["decodable_frames"] is None and info["warnings"] == []
    assert main(["video", "info", str(pancake), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["decodable_frames"] == 310


@pytest.mark.parametrize(
    "argv",
    [
        ["video", "frames", "{bad}", "--n", "50", "--out", "{tmp}/a"],  # every frame
        ["video", "frames", "{bad}", "--n", "8", "--out", "{tmp}/b"],  # sparse: frames skipped
        ["video", "frames", "{bad}", "--n", "8", "--store", "{tmp}/s", "--out", "{tmp}/c"],
        ["compose", "concat", "{bad}", "{clip}", "--out", "{tmp}/P.mp4"],
        ["compose", "interleave", "{clip}", "{bad}", "--out", "{tmp}/Q.mp4"],
    ],
)
def test_the_failing_frame_is_the_same_in_every_verb(argv, corrupted, clip, tmp_path, capsys):
    args = [a.format(bad=corrupted, clip=clip, tmp=tmp_path) for a in argv]
    err = one_line_error(args, capsys)
    assert f"{corrupted}: record frame 28: does not decode" in err
    assert "frames 0..27 decode" in err
    assert not (tmp_path / "P.mp4").exists() and not (tmp_path / "Q.mp4").exists()
