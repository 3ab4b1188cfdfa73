"""Video-MME-v2 through a memory (``m3kit eval videomme_v2 --memory rag``): each video's frames
and subtitle sentences are ingested once under the video's id, every question is answered by the
memory, and the run is scored like any other."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.videomme_v2.score import scores_from_log
from m3kit.benchmarks.videomme_v2.subtitles import SubtitleSegment
from m3kit.benchmarks.videomme_v2.task import subtitle_events
from m3kit.cli.main import main
from m3kit.report.logs import read_samples
from m3kit.schema import read_record

from .conftest import write_release


def test_subtitle_sentences_become_timed_text_events() -> None:
    sentences = [SubtitleSegment(text="The kettle is red.", start_time=0.5, end_time=1.25),
                 SubtitleSegment(text="Then it is blue.", start_time=2.0, end_time=3.0)]
    events = subtitle_events("007", sentences)
    assert [(e.id, e.kind, e.time, e.text) for e in events] == [
        ("007#sub0", "text", 0.5, "The kettle is red."),
        ("007#sub1", "text", 2.0, "Then it is blue."),
    ]


def test_rag_memory_answers_every_question_from_frames_and_subtitles(
    tmp_path: Path, release_video: Path
) -> None:
    data = write_release(tmp_path / "rel", release_video)
    log = run_benchmark_task("videomme_v2", "m3kit/builtin", memory="rag",
                             model_args={"ocr": False},
                             task_args={"data": str(data), "subtitles": "concat", "frames": 2},
                             log_dir=tmp_path / "logs", cache=False)
    assert log.status == "success"
    assert log.eval.metadata["m3kit_memory"] == "rag"
    assert len(log.samples) == 16
    records = {str(s.id): read_record(s.metadata) for s in log.samples}
    assert all(r is not None and r.memory == "rag" and r.failure is None
               for r in records.values())
    # one index per video: only the first question of a video pays for ingesting it
    ingested = {qid[:3] for qid, r in records.items() if "ingest" in r.seconds}
    assert ingested == {"001", "002", "003", "004"}
    assert sum("ingest" in r.seconds for r in records.values()) == 4
    # the memory retrieved the video's own items: frames (``<video>#<index>``) and subtitle
    # sentences (``<video>#sub<i>``), never another video's
    for qid, record in records.items():
        retrieved = record.usage.retrieved_ids
        assert retrieved and all(i.startswith(f"{qid[:3]}#") for i in retrieved)
    assert any("#sub" in i for r in records.values() for i in r.usage.retrieved_ids)
    # scored like a direct run: every group complete, no failures
    card = scores_from_log(read_samples(log))
    assert card.n_groups == 4 and card.n_failed == 0 and card.incomplete_groups == []


def test_memory_and_blind_are_refused_together(tmp_path: Path, release_video: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data = write_release(tmp_path / "rel", release_video)
    code = main(["eval", "videomme_v2", "--model", "m3kit/builtin", "--memory", "rag",
                 "--blind", "-T", f"data={data}", "--log-dir", str(tmp_path / "logs")])
    assert code == 2
    assert "a blind run shows no video, so it takes no memory" in capsys.readouterr().err
    assert not (tmp_path / "logs").exists()
