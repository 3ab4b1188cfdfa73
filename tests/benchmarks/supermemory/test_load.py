"""The SuperMemory-VQA loader: the released layout on one absolute clock, and each bad record
skipped and named (file, record, field)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks.supermemory.load import SuperMemoryError, load_supermemory
from m3kit.benchmarks.supermemory.transcripts import read_transcript
from m3kit.schema import ChoiceRole

from .conftest import DAY, QUESTION_CUT, T0, default_records, write_release


def test_layout_loads_on_one_clock(make_release: Callable[..., Path]) -> None:
    loaded = load_supermemory(make_release())
    assert loaded.skipped == []
    by_id = {q.id: q for q in loaded.questions}
    assert list(by_id) == ["1", "2", "3", "4"]
    q1 = by_id["1"]
    assert q1.time == T0 + QUESTION_CUT  # the video's start + the largest span end
    assert q1.answer == "A" and q1.choice("C").role is ChoiceRole.ABSTAIN
    assert q1.choice("B").role is ChoiceRole.VAGUE and q1.choice("D").role is ChoiceRole.WRONG
    assert q1.media[0].path == "video/Person_1/P1_D1.mp4" and q1.media[0].clock_start == T0
    assert by_id["2"].answer == "D" and by_id["2"].metadata["is_answerable"] is False
    assert by_id["4"].media == []  # the transcript-only session
    assert by_id["4"].metadata["video_starts"] == {"P1_D1": T0, "P1_D2": T0 + DAY}
    person = loaded.sessions[1]
    assert [s.video_id for s in person] == ["P1_D1", "P1_D2", "P1_D3"]
    assert [s.start for s in person] == [T0, T0 + DAY, T0 + 2 * DAY]
    assert person[1].video is None and person[1].transcript_kind == "aligned"
    assert person[2].transcript_kind == "whisper"  # no aligned file: the Whisper one
    assert person[0].duration == pytest.approx(20.0)


def test_the_json_alone_loads_for_scoring(tmp_path: Path) -> None:
    root = write_release(tmp_path, videos=False)
    loaded = load_supermemory(root / "data" / "json" / "all_qa.json")
    assert loaded.root is None and len(loaded.questions) == 4 and loaded.skipped == []


def _skip(make_release: Callable[..., Path], change: Callable[[list[dict[str, Any]]], None]
          ) -> tuple[list[str], list[tuple[str | None, str | None]]]:
    records = default_records()
    change(records)
    loaded = load_supermemory(make_release(records))
    return [q.id for q in loaded.questions], [(s.record, s.field) for s in loaded.skipped]


def _set(n: int, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def change(records: list[dict[str, Any]]) -> None:
        target = records[n]
        *path, last = key.split(".")
        for part in path:
            target = target[part]
        target[last] = value
    return change


@pytest.mark.parametrize(("change", "field"), [
    (_set(0, "choices", ["a", "b", "This question can not be answered."]), "choices"),
    (_set(0, "choices", ["a", "b", "c", "d"]), "choices"),  # no abstain option
    (_set(0, "correct_option_index", 4), "correct_option_index"),
    (_set(0, "is_answerable", False), "is_answerable"),
    (_set(0, "metadata.skill", "cooking"), "metadata.skill"),
    (_set(0, "choice_types", ["correct", "vague", "odd", "incorrect"]), "choice_types[2]"),
    (_set(0, "question_evidence.time_spans", [{"start_time": 8, "end_time": 25,
                                               "video_id": "P1_D1"}]),
     "question_evidence.time_spans[0].end_time"),  # past the 20 s video
    (_set(0, "answer_evidence.evidence_list", [{"video_id": "P1_D1",
                                               "time_span": {"start_time": 1,
                                                             "end_time": 40}}]),
     "answer_evidence.evidence_list[0].end_time"),
    (_set(0, "metadata.primary_video_id", "P1_D9"), "question_evidence.time_spans"),
    (_set(0, "start_time", T0 + 5), "start_time"),
])
def test_each_bad_record_is_skipped_and_named(make_release, change, field) -> None:
    kept, skipped = _skip(make_release, change)
    assert kept == ["2", "3", "4"]
    # the only record giving P1_D1's start is gone: that session is named too, not guessed
    assert [s for s in skipped if s[0] is not None] == [("1", field)]
    assert [s for s in skipped if s[0] is None] in ([], [(None, "video_start_time_unix")])


def test_unknown_question_video_is_skipped(make_release) -> None:
    def change(records: list[dict[str, Any]]) -> None:
        records[0]["metadata"]["primary_video_id"] = "P1_D9"
        records[0]["question_evidence"]["time_spans"][0]["video_id"] = "P1_D9"
        records[0]["video_ids"] = ["P1_D9"]
        records[0]["answer_evidence"]["evidence_list"] = []
    kept, skipped = _skip(make_release, change)
    assert kept == ["2", "3", "4"]
    # P1_D1's start was given by question 1 alone: that session is named as unplaced
    assert skipped == [(None, "video_start_time_unix"), ("1", "metadata.primary_video_id")]


def test_duplicate_ids_keep_the_first(make_release) -> None:
    kept, skipped = _skip(make_release, lambda r: r.append(dict(r[1])))
    assert kept == ["1", "2", "3", "4"]
    assert skipped == [("2", "question_id")]


def test_conflicting_start_times_never_shift_the_timeline(make_release) -> None:
    def change(records: list[dict[str, Any]]) -> None:
        extra = json.loads(json.dumps(records[0]))
        extra["question_id"] = 5
        extra["metadata"]["primary_video_start_time"] = extra["start_time"] = T0 + 60
        extra["question_evidence"]["time_spans"][0]["video_start_time_unix"] = T0 + 60
        records.append(extra)
    kept, skipped = _skip(make_release, change)
    assert kept == ["1", "2", "3", "4"]
    assert skipped == [("5", "metadata.primary_video_start_time")]


def test_legacy_time_span_in_minutes_and_seconds(make_release) -> None:
    def change(records: list[dict[str, Any]]) -> None:
        records[0]["question_evidence"] = {"time_span": {"start_time": "00:08",
                                                         "end_time": "00:10"}}
    loaded = load_supermemory(make_release(_applied(change)))
    assert loaded.skipped == []
    assert loaded.questions[0].time == T0 + 10


def _applied(change: Callable[[list[dict[str, Any]]], None]) -> list[dict[str, Any]]:
    records = default_records()
    change(records)
    return records


def test_missing_and_malformed_transcripts_are_named(make_release) -> None:
    root = make_release()
    folder = root / "data" / "transcripts" / "person_2"
    (folder / "p2_d1_gemini_aligned_transcript.json").write_text("{not json")
    aligned = root / "data" / "transcripts" / "person_1" / "p1_d1_gemini_aligned_transcript.json"
    data = json.loads(aligned.read_text())
    data["transcript"].append({"start": 5, "end": 4, "person": "A", "text": "backwards"})
    aligned.write_text(json.dumps(data))
    loaded = load_supermemory(root)
    assert [q.id for q in loaded.questions] == ["1", "2", "3", "4"]  # no question lost
    named = {(Path(s.file).name, s.record, s.field) for s in loaded.skipped}
    assert ("p1_d1_gemini_aligned_transcript.json", "transcript[3]", "end") in named
    assert any(name == "p2_d1_gemini_aligned_transcript.json" and field == "transcript"
               for name, _, field in named)
    assert loaded.session(2, "P2_D1").transcript is None  # video only now


def test_a_session_without_a_known_start_is_left_off(make_release) -> None:
    records = [r for r in default_records() if r["question_id"] != 4]
    root = make_release(records)
    aligned = root / "data" / "transcripts" / "person_1" / "p1_d2_gemini_aligned_transcript.json"
    data = json.loads(aligned.read_text())
    data["metadata"] = {}
    aligned.write_text(json.dumps(data))
    loaded = load_supermemory(root)
    assert [s.video_id for s in loaded.sessions[1]] == ["P1_D1", "P1_D3"]
    assert [s.field for s in loaded.skipped] == ["video_start_time_unix"]


def test_whisper_speakers_are_not_question_people(tmp_path: Path) -> None:
    path = tmp_path / "x_whisper_transcript.json"
    path.write_text(json.dumps({"segments": [{"start": 0, "end": 1, "text": "hi",
                                              "speaker": "SPEAKER_00"}]}))
    read = read_transcript(path, "whisper")
    assert read.lines[0].person is None and read.skipped == []


def test_unreadable_json_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "all_qa.json"
    path.write_bytes(b"[\xff]")
    with pytest.raises(SuperMemoryError, match="UTF-8"):
        load_supermemory(path)
    with pytest.raises(SuperMemoryError, match="all_qa.json"):
        load_supermemory(tmp_path / "nowhere")


def test_an_undecodable_video_leaves_its_transcript(make_release) -> None:
    root = make_release()
    (root / "data" / "video" / "Person_2" / "P2_D1.mp4").write_bytes(b"not a video at all")
    loaded = load_supermemory(root)
    assert [(Path(s.file).name, s.field) for s in loaded.skipped] == [("P2_D1.mp4", "video")]
    question = next(q for q in loaded.questions if q.id == "3")
    assert question.media == []  # answered from its transcript alone
    assert loaded.session(2, "P2_D1").transcript is not None


def test_a_broken_aligned_transcript_falls_back_to_whisper(make_release) -> None:
    """Issue 23, item 14: the Whisper file beside a broken aligned one is read, and the broken
    one is named as skipped (it fell back to "video only" before)."""
    root = make_release()
    folder = root / "data" / "transcripts" / "person_1"
    (folder / "p1_d1_gemini_aligned_transcript.json").write_text('{"transcript": [')
    (folder / "p1_d1_whisper_transcript.json").write_text(json.dumps({"segments": [
        {"start": 2.0, "end": 3.0, "text": "I put the red kettle in the pantry.",
         "speaker": "SPEAKER_00"}]}))
    loaded = load_supermemory(root)
    session = loaded.session(1, "P1_D1")
    assert session.transcript_kind == "whisper"
    assert session.transcript == "transcripts/person_1/p1_d1_whisper_transcript.json"
    [skip] = loaded.skipped
    assert Path(skip.file).name == "p1_d1_gemini_aligned_transcript.json"
    assert "p1_d1_whisper_transcript.json is read instead" in skip.reason
    assert not any("video only" in s.reason for s in loaded.skipped)


def test_files_no_suite_manifest_lists_are_named_and_left_out(tmp_path: Path) -> None:
    """Issue 23, item 13: beside a synthetic suite's ``suite.json``, a day it does not list
    (``P1_D3`` of an earlier suite with three days) never joins the person's timeline."""
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    config = EgoSuiteConfig(seed=0, persons=1, sessions=2, segments=8, size=128, fps=1.0,
                            answerable_per_skill=1, unanswerable=1)
    earlier = build_ego_suite(tmp_path / "earlier", config.model_copy(update={"sessions": 3}))
    suite = build_ego_suite(tmp_path / "suite", config)
    stale = ["data/video/Person_1/P1_D3.mp4",
             "data/transcripts/person_1/p1_d3_gemini_aligned_transcript.json",
             "data/transcripts/person_1/p1_d3_whisper_transcript.json"]
    for name in stale:
        (suite.root / name).write_bytes((earlier.root / name).read_bytes())
    loaded = load_supermemory(suite.root)
    assert [s.video_id for s in loaded.sessions[1]] == ["P1_D1", "P1_D2"]
    assert sorted(s.file for s in loaded.skipped) == sorted(str(suite.root / n) for n in stale)
    assert all("not listed in the suite's manifest" in s.reason for s in loaded.skipped)
    # the same files without a manifest are a release's: they count (the earlier behaviour)
    (suite.root / "suite.json").unlink()
    assert [s.video_id for s in load_supermemory(suite.root).sessions[1]] == [
        "P1_D1", "P1_D2", "P1_D3"]
