"""What the loader skips while it reads the sessions, their transcripts and the timelines is the
run's skip record (``m3kit_skipped``, printed by ``m3kit eval``), each skip once and naming
file, record and field, directly and through a memory: the solvers read no file again, so
nothing is found (or dropped) at answer time."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.harness.skips import attachment_skips_of, skipped_of

from .conftest import default_records

TRANSCRIPTS = Path("data/transcripts")


def _damaged(root: Path) -> Path:
    """The tiny release with a transcript line that ends before it starts (P1_D1), an
    unreadable transcript (P2_D1: video only now) and a session no record dates (P1_D2, its
    transcript's start gone: left off the timeline)."""
    p1_d1 = root / TRANSCRIPTS / "person_1" / "p1_d1_gemini_aligned_transcript.json"
    data = json.loads(p1_d1.read_text())
    data["transcript"].append({"start": 5, "end": 4, "person": "A", "text": "backwards"})
    p1_d1.write_text(json.dumps(data))
    (root / TRANSCRIPTS / "person_2" / "p2_d1_gemini_aligned_transcript.json").write_text("{")
    p1_d2 = root / TRANSCRIPTS / "person_1" / "p1_d2_gemini_aligned_transcript.json"
    data = json.loads(p1_d2.read_text())
    data["metadata"] = {}
    p1_d2.write_text(json.dumps(data))
    return root


def test_the_loader_names_each_skip_by_file_record_and_field(
        make_release: Callable[..., Path]) -> None:
    root = _damaged(make_release([r for r in default_records() if r["question_id"] != 4]))
    named = [(Path(s.file).name, s.record, s.field) for s in load_supermemory(root).skipped]
    assert named == [
        ("p1_d1_gemini_aligned_transcript.json", "transcript[3]", "end"),
        ("p1_d2_gemini_aligned_transcript.json", None, "video_start_time_unix"),
        ("p2_d1_gemini_aligned_transcript.json", None, None),  # the whole file
        ("p2_d1_gemini_aligned_transcript.json", None, "transcript"),  # its session: video only
    ]


@pytest.mark.slow  # two end-to-end runs
@pytest.mark.parametrize("memory", [None, "context"])
def test_every_skip_found_while_loading_is_the_runs_once(
        make_release: Callable[..., Path], tmp_path: Path, memory: str | None) -> None:
    root = _damaged(make_release([r for r in default_records() if r["question_id"] != 4]))
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(root), "frames": 2, "memory_fps": 1.0,
                                        "frame_store": str(tmp_path / "frames"),
                                        **({"memory": memory} if memory else {})},
                             log_dir=tmp_path / "logs", cache=False)
    assert log.status == "success", log.error
    assert sorted(str(s.id) for s in log.samples) == ["1", "2", "3"]
    loaded = load_supermemory(root)
    assert skipped_of(log).reasons == [str(s) for s in loaded.skipped]
    assert skipped_of(log).count == 4
    # none found again at answer time (a memory's ingest reads no transcript)
    assert attachment_skips_of(log).records == []
