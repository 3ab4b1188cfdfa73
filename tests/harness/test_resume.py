"""A run killed mid-way resumes without redoing its finished samples."""

from __future__ import annotations

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.report.logs import read_samples
from m3kit.schema import write_jsonl
from m3kit.schema.evallog import read_record

from .killed_run import run_and_kill, samples_in_log

N = 8
DONE_BEFORE_KILL = 3


def test_resume_after_kill_redoes_nothing(tmp_path, scripted, serve, make_q, probe_video):
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(N)])
    server = scripted(block_after=DONE_BEFORE_KILL)
    model = serve("resume", server)
    log_dir = tmp_path / "logs"
    args = {"suite": str(suite), "frames": 1}
    run_and_kill(tmp_path, server, model, args, log_dir, DONE_BEFORE_KILL)
    first = server.answered_keys()
    assert first == ["q0", "q1", "q2"]
    assert samples_in_log(log_dir) == DONE_BEFORE_KILL

    # resume: only the five unfinished samples reach the model, each once
    server.block_after = None  # the killed run's held request stays held and unrecorded
    seen = len(server.records)
    # the response cache off on both runs: a finished sample run again would reach the server
    log = run_benchmark_task("synth_interference", model, task_args=args, log_dir=log_dir,
                             max_connections=1, resume=True, cache=False)
    resumed = [r.key for r in server.records[seen:]]
    assert sorted(resumed) == [f"q{i}" for i in range(DONE_BEFORE_KILL, N)]
    assert log.status == "success"
    results = sample_results(read_samples(log))
    assert sorted(r.answer.id for r in results) == [f"q{i}" for i in range(N)]
    assert all(r.answer.status == "correct" for r in results)

    # resuming a finished run does nothing
    again = run_benchmark_task("synth_interference", model, task_args=args, log_dir=log_dir,
                               max_connections=1, resume=True, cache=False)
    assert again.location == log.location  # a path, as the run that wrote it gave
    assert len(server.records) == seen + len(resumed)


def test_a_streaming_memory_resumes_by_replaying_its_key(tmp_path, scripted, serve, make_q,
                                                         probe_video):
    # a memory on the streaming path killed after three answers: the resumed run starts the
    # key from nothing and feeds it up to its first question (rebuilding the key by replay),
    # never redoes a finished sample, and every question sees exactly the frames up to its time
    suite = tmp_path / "suite"
    times = {f"q{i}": 0.5 * (i + 1) for i in range(N)}
    write_jsonl(suite / "questions.jsonl",
                [make_q(i, probe_video, time=times[f"q{i}"]) for i in range(N)])
    server = scripted(block_after=DONE_BEFORE_KILL)
    model = serve("resume-stream", server)
    log_dir = tmp_path / "logs"
    args = {"suite": str(suite), "frames": 8, "memory": "context",
            "memory_config": {"replay": "stream", "send_images": False, "ocr": False}}
    run_and_kill(tmp_path, server, model, args, log_dir, DONE_BEFORE_KILL)
    assert server.answered_keys() == ["q0", "q1", "q2"]  # in time order: the key's turns
    server.block_after = None
    seen = len(server.records)
    log = run_benchmark_task("synth_interference", model, task_args=args, log_dir=log_dir,
                             max_connections=1, resume=True, cache=False)
    assert log.status == "success"
    assert sorted(r.key for r in server.records[seen:]) == [f"q{i}" for i in
                                                            range(DONE_BEFORE_KILL, N)]
    records = {s.id: read_record(s.metadata) for s in log.samples}
    assert sorted(records) == sorted(times)
    assert all(r.memory == "context+stream" for r in records.values())
    # 8 frames of the 4 s, 25 fps video; context keeps them all: each question's are exactly
    # those at or before its time, whatever order the resumed run took
    frames = sorted({int(i.rsplit("#", 1)[1]) for r in records.values()
                     for i in r.usage.retrieved_ids})
    assert frames == [0, 14, 28, 42, 57, 71, 85, 99]
    for qid, record in records.items():
        shown = sorted(int(i.rsplit("#", 1)[1]) for i in record.usage.retrieved_ids)
        assert shown == [f for f in frames if f / 25 <= times[qid]], qid
    # what was fed: once per question in the killed run; the resumed run's first question
    # rebuilt the key up to its time; a question the resumed run reached after a later one
    # (inspect runs the held sample last) replayed it, counted and charged
    fed = {qid: r.usage.ingest_events for qid, r in records.items()}
    assert [fed[f"q{i}"] for i in range(DONE_BEFORE_KILL)] == [1, 1, 1]
    assert sum(r.usage.ingest_replays for r in records.values()) <= 1
    for qid, record in records.items():
        if record.usage.ingest_replays:
            assert fed[qid] == sum(1 for f in frames if f / 25 <= times[qid])
