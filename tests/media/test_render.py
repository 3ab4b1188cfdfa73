"""Rendering probes to mp4 and materialising frames: the pixels match the provenance."""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.errors import CompositionError, CorruptMediaError, MediaNotFoundError, NotAVideoError
from m3kit.media.compose import concatenate, interleave, sequence, split_screen
from m3kit.media.decode import VideoDecoder
from m3kit.media.generate import read_frame_code, write_pattern_video
from m3kit.media.letterbox import letterbox_box
from m3kit.media.render import STORE_CHUNK, materialize, render_probe
from m3kit.schema.probe import ProbeManifest, ProbeSource

CORRUPTED = Path("/work/shared/data/videos/corrupted.mp4")


@pytest.fixture(scope="module")
def videos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("render_src")
    return {
        "a": write_pattern_video(root / "a.mp4", seconds=2, fps=25, width=160, height=120,
                                 keyint=12),
        # another size and rate: letterboxed and resampled into a's canvas
        "b": write_pattern_video(root / "b.mp4", seconds=3, fps=30, width=128, height=96,
                                 hue=0.5, keyint=15),
    }


def _decoded(path: Path) -> tuple[list[np.ndarray], np.ndarray]:
    with VideoDecoder(path) as dec:
        return dec.get_frames(range(len(dec))), dec.times


def _tile_codes(m: ProbeManifest, j: int, image: np.ndarray) -> list[int]:
    """The frame codes in each tile of an output image, the letterbox undone."""
    codes = []
    for tile in m.frames[j].tiles:
        x, y, w, h = m.recipe.region(tile.side)
        src = m.recipe.source(tile.source)
        cx, cy, cw, ch = letterbox_box(src.width, src.height, w, h)
        content = image[y + cy : y + cy + ch, x + cx : x + cx + cw]
        if (cw, ch) != (src.width, src.height):
            content = np.asarray(Image.fromarray(content).resize(
                (src.width, src.height), Image.Resampling.BILINEAR))
        codes.append(read_frame_code(content))
    return codes


def _check_render(m: ProbeManifest, out: Path) -> list[np.ndarray]:
    mp4, js = render_probe(m, out)
    assert (mp4, js) == (out, out.with_suffix(".json"))
    assert ProbeManifest.load(js) == m
    frames, times = _decoded(mp4)
    assert len(frames) == m.frame_count
    assert times == pytest.approx([f.time for f in m.frames], abs=1e-3)  # at the probe's rate
    assert frames[0].shape == (m.recipe.height, m.recipe.width, 3)
    for j, image in enumerate(frames):
        assert _tile_codes(m, j, image) == [t.source_index for t in m.frames[j].tiles], j
    return frames


def test_render_split_screen_swaps(videos: dict[str, Path], tmp_path: Path) -> None:
    m = split_screen(videos["a"], videos["b"], swaps=3)
    assert m.recipe.fps == 30.0 and m.frame_count == 60
    frames = _check_render(m, tmp_path / "split.mp4")
    # After the first swap (0.5 s = frame 15) b is on the left: its letterbox fills the tile.
    assert m.frames[15].tile("left").source == "b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["split.json", "split.mp4"]
    assert frames[0].shape == (120, 320, 3)


def test_render_concat_with_repeat(videos: dict[str, Path], tmp_path: Path) -> None:
    m = concatenate([videos["a"], videos["b"], videos["a"]], fps=25)
    _check_render(m, tmp_path / "concat.mp4")
    # a: 50 frames, b: 75 frames (3 s at 25 fps, frame floor(1.2 k)), then a restarts at 0.
    assert [m.frames[j].source_index for j in (49, 50, 124, 125)] == [49, 0, 88, 0]


def test_render_interleave(videos: dict[str, Path], tmp_path: Path) -> None:
    m = interleave(videos["a"], videos["b"], segments=3)
    _check_render(m, tmp_path / "inter.mp4")


