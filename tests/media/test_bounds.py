"""Bounded resources: frames written as decoded, requests that cannot fit refused by name,
rates and counts with upper bounds, bad paths named for what they are."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.errors import (
    CompositionError,
    MediaError,
    MediaNotFoundError,
    MediaRequestError,
    MediaTooLargeError,
    SamplingError,
)
from m3kit.media import compose
from m3kit.media.budget import check_frames_fit, frame_bytes
from m3kit.media.container import check_video_path
from m3kit.media.decode import VideoDecoder
from m3kit.media.frames import sample_frames, write_frames
from m3kit.media.generate import CODE_BITS, read_frame_code, write_pattern_video
from m3kit.media.resize import Resize, resize_for
from m3kit.media.sampling import fps_indices, uniform_indices, uniform_inner_indices

# -- the memory budget -----------------------------------------------------------------------------


def test_frame_bytes_is_rgb():
    assert frame_bytes(8000, 8000) == 192_000_000
    assert frame_bytes(160, 120) == 57_600


def test_check_frames_fit_counts_outputs_plus_one_source_frame():
    # 3 frames of 100x100 (30 000 B each) + one 200x200 source frame (120 000 B) = 210 000 B
    check_frames_fit(3, (100, 100), (200, 200), budget_bytes=210_000)
    with pytest.raises(MediaTooLargeError) as caught:
        check_frames_fit(4, (100, 100), (200, 200), budget_bytes=210_000, path="v.mp4")
    assert caught.value.path == "v.mp4" and "(3 fit)" in str(caught.value)


def test_holding_frames_past_the_budget_is_refused_and_streaming_is_not(small_video, tmp_path):
    one = frame_bytes(160, 120)  # 57 600 B
    budget = 3 * one
    # sample_frames holds 8 frames + the one being converted: 9 * 57 600 > 3 * 57 600
    with pytest.raises(MediaTooLargeError, match="8 decoded frames of 160x120"):
        sample_frames(small_video, "uniform", 8, memory_budget=budget)
    with VideoDecoder(small_video) as decoder, pytest.raises(MediaTooLargeError):
        decoder.get_frames(range(8), memory_budget=budget)
    # write_frames holds one frame at a time: 2 * 57 600 fits
    manifest = write_frames(small_video, tmp_path / "out", "uniform", 8, memory_budget=budget,
                            image_format="png")
    rows = json.loads(manifest.read_text())["frames"]
    assert [r["index"] for r in rows] == [0, 14, 28, 42, 57, 71, 85, 99]
    for row in rows:
        pixels = np.asarray(Image.open(tmp_path / "out" / row["file"]))
        assert read_frame_code(pixels) == row["index"]


def test_write_frames_gives_the_decoder_pixels(small_video, tmp_path):
    indices = [0, 14, 28, 42, 57, 71, 85, 99]
    resize = Resize(max_side=80)
    write_frames(small_video, tmp_path / "o", "uniform", 8, resize=resize, image_format="png")
    with VideoDecoder(small_video) as decoder:
        want = decoder.get_frames(indices, resize=resize)
    for index, frame in zip(indices, want, strict=True):
        got = np.asarray(Image.open(tmp_path / "o" / f"frame_{index:07d}.png"))
        assert got.shape == (60, 80, 3) and np.array_equal(got, frame)


def test_write_frames_with_a_store_of_another_format_is_refused(small_video, tmp_path):
    from m3kit.errors import FrameStoreError
    from m3kit.media.store import FrameStore

    with FrameStore(tmp_path / "s", image_format="jpeg") as store, \
            pytest.raises(FrameStoreError, match="keeps jpeg frames"):
        write_frames(small_video, tmp_path / "o", "uniform", 4, store=store, image_format="png")


def _peak_rss_kib(args: list[str]) -> int:
    """Peak resident memory (KiB) of ``m3kit ARGS`` in a child process: ``VmHWM`` of its own
    address space (``ru_maxrss`` would carry the parent's size through the fork)."""
    code = (
        "import re, sys\n"
        "from m3kit.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "status = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1))\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=300, check=True)
    return int(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.slow
def test_video_frames_memory_does_not_grow_with_the_count(pattern_video_factory, tmp_path):
    # 40 frames of 1600x1600: 7.7 MB each as RGB, 307 MB if all were held at once.
    video = pattern_video_factory(seconds=1.6, fps=25, width=1600, height=1600, keyint=10)
    few = _peak_rss_kib(["video", "frames", str(video), "--n", "2", "--out", str(tmp_path / "a")])
    many = _peak_rss_kib(["video", "frames", str(video), "--n", "40",
                          "--out", str(tmp_path / "b")])
    assert len(list((tmp_path / "b").glob("frame_*.jpg"))) == 40
    assert many - few < 100 * 1024  # KiB: far below the 300 MB that 38 more held frames take


# -- upper bounds on counts and rates --------------------------------------------------------------


def test_counts_past_the_frame_count_take_every_frame_without_allocating_n():
    assert uniform_indices(5, 10**12) == [0, 1, 2, 3, 4]
    assert uniform_inner_indices(5, 10**12) == [0, 1, 2, 3, 4]
    assert uniform_indices(5, 3) == [0, 2, 4]  # round(linspace(0, 4, 3))
    assert uniform_inner_indices(10, 4) == [2, 4, 6, 8]  # int(i * 10 / 5)


def test_sampling_rate_has_an_upper_bound():
    times = np.arange(10) / 25
    assert fps_indices(times, 1000.0) == list(range(10))
    with pytest.raises(SamplingError, match="at most 1000") as caught:
        fps_indices(times, 1001.0)
    assert caught.value.field == "fps"


def test_probe_rate_and_length_have_upper_bounds(small_video, monkeypatch):
    with pytest.raises(CompositionError, match="at most 240") as caught:
        compose.concatenate([small_video, small_video], fps=241)
    assert caught.value.field == "fps"
    m = compose.concatenate([small_video, small_video], fps=240)  # 2 x 4 s at 240 fps
    assert m.frame_count == 1920
    monkeypatch.setattr(compose, "MAX_PROBE_FRAMES", 150)
    with pytest.raises(CompositionError, match="200 output frames"):
        compose.concatenate([small_video, small_video])  # 2 x 100 frames at 25 fps
    with pytest.raises(CompositionError, match="200 output frames"):
        compose.interleave(small_video, small_video, segments=2)
    with pytest.raises(CompositionError, match="200 output frames"):
        compose.sequence([small_video, small_video])
    assert compose.split_screen(small_video, small_video).frame_count == 100


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"fps": 0}, "fps"),
        ({"fps": -25}, "fps"),
        ({"fps": float("nan")}, "fps"),
        ({"seconds": -1}, "seconds"),
        ({"seconds": 0}, "seconds"),
        ({"width": 0}, "width"),
        ({"keyint": 0}, "keyint"),
        ({"seconds": 2**CODE_BITS, "fps": 2}, "seconds"),
    ],
)
def test_generate_refuses_out_of_range_settings(tmp_path, kwargs, field):
    with pytest.raises(MediaRequestError) as caught:
        write_pattern_video(tmp_path / "g.mp4", **kwargs)
    assert caught.value.field == field and not (tmp_path / "g.mp4").exists()


