"""The labels that name objects, places and notes are read by the offline OCR (real RapidOCR
on frames decoded from the rendered mp4): what lets ``m3kit/builtin`` answer through a memory."""

from __future__ import annotations

import pytest

from m3kit.media.decode import decode_frames
from m3kit.schema.supermemory import video_path
from m3kit.synth.ego import EgoSuite


@pytest.fixture(scope="module")
def reader():
    from m3kit.perception.ocr import RapidTextReader

    return RapidTextReader()


def test_ocr_reads_a_placement_and_a_note(ego_suite: EgoSuite, reader) -> None:
    person = ego_suite.person(2)
    session = person.sessions[0]
    fps = ego_suite.manifest.config.fps
    placement = next(s for s in session.scenes if s.kind == "placement")
    note = next(s for s in session.scenes if s.kind == "note")
    # the last frame of each scene: the object has come to rest
    frames = decode_frames(ego_suite.root / video_path(2, session.video_id),
                           [round(placement.end * fps) - 1, round(note.end * fps) - 1])
    placed, noted = ([line.text.upper() for line in lines] for lines in reader.read(frames))
    assert placement.label in placed  # e.g. "GARDEN BENCH"
    assert placement.caption in placed  # e.g. "PUT THE KEYS HERE"
    assert placement.object.upper() in placement.caption
    assert note.note in noted  # e.g. "RICE: 3 CUPS"
