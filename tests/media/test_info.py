"""video_info(): metadata measured from the packets, honest where the header is not."""

from __future__ import annotations

import av
import pytest

from m3kit.media import video_info
from m3kit.media.generate import write_pattern_video


def test_video_info_matroska(pancake):
    info = video_info(pancake)
    assert (info.width, info.height) == (426, 240)
    assert info.codec == "h264" and info.container.startswith("matroska")
    assert info.frame_count == 310
    assert info.fps == pytest.approx(30.0, abs=1e-6)
    assert info.duration == pytest.approx(10.333, abs=0.01)
    assert info.container_frame_count is None  # Matroska declares no frame count
    assert not info.variable_frame_rate
    assert info.rotation == 0


def test_video_info_counts_frames_of_out_of_order_file(unordered):
    info = video_info(unordered)
    assert info.frame_count == 4 and info.container_frame_count == 4
    assert info.fps == pytest.approx(32.0)


def test_video_info_keyframe_spacing(bframe_video):
    info = video_info(bframe_video)
    assert info.frame_count == 1000 and info.keyframe_count == 20
    assert info.mean_keyframe_interval == pytest.approx(50.0)
    assert info.summary().startswith("bframes.mp4: 192x144 h264")


def test_video_info_reports_truncation(truncated_mkv):
    info = video_info(truncated_mkv)
    assert 0 < info.frame_count < 310
    assert any("truncated" in w for w in info.warnings)


def test_video_info_variable_frame_rate(tmp_path):
    path = tmp_path / "vfr.mkv"
    gaps = [0, 40, 80, 200, 240, 400, 440]  # milliseconds: irregular spacing
    with av.open(str(path), mode="w") as container:
        stream = container.add_stream("libx264", rate=25)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.time_base = av.time_base and __import__("fractions").Fraction(1, 1000)
        for i, ms in enumerate(gaps):
            frame = av.VideoFrame(64, 48, "yuv420p")
            for plane in frame.planes:
                plane.update(bytes([i * 30 % 256]) * plane.buffer_size)
            frame.pts = ms
            frame.time_base = __import__("fractions").Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode(None):
            container.mux(packet)
    info = video_info(path)
    assert info.frame_count == len(gaps)
    assert info.variable_frame_rate
    # measured rate: 6 intervals over 0.44 s
    assert info.fps == pytest.approx(6 / 0.44, rel=1e-3)


def test_video_info_rotation(tmp_path):
    path = tmp_path / "rotated.mp4"
    write_pattern_video(path, seconds=0.4, fps=10, width=64, height=48)
    rotated = tmp_path / "rotated90.mp4"
    with av.open(str(path)) as src, av.open(str(rotated), mode="w") as dst:
        in_stream = src.streams.video[0]
        out_stream = dst.add_stream_from_template(in_stream)
        out_stream.set_display_rotation(90)
        for packet in src.demux(in_stream):
            if packet.dts is None:
                continue
            packet.stream = out_stream
            dst.mux(packet)
    assert video_info(rotated).rotation in (90, 270)
