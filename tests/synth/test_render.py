"""Rendered sources show what their scripts say: actor colours where the script puts the actor,
captions only on captioned beats, readable by OCR."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

from m3kit.media.decode import VideoDecoder
from m3kit.media.info import video_info
from m3kit.synth import generate_script, render_script
from m3kit.synth.draw import FrameDrawer, actor_pose, layout
from m3kit.synth.render import rendered_path


@pytest.fixture(scope="module")
def script():
    return generate_script(5, beats=8, beat_seconds=1.0, fps=10)


@pytest.fixture(scope="module")
def video(script, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_script(script, tmp_path_factory.mktemp("synth_render"))


def test_video_has_the_script_timing(script, video):
    info = video_info(video)
    assert (info.width, info.height) == (320, 240)
    assert info.frame_count == script.frame_count == 80
    assert info.fps == pytest.approx(10.0, abs=1e-3)
    assert video.with_suffix(".script.json").exists()


def test_actor_colour_at_its_scripted_position(script, video):
    drawer = FrameDrawer(script)
    # the middle frame of every beat
    frames = [b * script.frames_per_beat + script.frames_per_beat // 2 for b in range(8)]
    with VideoDecoder(video) as dec:
        images = dec.get_frames(frames)
    for index, image in zip(frames, images, strict=True):
        event = script.events[script.beat_of_frame(index)]
        pose = drawer.pose(index)
        x, y = round(pose.x), round(pose.y)
        patch = image[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 3).astype(int)
        want = np.array(script.actor(event.actor).rgb)
        assert np.abs(patch.mean(axis=0) - want).max() < 30, (index, event.action)


def test_pose_follows_the_action():
    g = layout(320, 240)
    assert actor_pose("moves_right", 0, g).x < actor_pose("moves_right", 1, g).x
    assert actor_pose("moves_left", 0, g).x > actor_pose("moves_left", 1, g).x
    assert actor_pose("jumps", 0.25, g).y < actor_pose("jumps", 0, g).y  # up is smaller y
    assert actor_pose("grows", 1, g).scale > actor_pose("grows", 0, g).scale
    assert actor_pose("spins", 0.5, g).angle == 360
    assert actor_pose("enters", 0, g).x < 0 and actor_pose("exits", 1, g).x > 320


def test_caption_bar_has_text_only_on_captioned_beats(script, video):
    g = layout(script.width, script.height)
    frames = [b * script.frames_per_beat + 3 for b in range(8)]
    with VideoDecoder(video) as dec:
        images = dec.get_frames(frames)
    for index, image in zip(frames, images, strict=True):
        bar = image[g.caption_top + 2 :, :]
        bright = int((bar.max(axis=2) > 128).sum())
        event = script.events[script.beat_of_frame(index)]
        if event.caption is None:
            assert bright == 0, index
        else:
            assert bright > 200, index


def test_ocr_reads_the_caption_and_nothing_on_silent_beats(script, video):
    rapidocr = pytest.importorskip("rapidocr")
    engine = rapidocr.RapidOCR(params={"Global.log_level": "error"})
    spoken = script.channel("text")[0]
    silent = script.channel("visual")[0]
    with VideoDecoder(video) as dec:
        said, quiet = dec.get_frames([spoken.index * 10 + 5, silent.index * 10 + 5])
    read = engine(said)
    text = " ".join(read.txts or ())
    assert _words(text) == _words(spoken.caption)
    assert not engine(quiet).txts


def test_render_is_cached_by_script_content(script, video):
    before = os.stat(video).st_mtime_ns
    assert render_script(script, video.parent) == video
    assert os.stat(video).st_mtime_ns == before
    other = script.model_copy(update={"seed": script.seed + 1})
    assert rendered_path(other, video.parent) != video


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())
