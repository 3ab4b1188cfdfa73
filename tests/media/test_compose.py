"""Virtual probe composition: swap schedules, orders, parts, resampling, sizes, errors."""

from __future__ import annotations

import math
import shutil
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from m3kit.errors import CompositionError, MediaError, MediaNotFoundError, NotAVideoError
from m3kit.media.compose import concatenate, interleave, sequence, split_screen
from m3kit.media.generate import pattern_frame, write_pattern_video
from m3kit.media.letterbox import letterbox, letterbox_box
from m3kit.schema.probe import ProbeManifest, ProbeSource


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("compose_src")
    return {
        # 4 s at 25 fps: 100 frames, frame i at i/25 s
        "a": write_pattern_video(root / "a.mp4", seconds=4, fps=25, width=160, height=120),
        "b": write_pattern_video(root / "b.mp4", seconds=4, fps=25, width=160, height=120,
                                 hue=0.5),
        # 5 s at 30 fps: 150 frames
        "c": write_pattern_video(root / "c.mp4", seconds=5, fps=30, width=160, height=120,
                                 hue=0.25),
        # smaller, for canvas sizes
        "s": write_pattern_video(root / "s.mp4", seconds=1, fps=25, width=128, height=96),
    }


def _sides(m: ProbeManifest, j: int) -> tuple[str, str]:
    f = m.frames[j]
    return f.tile("left").source, f.tile("right").source


# -- split screen ----------------------------------------------------------------------------------


def test_split_no_swap(videos: dict[str, Path]) -> None:
    m = split_screen(videos["a"], videos["b"])
    r = m.recipe
    assert (r.kind, r.swaps, r.swap_times, r.order) == ("split_screen", 0, [], ["a", "b"])
    assert (r.fps, r.width, r.height) == (25.0, 320, 120)
    assert m.frame_count == 100 and m.duration == 4.0
    assert all(_sides(m, j) == ("a", "b") for j in range(100))
    assert {f.segment for f in m.frames} == {0}
    # Both play together from their starts.
    f = m.frames[37]
    assert [(t.source_index, t.source_time) for t in f.tiles] == [(37, 1.48), (37, 1.48)]
    assert [(s.segment, s.source, s.side) for s in m.segments] == [(0, "a", "left"),
                                                                   (0, "b", "right")]


def test_split_one_swap(videos: dict[str, Path]) -> None:
    m = split_screen(videos["a"], videos["b"], swaps=1)
    assert m.recipe.swap_times == [2.0]
    assert _sides(m, 49) == ("a", "b") and m.frames[49].segment == 0
    assert _sides(m, 50) == ("b", "a") and m.frames[50].segment == 1
    # Swapping moves a source, it does not restart it.
    assert m.frames[50].tile("right").source_index == 50


def test_split_three_swaps_schedule(videos: dict[str, Path]) -> None:
    """D = 4 s, k = 3: swaps at 1, 2, 3 s; A left in segments 0 and 2, right in 1 and 3."""
    m = split_screen(videos["a"], videos["b"], swaps=3)
    assert m.recipe.swaps == 3 and m.recipe.swap_times == [1.0, 2.0, 3.0]
    for f in m.frames:
        seg = int(f.time + 1e-9)  # swaps at whole seconds
        assert f.segment == seg
        assert _sides(m, f.index) == (("a", "b") if seg % 2 == 0 else ("b", "a"))
        assert all(t.segment == seg and t.source_index == f.index for t in f.tiles)
    blocks = [(s.segment, s.source, s.side, s.frame_start, s.frame_end) for s in m.segments]
    assert blocks == [
        (0, "a", "left", 0, 25), (0, "b", "right", 0, 25),
        (1, "b", "left", 25, 50), (1, "a", "right", 25, 50),
        (2, "a", "left", 50, 75), (2, "b", "right", 50, 75),
        (3, "b", "left", 75, 100), (3, "a", "right", 75, 100),
    ]
    assert [(s.out_start, s.out_end) for s in m.segments[::2]] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert "swaps: 3 at 1.00, 2.00, 3.00 s" in m.summary()


