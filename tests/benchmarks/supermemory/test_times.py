"""Times that name no moment of a recording (issue 23, item 4): a span ``end_time: 1e13``, a
transcript line at ``1e12`` s, a start in the year 318913. Each is skipped at load, named by
file, record and field; the run goes on with every other question, directly and through a
memory, and a failure while one sample's inputs are built fails that sample alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.task import supermemory
from m3kit.schema.evallog import INPUTS_FAILURE, QUESTION_KEY, SKIPPED_KEY, read_record

from .conftest import default_records

P1_D1 = Path("data/transcripts/person_1/p1_d1_gemini_aligned_transcript.json")
P1_D2 = Path("data/transcripts/person_1/p1_d2_gemini_aligned_transcript.json")


def _add_line(root: Path, rel: Path, start: float, end: float, text: str) -> None:
    path = root / rel
    data = json.loads(path.read_text())
    data["transcript"].append({"start": start, "end": end, "person": "A", "text": text,
                               "kind": "speech", "timing_source": "gemini",
                               "alignment_confidence": "high"})
    path.write_text(json.dumps(data))


def _run(root: Path, tmp_path: Path, memory: str | None) -> Any:
    return run_benchmark_task("supermemory", "m3kit/builtin",
                              task_args={"data": str(root), "frames": 2, "memory_fps": 1.0,
                               "frame_store": str(tmp_path / "frames"),
                               **({"memory": memory} if memory else {})},
                              log_dir=tmp_path / f"logs-{memory}", cache=False)


def _answered(log: Any) -> list[str]:
    assert log.status == "success", log.error
    for sample in log.samples:
        record = read_record(sample.metadata)
        assert sample.error is None and record is not None and record.failure is None, (
            sample.id, record)
        assert sample.output.completion.startswith("Ranking: ")
    return sorted(str(s.id) for s in log.samples)


def test_a_span_past_a_day_is_its_record_skip(make_release: Callable[..., Path]) -> None:
    records = default_records()
    # question 4 is on the transcript-only P1_D2: no video duration bounds it
    records[3]["question_evidence"]["time_spans"][0]["end_time"] = 1e13
    loaded = load_supermemory(make_release(records))
    assert [q.id for q in loaded.questions] == ["1", "2", "3"]
    [skip] = loaded.skipped
    assert (skip.record, skip.field) == ("4", "question_evidence.time_spans[0].end_time")
    assert "a day" in skip.reason and skip.file.endswith("all_qa.json")


def _primary_start(record: dict[str, Any]) -> None:
    record["metadata"]["primary_video_start_time"] = record["start_time"] = 1e13  # year 318857


def _span_start(record: dict[str, Any]) -> None:
    record["question_evidence"]["time_spans"][0]["video_start_time_unix"] = 1e13


@pytest.mark.parametrize(("change", "field"), [
    (_primary_start, "metadata.primary_video_start_time"),
    (_span_start, "question_evidence.time_spans[0].video_start_time_unix")])
def test_a_start_off_the_clock_is_its_record_skip(make_release: Callable[..., Path],
                                                  change: Callable[[dict[str, Any]], None],
                                                  field: str) -> None:
    records = default_records()
    change(records[2])
    loaded = load_supermemory(make_release(records))
    assert [q.id for q in loaded.questions] == ["1", "2", "4"]
    assert (loaded.skipped[0].record, loaded.skipped[0].field) == ("3", field)
    assert "1970 to 2100" in loaded.skipped[0].reason
    # no other record dates P2_D1: it is left off the timeline, named, never misplaced
    assert [s.field for s in loaded.skipped[1:]] == ["video_start_time_unix"]


def test_a_transcript_start_off_the_clock_leaves_the_session_off(
        make_release: Callable[..., Path]) -> None:
    records = default_records()[:3]  # no record dates P1_D2: its transcript's start must
    root = make_release(records)
    path = root / P1_D2
    data = json.loads(path.read_text())
    data["metadata"]["start_time_unix"] = 1e15
    path.write_text(json.dumps(data))
    loaded = load_supermemory(root)
    assert [s.video_id for s in loaded.sessions[1]] == ["P1_D1", "P1_D3"]
    assert [(Path(s.file).name, s.field) for s in loaded.skipped] == [
        (path.name, "metadata.start_time_unix"), (path.name, "video_start_time_unix")]


def test_transcript_lines_past_a_day_or_past_the_video_are_skipped(
        make_release: Callable[..., Path]) -> None:
    root = make_release()
    _add_line(root, P1_D1, 1e12, 1e12, "far future")
    _add_line(root, P1_D1, 300.0, 301.0, "past the 20 s video")
    _add_line(root, P1_D2, 7200.0, 7201.0, "two hours in: no video bounds it, a day does")
    loaded = load_supermemory(root)
    assert [(s.record, s.field) for s in loaded.skipped] == [
        ("transcript[3]", "start"), ("transcript[4]", "end")]
    assert "past the end of its video (20 s)" in loaded.skipped[1].reason
    assert {q.id for q in loaded.questions} == {"1", "2", "3", "4"}


@pytest.mark.parametrize("memory", [None, "context"])
def test_huge_times_never_sink_a_run(make_release: Callable[..., Path], tmp_path: Path,
                                     memory: str | None) -> None:
    records = default_records()
    records[3]["question_evidence"]["time_spans"][0]["end_time"] = 1e13
    root = make_release(records)
    _add_line(root, P1_D1, 1e12, 1e12, "far future")
    log = _run(root, tmp_path, memory)
    # every other question answered, person 1's included (memory: its ingest went through)
    assert _answered(log) == ["1", "2", "3"]
    skipped = log.eval.metadata[SKIPPED_KEY]
    assert any("record 4" in s and "end_time" in s for s in skipped)
    assert any("transcript[3]" in s and "p1_d1_gemini" in s for s in skipped)


def test_a_sample_whose_inputs_fail_fails_alone(make_release: Callable[..., Path],
                                                tmp_path: Path) -> None:
    """Past the loader (a question put in the year 318913 by hand): its moment cannot be
    named as a date, and only that sample fails, named; the run and the others go on."""
    task = supermemory(data=str(make_release()), frames=2, cache=False,
                       frame_store=str(tmp_path / "frames"))
    for sample in task.dataset:
        if sample.id == "1":
            sample.metadata[QUESTION_KEY]["time"] = 1e13
    log = run_benchmark_task(task, "m3kit/builtin", log_dir=tmp_path / "logs")
    assert log.status == "success", log.error
    failures = {str(s.id): read_record(s.metadata).failure for s in log.samples}
    assert failures["2"] is None and failures["3"] is None and failures["4"] is None
    assert failures["1"].startswith(f"{INPUTS_FAILURE} ")  # counted wrong, named by its cause
    assert "out of range" in failures["1"]