@pytest.mark.parametrize(("kwargs", "field"), [({"max_side": -3}, "max_side"),
                                               ({"max_side": 0}, "max_side"),
                                               ({"width": -1}, "width")])
def test_resize_sizes_must_be_positive(kwargs, field):
    with pytest.raises(MediaRequestError, match="must be a positive number of pixels") as caught:
        resize_for(**kwargs)
    assert caught.value.field == field
    assert resize_for() is None and resize_for(max_side=5) == Resize(max_side=5)


# -- paths named for what they are -----------------------------------------------------------------


def test_a_symbolic_link_loop_is_named(tmp_path):
    a, b = tmp_path / "a.mp4", tmp_path / "b.mp4"
    a.symlink_to(b)
    b.symlink_to(a)
    with pytest.raises(MediaError, match="symbolic link loop") as caught:
        check_video_path(a)
    assert not isinstance(caught.value, MediaNotFoundError)
    assert "no such file" not in str(caught.value)


def test_a_dangling_link_and_a_nul_byte_are_named(tmp_path):
    link = tmp_path / "gone.mp4"
    link.symlink_to(tmp_path / "missing.mp4")
    with pytest.raises(MediaNotFoundError, match="symbolic link to a missing file"):
        check_video_path(link)
    with pytest.raises(MediaError, match="NUL byte"):
        check_video_path(str(tmp_path / "a\0b.mp4"))


@pytest.mark.parametrize("verb", ["split_screen", "concatenate", "interleave", "sequence"])
def test_every_composition_names_a_symbolic_link_loop(small_video, tmp_path, verb):
    loop = tmp_path / "loop.mp4"
    loop.symlink_to(loop)
    call = {
        "split_screen": lambda: compose.split_screen(small_video, loop),
        "concatenate": lambda: compose.concatenate([small_video, loop]),
        "interleave": lambda: compose.interleave(small_video, loop, segments=2),
        "sequence": lambda: compose.sequence([loop]),
    }[verb]
    with pytest.raises(MediaError, match="symbolic link loop") as caught:
        call()
    assert caught.value.path == str(loop)


# -- one failing frame, whatever the request -------------------------------------------------------


def test_a_damaged_frame_is_named_alike_by_every_request(pattern_video_factory, tmp_path):
    from m3kit.errors import CorruptMediaError
    from m3kit.media.verify import first_undecodable_frame

    video = pattern_video_factory(seconds=8, fps=25, width=320, height=240, keyint=25)
    data = bytearray(video.read_bytes())
    at = int(len(data) * 0.3)
    data[at : at + 3000] = b"\x00" * 3000  # a run of lost bytes inside the packets
    damaged = tmp_path / "damaged.mp4"
    damaged.write_bytes(bytes(data))
    bad, reason = first_undecodable_frame(damaged)  # what ``video info`` reports
    assert bad is not None and 0 < bad < 200 and "does not decode" in reason
    for request in (range(200), range(0, 200, 7), [bad, bad + 30]):
        for skip in (True, False):  # skipping unreferenced frames must not move the index
            with VideoDecoder(damaged, skip_nonref=skip) as decoder, \
                    pytest.raises(CorruptMediaError) as caught:
                decoder.get_frames(list(request))
            assert caught.value.record == f"frame {bad}"
    with VideoDecoder(damaged) as decoder:
        frames = decoder.get_frames(range(bad))  # everything before it decodes
    assert [read_frame_code(f) for f in frames[-3:]] == [bad - 3, bad - 2, bad - 1]