def test_split_swap_times_snap_to_frames(videos: dict[str, Path]) -> None:
    """D = 2.5 s, k = 4: planned 0.5, 1, 1.5, 2 s; 0.5 s is frame 12.5, the layout changes at 13."""
    m = split_screen(videos["a"], videos["b"], swaps=4, duration=2.5)
    assert m.frame_count == 63  # 62.5 frames, halves round up
    assert m.recipe.swap_times == [0.52, 1.0, 1.52, 2.0]
    assert m.frames[12].segment == 0 and m.frames[13].segment == 1
    assert _sides(m, 13) == ("b", "a")


def test_split_shorter_source_and_rates(videos: dict[str, Path]) -> None:
    """A 4 s at 25 fps with C 5 s at 30 fps: 4 s at 30 fps; A's frame is the one on screen."""
    m = split_screen(videos["a"], videos["c"], swaps=0)
    assert m.recipe.fps == 30.0 and m.frame_count == 120
    for f in m.frames:
        assert f.tile("left").source_index == math.floor(f.index * 25 / 30 + 1e-9)
        assert f.tile("right").source_index == f.index


def test_split_sizes(videos: dict[str, Path]) -> None:
    m = split_screen(videos["s"], videos["a"])
    assert (m.recipe.width, m.recipe.height) == (320, 120)
    assert m.recipe.region("left") == (0, 0, 160, 120)
    assert m.recipe.region("right") == (160, 0, 160, 120)
    m = split_screen(videos["a"], videos["b"], tile_size=(100, 80))
    assert (m.recipe.width, m.recipe.height) == (200, 80)
    with pytest.raises(CompositionError):
        split_screen(videos["a"], videos["b"], tile_size=(100, 81))


# -- concatenation ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "order",
    [["a", "c"], ["c", "a"], ["a", "a", "c"]],
    ids=["V1V2", "V2V1", "V1V1V2"],
)
def test_concat_orders(videos: dict[str, Path], order: list[str]) -> None:
    m = concatenate([videos[k] for k in order])
    rate = m.recipe.fps
    assert rate == 30.0 and m.recipe.order == order and m.recipe.kind == "concat"
    lengths = {"a": 120, "c": 150}  # 4 s and 5 s at 30 fps
    src_fps = {"a": 25, "c": 30}
    start = 0
    for seg, key in enumerate(order):
        n = lengths[key]
        block = m.segments[seg]
        assert (block.segment, block.source, block.frame_start, block.frame_end) == (
            seg, key, start, start + n)
        assert block.part == order[:seg].count(key)
        assert block.source_start == 0.0
        for j in range(start, start + n):
            f = m.frames[j]
            assert (f.source, f.side, f.segment) == (key, "full", seg)
            local = (j - start) / rate  # every occurrence restarts at source time 0
            assert f.source_time == pytest.approx(local, abs=1e-6)
            assert f.source_index == math.floor(local * src_fps[key] + 1e-9)
        start += n
    assert m.frame_count == start
    assert [s.id for s in m.recipe.sources] == list(dict.fromkeys(order))


def test_concat_repeats_restart(videos: dict[str, Path]) -> None:
    m = concatenate([videos["a"], videos["a"], videos["c"]], fps=25)
    assert [m.frames[j].source_index for j in (98, 99, 100, 101)] == [98, 99, 0, 1]
    assert [m.frames[j].segment for j in (99, 100, 199, 200)] == [0, 1, 1, 2]


# -- interleaving ----------------------------------------------------------------------------------


def test_interleave_two_parts(videos: dict[str, Path]) -> None:
    m = interleave(videos["a"], videos["b"], segments=2)
    assert m.recipe.order == ["a", "b", "a", "b"] and m.recipe.segments_per_source == 2
    got = [(s.source, s.part, s.source_start, s.source_end, s.frame_start, s.frame_end)
           for s in m.segments]
    assert got == [
        ("a", 0, 0.0, 2.0, 0, 50), ("b", 0, 0.0, 2.0, 50, 100),
        ("a", 1, 2.0, 4.0, 100, 150), ("b", 1, 2.0, 4.0, 150, 200),
    ]
    assert (m.frames[100].source, m.frames[100].source_index, m.frames[100].segment) == ("a", 50, 2)
    assert "a1 0.00–2.00 s" in m.summary()


