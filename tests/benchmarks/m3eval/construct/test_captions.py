"""Segmentation and the strict six-key caption schema: malformed replies retried, then rejected."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable

import m3eval_scripted as scripted  # registered by conftest.py
import pytest

from m3kit.benchmarks.m3eval.construct.captions import (
    CAPTION_KEYS,
    CaptionFormatError,
    caption_video,
    parse_caption,
    segment_video,
)

GOOD = {k: f"{k} text" for k in CAPTION_KEYS}


def test_parse_caption_accepts_exactly_six_string_keys() -> None:
    caption = parse_caption(json.dumps(GOOD))
    assert caption.main_storyline == "main_storyline text"
    fenced = parse_caption("```json\n" + json.dumps(GOOD | {"text_symbol": ""}) + "\n```")
    assert fenced.text_symbol == ""


@pytest.mark.parametrize(("reply", "field", "why"), [
    ('{"result": ' + json.dumps(GOOD) + "}", "main_storyline", "missing"),  # wrapper key
    (json.dumps({k: v for k, v in GOOD.items() if k != "tool_prop"}), "tool_prop", "missing"),
    (json.dumps(GOOD | {"caption": "x"}), "caption", "unexpected"),
    (json.dumps(GOOD | {"tool_prop": ["knife"]}), "tool_prop", "not a string"),
    ("Here is the JSON: " + json.dumps(GOOD), None, "not one JSON object"),
    ("[]", None, "not an object"),
])
def test_parse_caption_rejects_malformed(reply: str, field: str | None, why: str) -> None:
    with pytest.raises(CaptionFormatError, match=why) as info:
        parse_caption(reply, path="v.mp4", record="batch 0")
    assert info.value.field == field
    assert str(info.value).startswith("v.mp4: record batch 0")


def test_segment_video_tiles_the_video_in_order(pattern_video_factory: Callable) -> None:
    video = pattern_video_factory()  # 100 frames, 4 s at 25 fps
    batches = segment_video(video, batches=4, frames_per_batch=3)
    assert [b.index for b in batches] == [0, 1, 2, 3]
    frames = [i for b in batches for i in b.frame_indices]
    # 12 uniform picks over frames 0..99: round(linspace(0, 99, 12)) = 0, 9, 18, ..., 99.
    assert frames == [round(j * 99 / 11) for j in range(12)]
    assert all(len(b.frame_indices) == 3 for b in batches)
    assert batches[0].start == 0.0 and batches[-1].end == pytest.approx(99 / 25)
    assert all(a.end < b.start for a, b in itertools.pairwise(batches))


def test_caption_video_retries_a_malformed_reply(pattern_video_factory: Callable) -> None:
    backend, script = scripted.scripted_backend()
    result = caption_video(pattern_video_factory(), backend, batches=2, frames_per_batch=2,
                           max_side=64)
    # The first reply wraps the object in "result": asked again, the second reply is good.
    assert [b.attempts for b in result.batches] == [2, 1]
    assert script.calls["caption"] == 3
    assert result.rejected == []
    assert "teal apron" in result.text()
    assert result.context("Video 1").startswith("Video 1 (frame-batch captions")


def test_caption_video_rejects_after_max_attempts(pattern_video_factory: Callable) -> None:
    backend, script = scripted.scripted_backend(always_malformed_captions=True)
    result = caption_video(pattern_video_factory(), backend, batches=2, frames_per_batch=2,
                           max_attempts=3, max_side=64)
    assert result.batches == []
    assert [f.attempts for f in result.rejected] == [3, 3]
    assert script.calls["caption"] == 6
    assert "missing" in result.rejected[0].reason
    assert '"result"' in result.rejected[0].last_output
