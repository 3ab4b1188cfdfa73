"""One definition of the released format (``m3kit.schema.supermemory``): the loader reads every
record with it as leniently as the release needs, and what the synthetic suite writes with it
reads back unchanged."""

from __future__ import annotations

import json
from pathlib import Path

from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.transcripts import read_transcript
from m3kit.schema.supermemory import QARecord, TranscriptLine

from .conftest import DAY, T0, default_records, write_release


def test_the_release_s_loose_values_read_as_they_always_did(tmp_path: Path) -> None:
    records = default_records()
    first = records[0]
    first["question_id"] = " 1 "  # text, padded
    first["subject"] = "1"  # a digit string
    first["choice_types"] = ["Correct", " VAGUE", "incorrect", "incorrect"]
    first["correct_answer"] = 42  # a value no reader uses, kept as given
    first["location"] = "kitchen"  # keys the format does not name are ignored
    first["question_evidence"]["time_spans"][0]["confidence"] = "high"
    first["question_evidence"]["time_span"] = "not read: time_spans are there"
    records[1]["answer_evidence"] = None  # unanswerable: no evidence at all
    records[1]["video_ids"] = "P1_D3"  # not a list: the question's video
    records[2]["question_evidence"] = {"time_span": {"start_time": "00:15", "end_time": "0:16",
                                                     "video_start_time_unix": "not read"}}
    del records[2]["start_time"]  # the metadata's start is the video's
    root = write_release(tmp_path, records, videos=False)
    loaded = load_supermemory(root / "data" / "json" / "all_qa.json")
    assert loaded.skipped == []
    one, two, three = loaded.questions[:3]
    assert one.id == "1" and one.metadata["subject"] == 1
    assert one.metadata["choice_types"] == ["correct", "vague", "incorrect", "incorrect"]
    assert one.metadata["correct_answer"] == 42
    assert two.metadata["answer_spans"] == [] and two.metadata["video_ids"] == ["P1_D3"]
    assert three.time == T0 + 0.5 * 86400 + 16.0


def test_what_the_suite_writes_reads_back_unchanged(tmp_path: Path) -> None:
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    suite = build_ego_suite(tmp_path / "suite", EgoSuiteConfig(
        seed=1, persons=1, sessions=2, segments=8, size=128, fps=1.0,
        answerable_per_skill=1, unanswerable=1))
    for raw in json.loads(suite.all_qa.read_text()):
        assert QARecord.model_validate(raw).model_dump(mode="json") == raw
    aligned = next(suite.root.glob("data/transcripts/person_1/*_gemini_aligned_transcript.json"))
    lines = json.loads(aligned.read_text())["transcript"]
    assert [TranscriptLine.model_validate(line).model_dump(mode="json") for line in lines] == \
        lines
    read = read_transcript(aligned)
    assert read.skipped == [] and len(read.lines) == len(lines)
    assert load_supermemory(suite.root).skipped == []


def test_a_session_holding_only_evidence_is_placed_by_its_stated_start(tmp_path: Path) -> None:
    # P1_D3's Whisper transcript states no start and no question is asked on it: only the
    # evidence item's start (which the annotation pipeline writes) places it on the clock
    first = default_records()[0]
    first["answer_evidence"]["evidence_list"] = [
        {"video_id": "P1_D3", "time_span": {"start_time": 1.0, "end_time": 2.0}}]
    unplaced = load_supermemory(write_release(tmp_path / "unplaced", [first]))
    assert [s.video_id.upper() for s in unplaced.sessions[1]] == ["P1_D1", "P1_D2"]
    assert any("P1_D3" in str(s) for s in unplaced.skipped)
    first["answer_evidence"]["evidence_list"][0]["video_start_time_unix"] = T0 - DAY
    placed = load_supermemory(write_release(tmp_path / "placed", [first]))
    assert [(s.video_id.upper(), s.start) for s in placed.sessions[1]] == [
        ("P1_D3", T0 - DAY), ("P1_D1", T0), ("P1_D2", T0 + DAY)]
    assert not any("P1_D3" in str(s) for s in placed.skipped)  # (person 2 has no question)
    first["answer_evidence"]["evidence_list"].append(
        {"video_id": "P1_D3", "time_span": {"start_time": 3.0, "end_time": 4.0},
         "video_start_time_unix": T0 - DAY + 1})
    clash = load_supermemory(write_release(tmp_path / "clash", [first]))
    assert clash.questions == []
    (skip,) = [s for s in clash.skipped if s.record == "1"]
    assert skip.field == "answer_evidence.evidence_list[1].video_start_time_unix"