def test_interleave_three_parts(videos: dict[str, Path]) -> None:
    m = interleave(videos["a"], videos["b"], segments=3)
    # 100 frames cut at 0, 33, 66, 100: A1 B1 A2 B2 A3 B3.
    assert [(s.source, s.part, s.frame_count) for s in m.segments] == [
        ("a", 0, 33), ("b", 0, 33), ("a", 1, 33), ("b", 1, 33), ("a", 2, 34), ("b", 2, 34)]
    assert m.segments[2].source_start == pytest.approx(33 / 25)
    for key in ("a", "b"):
        shown = [f.source_index for f in m.frames if f.source == key]
        assert shown == list(range(100))  # no frame lost or repeated across parts


def test_interleave_rejects(videos: dict[str, Path]) -> None:
    with pytest.raises(CompositionError) as err:
        interleave(videos["a"], videos["b"], segments=0)
    assert err.value.field == "segments"
    with pytest.raises(CompositionError):
        interleave(videos["s"], videos["b"], segments=1000)


# -- sequences (N-back) ----------------------------------------------------------------------------


def test_sequence_spans_and_gap(videos: dict[str, Path]) -> None:
    clips = [
        ProbeSource(id="x", path=str(videos["a"]), start=1.0, end=2.0),
        ProbeSource(id="y", path=str(videos["c"]), start=0.0, end=1.0),
        ProbeSource(id="x", path=str(videos["a"]), start=1.0, end=2.0),
    ]
    m = sequence(clips, fps=25, gap=0.2)
    assert m.recipe.params["gap_frames"] == 5
    assert m.frame_count == 25 + 5 + 25 + 5 + 25
    assert [f.source_index for f in m.frames[:25]] == list(range(25, 50))
    assert m.frames[0].source_time == 1.0
    assert all(not f.tiles and f.source is None and f.segment is None for f in m.frames[25:30])
    # 30 fps clip at 25 fps: the frame on screen at j/25 is floor(1.2 j).
    assert [f.source_index for f in m.frames[30:36]] == [0, 1, 2, 3, 4, 6]
    assert [(s.source, s.part, s.frame_start) for s in m.segments] == [
        ("x", 0, 0), ("y", 0, 30), ("x", 1, 60)]
    assert len(m.recipe.sources) == 2


def test_resample_up_repeats_frames(videos: dict[str, Path]) -> None:
    m = sequence([videos["a"]], fps=30)
    assert [f.source_index for f in m.frames[:8]] == [0, 0, 1, 2, 3, 4, 5, 5]
    assert m.frame_count == 120


def _write_vfr(path: Path, pts_ms: list[int]) -> Path:
    """A variable-rate H.264 mp4: frame i at ``pts_ms[i]`` milliseconds."""
    tb = Fraction(1, 1000)
    with av.open(str(path), "w") as out:
        stream = out.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.time_base = stream.codec_context.time_base = tb
        stream.options = {"x264-params": "bframes=0"}
        for i, pts in enumerate(pts_ms):
            frame = av.VideoFrame.from_ndarray(pattern_frame(i, 64, 48), format="rgb24")
            frame.pts, frame.time_base = pts, tb
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    return path


def test_resample_variable_rate(tmp_path: Path) -> None:
    """Each output instant shows the last source frame whose timestamp is at or before it."""
    vfr = _write_vfr(tmp_path / "vfr.mp4", [0, 40, 60, 200, 210, 400, 500, 520, 800, 900])
    m = sequence([vfr], fps=20)  # 1 s: output instants 0, 0.05, 0.10, ...
    assert m.frame_count == 20
    assert [f.source_index for f in m.frames] == [
        0, 1, 2, 2, 3, 4, 4, 4, 5, 5, 6, 7, 7, 7, 7, 7, 8, 8, 9, 9]


