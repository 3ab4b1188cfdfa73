"""Perception by a model: the VLM detector's boxes back in pixels, a malformed reply named and
then skipped by the pipeline, the captioner and summariser prompts carrying their evidence."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pytest
from PIL import Image

from m3kit.models.backend import BackendRequest, MalformedReplyError
from m3kit.models.perceivers import BackendClipCaptioner, BackendDetector, BackendSummarizer
from m3kit.perception.captions import ClipEvidence
from m3kit.perception.pipeline import (
    FrameInput,
    Perceivers,
    PerceptionConfig,
    PerceptionJob,
    run_jobs,
)


@dataclass
class Scripted:
    """A ``TextBackend`` replaying replies in order and keeping every request."""

    replies: list[str]
    name: str = "scripted"
    requests: list[BackendRequest] = field(default_factory=list)

    def complete(self, request: BackendRequest) -> str:
        self.requests.append(request)
        return self.replies.pop(0)


def test_detector_boxes_come_back_in_pixels():
    reply = {"objects": [{"label": "Mug", "box": [0.5, 0.25, 0.75, 0.5]}, {"label": " ",
                                                                            "box": [0, 0, 1, 1]}]}
    backend = Scripted([json.dumps(reply)])
    (found,) = BackendDetector(backend).detect([np.zeros((100, 200, 3), np.uint8)])
    assert [(d.label, d.box) for d in found] == [("mug", (100.0, 25.0, 150.0, 50.0))]
    assert backend.requests[0].stage == "detect" and len(backend.requests[0].images) == 1


def test_malformed_detector_reply_is_named_and_skipped_by_the_pipeline(tmp_path):
    with pytest.raises(MalformedReplyError, match="detect"):
        BackendDetector(Scripted(["no idea", "still no idea"])).detect(
            [np.zeros((8, 8, 3), np.uint8)])
    path = tmp_path / "f.png"
    Image.new("RGB", (16, 16)).save(path)
    detector = BackendDetector(Scripted(["garbage", "garbage"]))
    (result,) = run_jobs([PerceptionJob(id="j", frames=(FrameInput(id="f", path=str(path),
                                                                   time=0.0),))],
                         PerceptionConfig(), perceivers=Perceivers(detector=detector))
    assert [p.id for p in result.frames] == ["f"] and not result.frames[0].detections
    (skip,) = result.skipped
    assert skip.record == "f" and skip.field == "detect" and "MalformedReplyError" in skip.reason


def test_captioner_sends_frames_and_transcript(tmp_path):
    frames = []
    for n in range(40):
        path = tmp_path / f"{n}.png"
        Image.new("RGB", (8, 8)).save(path)
        frames.append(str(path))
    backend = Scripted(["I open the fridge."])
    clip = ClipEvidence(clip_id="clip-7", start=0.0, end=30.0, frames=tuple(frames),
                        transcript="where is the milk")
    assert BackendClipCaptioner(backend, max_frames=8).caption_clip(clip) == "I open the fridge."
    (request,) = backend.requests
    assert len(request.images) == 8 and "where is the milk" in request.prompt
    assert request.item == "clip-7"


def test_summarizer_lists_its_texts():
    backend = Scripted(["A morning in the kitchen."])
    summary = BackendSummarizer(backend).summarize(["made tea", "washed a cup"], "hour")
    assert summary == "A morning in the kitchen."
    assert "- made tea\n- washed a cup" in backend.requests[0].prompt
    assert "hour-level" in backend.requests[0].prompt