def test_render_sequence_gap_is_black(videos: dict[str, Path], tmp_path: Path) -> None:
    clips = [ProbeSource(id="a1", path=str(videos["a"]), start=0.4, end=0.8),
             ProbeSource(id="b1", path=str(videos["b"]), start=1.0, end=1.4)]
    m = sequence(clips, gap=0.2)
    frames = _check_render(m, tmp_path / "seq.mp4")
    gaps = [f.index for f in m.frames if not f.tiles]
    assert len(gaps) == 6
    assert all(frames[j].mean() < 8 for j in gaps)


def test_materialize_matches_render(videos: dict[str, Path], tmp_path: Path) -> None:
    m = split_screen(videos["b"], videos["a"], swaps=1)
    picks = [0, 7, 29, 30, 59]
    virtual = materialize(m, picks)
    rendered, _ = _decoded(render_probe(m, tmp_path / "p.mp4")[0])
    for j, image in zip(picks, virtual, strict=True):
        assert image.shape == rendered[j].shape
        assert _tile_codes(m, j, image) == [t.source_index for t in m.frames[j].tiles]
        diff = np.abs(image.astype(np.int16) - rendered[j].astype(np.int16)).mean()
        assert diff < 8, (j, diff)  # H.264 is lossy, the picture is the same
    with pytest.raises(CompositionError):
        materialize(m, [m.frame_count])


class _RecordingStore:
    """A stand-in FrameStore that logs every request."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[int]]] = []

    def get_frames(self, video: str, indices: Sequence[int],
                   resize: object = None) -> list[np.ndarray]:
        self.calls.append((str(video), list(indices)))
        with VideoDecoder(video) as dec:
            return dec.get_frames(indices)


def test_render_with_store_streams_forward(videos: dict[str, Path], tmp_path: Path) -> None:
    store = _RecordingStore()
    m = interleave(videos["a"], videos["b"], segments=4)
    progress: list[tuple[int, int]] = []
    mp4, _ = render_probe(m, tmp_path / "s.mp4", store=store,
                          progress=lambda done, total: progress.append((done, total)))
    assert progress[-1] == (m.frame_count, m.frame_count) and len(progress) == m.frame_count
    # Bounded memory: small requests; each source read forward in one pass across its parts.
    assert all(len(ix) <= STORE_CHUNK for _, ix in store.calls)
    for path in (videos["a"], videos["b"]):
        seen = [i for p, ix in store.calls if p == str(path) for i in ix]
        assert seen == sorted(set(seen))
    frames, _ = _decoded(mp4)
    for j in range(0, m.frame_count, 7):
        assert _tile_codes(m, j, frames[j]) == [m.frames[j].source_index]


# -- failures leave nothing behind -----------------------------------------------------------------


@pytest.mark.skipif(not CORRUPTED.exists(), reason="shared corrupted sample missing")
def test_corrupt_mid_decode_leaves_no_output(videos: dict[str, Path], tmp_path: Path) -> None:
    # The file opens and its first frame decodes, so composing works; frame 28 is damaged.
    m = split_screen(CORRUPTED, videos["b"], tile_size=(64, 48))
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(CorruptMediaError) as err:
        render_probe(m, out / "p.mp4")
    assert str(CORRUPTED) in str(err.value)
    assert list(out.iterdir()) == []


def test_missing_or_replaced_source_leaves_no_output(videos: dict[str, Path],
                                                      tmp_path: Path) -> None:
    src = tmp_path / "src.mp4"
    shutil.copy(videos["a"], src)
    m = concatenate([src, videos["b"]])
    out = tmp_path / "out"
    out.mkdir()
    src.unlink()
    with pytest.raises(MediaNotFoundError):
        render_probe(m, out / "p.mp4")
    src.write_text("this is text, not a video\n" * 10)
    with pytest.raises(NotAVideoError):
        render_probe(m, out / "p.mp4")
    write_pattern_video(src, seconds=1, fps=25, width=160, height=120)  # other frame count
    with pytest.raises(CompositionError) as err:
        render_probe(m, out / "p.mp4")
    assert err.value.field == "frame_count"
    with pytest.raises(CompositionError):
        render_probe(concatenate([videos["a"], videos["b"]]), out / "p.json")
    assert list(out.iterdir()) == []