# -- ids, sizes and validation ---------------------------------------------------------------------


def test_ids_from_stems(videos: dict[str, Path], tmp_path: Path) -> None:
    other = tmp_path / "a.mp4"
    shutil.copy(videos["b"], other)
    m = concatenate([videos["a"], other, videos["a"]])
    assert m.recipe.order == ["a", "a_2", "a"]
    assert [s.path for s in m.recipe.sources] == [str(videos["a"]), str(other)]
    src = m.recipe.source("a")
    assert (src.frame_count, src.width, src.height, src.fps) == (100, 160, 120, 25.0)


def test_canvas_is_largest_source(videos: dict[str, Path]) -> None:
    m = concatenate([videos["s"], videos["a"]])
    assert (m.recipe.width, m.recipe.height) == (160, 120)
    m = concatenate([videos["s"], videos["a"]], size=(64, 48), fps=10)
    assert (m.recipe.width, m.recipe.height, m.recipe.fps) == (64, 48, 10.0)
    with pytest.raises(CompositionError):
        concatenate([videos["s"], videos["a"]], size=(63, 48))


def test_invalid_recipes(videos: dict[str, Path]) -> None:
    a, b = videos["a"], videos["b"]
    with pytest.raises(CompositionError) as err:
        split_screen(a, b, swaps=-1)
    assert err.value.field == "swaps"
    with pytest.raises(CompositionError):
        split_screen(a, b, swaps=200)  # more layouts than frames
    with pytest.raises(CompositionError) as err:
        split_screen(a, b, duration=9.0)
    assert err.value.field == "duration"
    with pytest.raises(CompositionError):
        concatenate([a])
    with pytest.raises(CompositionError):
        sequence([a], gap=-1.0)
    with pytest.raises(CompositionError):
        concatenate([a, b], fps=0)
    with pytest.raises(CompositionError) as err:
        sequence([ProbeSource(id="x", path=str(a), start=1.0, end=9.0)])
    assert err.value.field == "end" and err.value.path == str(a)
    with pytest.raises(CompositionError) as err:
        sequence([ProbeSource(id="x", path=str(a), start=4.5)])
    assert err.value.field == "start"


def test_unreadable_sources_raise_typed_errors(videos: dict[str, Path], tmp_path: Path) -> None:
    missing = tmp_path / "nope.mp4"
    with pytest.raises(MediaNotFoundError) as err:
        split_screen(videos["a"], missing)
    assert str(missing) in str(err.value)
    text = tmp_path / "notes.mp4"
    text.write_text("not a video at all\n" * 20)
    with pytest.raises(NotAVideoError) as err:
        concatenate([videos["a"], text])
    assert str(text) in str(err.value)
    with pytest.raises(MediaError):
        interleave(videos["a"], tmp_path, segments=2)  # a directory


# -- letterbox -------------------------------------------------------------------------------------


def test_letterbox_geometry() -> None:
    assert letterbox_box(160, 120, 160, 120) == (0, 0, 160, 120)
    assert letterbox_box(128, 96, 160, 120) == (0, 0, 160, 120)  # same aspect: fills
    assert letterbox_box(160, 120, 160, 160) == (0, 20, 160, 120)  # bars top and bottom
    assert letterbox_box(100, 100, 160, 120) == (20, 0, 120, 120)  # pillars left and right
    with pytest.raises(ValueError):
        letterbox_box(0, 10, 10, 10)


def test_letterbox_pixels() -> None:
    rgb = np.full((100, 100, 3), 200, dtype=np.uint8)
    assert letterbox(rgb, 100, 100) is rgb
    out = letterbox(rgb, 160, 120)
    assert out.shape == (120, 160, 3) and out.dtype == np.uint8
    assert out[:, :20].max() == 0 and out[:, 140:].max() == 0  # black pillars
    assert np.all(out[:, 20:140] == 200)
