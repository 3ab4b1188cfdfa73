"""The causal cut on a person's timeline: a fact planted after the question's moment (a
transcript line at 14 s, white frames from 12 s, later sessions on later days) never reaches
the model, directly or through a memory. The cut itself lives below the benchmark
(``harness.frames.select_frames`` with the video's ``clock_start``, ``memory.base.causal_cut``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.task import person_key
from m3kit.benchmarks.supermemory.timeline import person_events, transcript_before
from m3kit.harness.frames import FramePolicy, select_frames
from m3kit.media.image import read_image_rgb
from m3kit.media.store import FrameStore
from m3kit.memory.context import ContextMemory
from m3kit.schema.evallog import read_record

from .conftest import EARLY_FACT, LATE_FACT, LATE_FRAME_FROM, QUESTION_CUT, T0


def _question_one(root: Path):
    loaded = load_supermemory(root)
    return loaded, next(q for q in loaded.questions if q.id == "1")


def test_direct_frames_and_transcript_stop_at_the_question(make_release, tmp_path) -> None:
    loaded, question = _question_one(make_release())
    store = FrameStore(tmp_path / "frames")
    chosen = select_frames(store, question, FramePolicy(policy="uniform", n=32),
                           root=loaded.root)
    assert chosen and max(f.time for f in chosen) <= QUESTION_CUT
    # no white (post-cut) frame among them; the video does turn white later
    assert all(read_image_rgb(f.path).mean() < 250 for f in chosen)
    every = select_frames(store, question, FramePolicy(policy="uniform", n=40),
                          root=loaded.root, causal=False)
    assert any(read_image_rgb(f.path).mean() >= 250 for f in every)
    heard = [e.text for e in transcript_before(loaded.session(1, "P1_D1"), question.time)]
    assert any(EARLY_FACT in t for t in heard) and not any(LATE_FACT in t for t in heard)


def test_memory_sees_only_the_past_of_the_person(make_release, tmp_path) -> None:
    loaded, question = _question_one(make_release())
    store = FrameStore(tmp_path / "frames")
    events = person_events(store, loaded.root, loaded.sessions[1],
                           FramePolicy(policy="fps", fps=1.0, n=1))
    # the stream holds the whole person: the late fact and later days are in it
    assert any(LATE_FACT in e.text for e in events)
    assert max(e.time for e in events) > T0 + 86400
    memory = ContextMemory()
    key = person_key(1)
    asyncio.run(memory.ingest(key, events))
    visible = memory.visible(key, question.time)
    assert visible and all(i.time <= question.time for i in visible)
    assert not any(LATE_FACT in i.text for i in visible)
    assert any(EARLY_FACT in i.text for i in visible)
    assert {i.metadata["session"] for i in visible} == {"P1_D1"}
    frames = [i for i in visible if i.modality == "frame"]
    assert max(i.time for i in frames) - T0 <= QUESTION_CUT < LATE_FRAME_FROM
    retrieved = asyncio.run(memory.retrieve(key, question.text, time=question.time))
    assert {i.id for i in retrieved} <= {i.id for i in visible}


@pytest.mark.parametrize("memory", [None, "context"])
def test_a_run_never_shows_the_planted_fact(make_release, tmp_path, memory) -> None:
    root = make_release()
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(root), "memory_fps": 1.0,
                              "frame_store": str(tmp_path / "frames"),
                              **({"memory": memory} if memory else {})},
                             log_dir=tmp_path / "logs", cache=False, sample_id=[1])
    assert log.status == "success"
    sample = log.samples[0]
    record = read_record(sample.metadata)
    if memory is None:
        text = " ".join(part.text for part in sample.messages[0].content
                        if getattr(part, "text", None))
        assert EARLY_FACT in text and LATE_FACT not in text
        assert record.frame_times and max(record.frame_times) <= QUESTION_CUT
    else:
        ids = record.usage.retrieved_ids
        assert any(i.startswith("P1_D1#speech-00000") for i in ids)  # the early fact
        assert "P1_D1#speech-00002" not in ids  # the planted late fact
        assert all(i.startswith("P1_D1#") for i in ids)  # no later day
        frames = [int(i.rsplit("-", 1)[1]) for i in ids if "#frame-" in i]
        assert frames and max(frames) / 2 <= QUESTION_CUT  # 2 fps
    assert sample.output.completion.startswith("Ranking: ")


def _run_all(root: Path, tmp_path: Path, memory: str, config: dict[str, object], name: str):
    log = run_benchmark_task("supermemory", "m3kit/builtin",
                             task_args={"data": str(root), "memory_fps": 1.0,
                                        "frame_store": str(tmp_path / "frames"),
                                        "memory": memory, "memory_config": config},
                             log_dir=tmp_path / name, cache=False)
    assert log.status == "success", log.error
    return {s.id: (s.output.completion, read_record(s.metadata)) for s in log.samples}


@pytest.mark.slow
@pytest.mark.parametrize("memory", ["context", "rag"])
def test_streaming_replay_answers_as_the_index_path(make_release, tmp_path, memory) -> None:
    # the streaming path (fed in time order, asked at each question's time) and the index path
    # (built once, cut at each question) give an index memory the same items at every question
    root = make_release()
    index = _run_all(root, tmp_path, memory, {}, "index")
    streamed = _run_all(root, tmp_path, memory, {"replay": "stream"}, "stream")
    assert index.keys() == streamed.keys() and len(index) == 4
    for sample_id, (output, record) in index.items():
        stream_output, stream_record = streamed[sample_id]
        assert stream_output == output
        assert stream_record.usage.retrieved_ids == record.usage.retrieved_ids
        assert stream_record.memory == f"{memory}+stream"
        assert stream_record.usage.ingest_replays == 0  # person 1's questions went in order
    # every event of person 1's stream up to its last question was fed once, and charged once
    fed = sum(r.usage.ingest_events for sid, (_, r) in streamed.items() if sid != 3)
    assert fed > 0
    assert all(r.usage.ingest_events == 0 for _, r in index.values())
