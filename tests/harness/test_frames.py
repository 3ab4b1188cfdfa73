"""Frame selection on a real video through the frame store: clip spans, the causal cut,
relative paths, inline images."""

from __future__ import annotations

import asyncio
import base64
from pathlib import Path

import pytest

from m3kit.errors import SamplingError
from m3kit.harness.frames import (
    FramePolicy,
    clip_spans,
    select_frames,
    selected_frame_images,
)
from m3kit.media.generate import read_frame_code
from m3kit.media.store import FrameStore


def test_clip_spans_from_metadata_or_k(make_q, probe_video):
    q = make_q(1, probe_video, nback=True, k=4)
    assert clip_spans(q, 0.0, 4.0) == [(0.0, 1.0), (1.0, 2.0), (2.0, 3.0), (3.0, 4.0)]
    q2 = make_q(2, probe_video, nback=True, clips=[[0, 1.5], {"start": 1.5, "end": 4}])
    assert clip_spans(q2, 0.0, 4.0) == [(0.0, 1.5), (1.5, 4.0)]
    bad = make_q(3, probe_video, nback=True, clips=[[0]])
    with pytest.raises(SamplingError, match="clip 0"):
        clip_spans(bad, 0.0, 4.0)


def test_select_frames_uniform_from_the_store(tmp_path, make_q, probe_video):
    store = FrameStore(tmp_path / "store")
    chosen = select_frames(store, make_q(1, probe_video), FramePolicy(n=5))
    assert [f.index for f in chosen] == [0, 25, 50, 74, 99]
    assert all(Path(f.path).is_file() for f in chosen)
    # the stored image is the frame it claims to be
    import numpy as np
    from PIL import Image

    assert read_frame_code(np.asarray(Image.open(chosen[2].path))) == 50
    assert select_frames(store, make_q(1, probe_video), FramePolicy(n=0)) == []


def test_select_frames_never_after_the_question_time(tmp_path, make_q, probe_video):
    store = FrameStore(tmp_path / "store")
    chosen = select_frames(store, make_q(1, probe_video, time=1.0), FramePolicy(n=8))
    assert chosen and max(f.time for f in chosen) <= 1.0
    assert chosen[-1].index == 25  # the frame shown at t = 1.0 s is the last one
    # without the causal cut (a memory's stream), the whole video is sampled
    stream = select_frames(store, make_q(1, probe_video, time=1.0), FramePolicy(n=8),
                           causal=False)
    assert stream[-1].index == 99


def test_relative_paths_resolve_against_the_root(tmp_path, make_q, probe_video):
    store = FrameStore(tmp_path / "store")
    q = make_q(1, Path(probe_video.name))
    assert len(select_frames(store, q, FramePolicy(n=2), root=probe_video.parent)) == 2
    with pytest.raises(Exception) as info:
        select_frames(store, q, FramePolicy(n=2), root=tmp_path)
    assert probe_video.name in str(info.value)


def test_selected_frame_images_are_inline_jpeg(tmp_path, make_q, probe_video):
    store = FrameStore(tmp_path / "store")
    chosen = select_frames(store, make_q(1, probe_video), FramePolicy(n=2))
    content = asyncio.run(selected_frame_images(chosen))
    assert len(content) == 2
    header, data = content[0].image.split(",", 1)
    assert header == "data:image/jpeg;base64"
    assert base64.b64decode(data) == Path(chosen[0].path).read_bytes()
