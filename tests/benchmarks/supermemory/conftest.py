"""A tiny SuperMemory-VQA release, written by the tests in the released layout.

Person 1 has three sessions on three days: ``P1_D1`` (a 20 s video at 2 fps and an aligned
transcript), ``P1_D2`` (transcript only, as one session of the release), ``P1_D3`` (video and a
Whisper transcript only). Person 2 has one session ``P2_D1`` (video and aligned transcript).

``P1_D1``'s transcript says where the kettle is at 3 s, and plants a fact after the first
question's moment (``LATE_FACT`` at 14-15 s, the question at 10 s); its video turns white from
second 12 (``LATE_FRAME_FROM``), so a frame after the cut is told apart by its pixels too.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from m3kit.media.encode import VideoWriter

DAY = 86400.0
T0 = 1_700_000_000.0  # person 1's first session starts here (unix s)
FPS = 2
SECONDS = 20
SIDE = 64
ABSTAIN = "This question can not be answered."
EARLY_FACT = "I put the red kettle in the pantry."
LATE_FACT = "The zebra key is hidden under the doormat."
LATE_FRAME_FROM = 12.0  # P1_D1 frames are white from here on
QUESTION_CUT = 10.0  # question 1's moment on P1_D1's own clock


def write_video(path: Path, *, seconds: int = SECONDS, white_from: float | None = None) -> None:
    """A ``SIDE``x``SIDE`` H.264 video at ``FPS``: grey frames whose shade grows with time,
    white from ``white_from`` s."""
    with VideoWriter(path, SIDE, SIDE, FPS) as writer:
        for n in range(seconds * FPS):
            t = n / FPS
            shade = 255 if white_from is not None and t >= white_from else 40 + 4 * n
            writer.write(np.full((SIDE, SIDE, 3), min(shade, 255), dtype=np.uint8))


def aligned(lines: list[tuple[float, float, str | None, str]], **meta: Any) -> dict[str, Any]:
    return {"metadata": dict(meta), "transcript": [
        {"start": s, "end": e, "person": p, "text": t, "kind": "speech",
         "timing_source": "gemini", "alignment_confidence": "high"} for s, e, p, t in lines]}


def record(qid: int, subject: int, video: str, start: float, *, skill: str,
           choices: list[str], types: list[str], gold: int, answerable: bool,
           span: tuple[float, float], answer_spans: list[tuple[str, float, float]] = (),
           question: str = "Where is the kettle?") -> dict[str, Any]:
    """One ``all_qa.json`` record."""
    return {
        "question_id": qid, "subject": subject, "question": question,
        "choices": choices, "choice_types": types, "correct_answer": choices[gold],
        "correct_option_index": gold, "is_answerable": answerable,
        "metadata": {"skill": skill, "primary_video_id": video,
                     "primary_video_start_time": start},
        "video_ids": [video], "start_time": start,
        "question_evidence": {"time_spans": [{"start_time": span[0], "end_time": span[1],
                                              "video_id": video,
                                              "video_start_time_unix": start}]},
        "answer_evidence": {"evidence_list": [
            {"video_id": v, "time_span": {"start_time": a, "end_time": b}}
            for v, a, b in answer_spans], "text": "evidence"},
    }


KETTLE = ["In the pantry.", "Somewhere in the kitchen.", ABSTAIN, "In the garage."]
KETTLE_TYPES = ["correct", "vague", "incorrect", "incorrect"]


def default_records() -> list[dict[str, Any]]:
    """Four questions: 1 answerable on P1_D1 at 10 s (gold A, vague B, abstain C); 2
    unanswerable on P1_D3 (gold = abstain, D); 3 answerable on P2_D1 (gold D); 4 answerable on
    the transcript-only P1_D2 (gold B)."""
    return [
        record(1, 1, "P1_D1", T0, skill="object_location_memory", choices=KETTLE,
               types=KETTLE_TYPES, gold=0, answerable=True, span=(8.0, QUESTION_CUT),
               answer_spans=[("P1_D1", 2.0, 4.0)]),
        record(2, 1, "P1_D3", T0 + 2 * DAY, skill="conversational_memory",
               choices=["Blue.", "Green.", "Red.", ABSTAIN],
               types=["incorrect", "incorrect", "incorrect", "correct"], gold=3,
               answerable=False, span=(5.0, 6.0), question="What colour was the car?"),
        record(3, 2, "P2_D1", T0 + 0.5 * DAY, skill="visual_recall",
               choices=["A cat.", ABSTAIN, "A vague animal.", "A dog."],
               types=["incorrect", "incorrect", "vague", "correct"], gold=3,
               answerable=True, span=(15.0, 16.0), answer_spans=[("P2_D1", 1.0, 2.0)],
               question="Which pet did I see?"),
        record(4, 1, "P1_D2", T0 + DAY, skill="intent_recall",
               choices=["Buy milk.", "Call the plumber.", "Go running.", ABSTAIN],
               types=["vague", "correct", "incorrect", "incorrect"], gold=1,
               answerable=True, span=(10.0, 12.0),
               answer_spans=[("P1_D1", 2.0, 4.0), ("P1_D2", 1.0, 3.0)],
               question="What did I plan to do?"),
    ]


def write_release(root: Path, records: list[dict[str, Any]] | None = None, *,
                  videos: bool = True) -> Path:
    """The release under ``root`` (``root/data/...``); returns ``root``."""
    data = root / "data"
    (data / "json").mkdir(parents=True, exist_ok=True)
    (data / "json" / "all_qa.json").write_text(
        json.dumps(default_records() if records is None else records, indent=1))
    t1 = data / "transcripts" / "person_1"
    t2 = data / "transcripts" / "person_2"
    t1.mkdir(parents=True, exist_ok=True)
    t2.mkdir(parents=True, exist_ok=True)
    (t1 / "p1_d1_gemini_aligned_transcript.json").write_text(json.dumps(aligned([
        (2.0, 3.0, "User", EARLY_FACT), (6.0, 7.0, "A", "Nice weather today."),
        (14.0, 15.0, "A", LATE_FACT)])))
    (t1 / "p1_d2_gemini_aligned_transcript.json").write_text(json.dumps(aligned([
        (1.0, 3.0, "User", "Tomorrow I have to call the plumber."),
        (20.0, 22.0, "User", "Now I will go running.")], start_time_unix=T0 + DAY)))
    (t1 / "p1_d3_whisper_transcript.json").write_text(json.dumps({"segments": [
        {"start": 1.0, "end": 2.0, "text": "Let us drive home.", "speaker": "SPEAKER_00"}]}))
    (t2 / "p2_d1_gemini_aligned_transcript.json").write_text(json.dumps(aligned([
        (1.0, 2.0, "User", "Look, a dog!")])))
    if videos:
        write_video(data / "video" / "Person_1" / "P1_D1.mp4", white_from=LATE_FRAME_FROM)
        write_video(data / "video" / "Person_1" / "P1_D3.mp4")
        write_video(data / "video" / "Person_2" / "P2_D1.mp4")
    return root


@pytest.fixture(scope="session")
def release_videos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The three session videos, encoded once per test session."""
    root = tmp_path_factory.mktemp("sm_videos")
    write_video(root / "P1_D1.mp4", white_from=LATE_FRAME_FROM)
    write_video(root / "P1_D3.mp4")
    write_video(root / "P2_D1.mp4")
    return root


@pytest.fixture
def make_release(tmp_path: Path, release_videos: Path
                 ) -> Callable[..., Path]:
    """``make_release(records=None, videos=True)``: a fresh release under ``tmp_path``, the
    videos copied from ``release_videos``."""
    counter = iter(range(1000))

    def make(records: list[dict[str, Any]] | None = None, *, videos: bool = True) -> Path:
        root = write_release(tmp_path / f"release{next(counter)}", records, videos=False)
        if videos:
            for name, person in (("P1_D1", 1), ("P1_D3", 1), ("P2_D1", 2)):
                target = root / "data" / "video" / f"Person_{person}" / f"{name}.mp4"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes((release_videos / f"{name}.mp4").read_bytes())
        return root

    return make


@pytest.fixture
def records() -> list[dict[str, Any]]:
    return copy.deepcopy(default_records())
