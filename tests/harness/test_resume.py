"""A run killed mid-way resumes without redoing its finished samples."""

from __future__ import annotations

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.report.logs import read_samples
from m3kit.schema import write_jsonl

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
