"""A run killed mid-way resumes without redoing its finished samples."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

from m3kit.benchmarks import run_eval
from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.report.logs import read_samples
from m3kit.schema import write_jsonl

N = 8
DONE_BEFORE_KILL = 3


def _samples_in_log(log_dir: Path) -> int:
    """Samples flushed into the (single) log being written, 0 while it is unreadable."""
    logs = list(log_dir.glob("*.eval"))
    if not logs:
        return 0
    try:
        with zipfile.ZipFile(logs[0]) as archive:
            return sum(n.startswith("samples/") for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return 0


def test_resume_after_kill_redoes_nothing(tmp_path, scripted, serve, make_q, probe_video):
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(N)])
    server = scripted(block_after=DONE_BEFORE_KILL)
    model = serve("resume", server)
    log_dir = tmp_path / "logs"
    args = {"suite": str(suite), "frames": 1}
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        from m3kit.benchmarks import run_eval
        run_eval("synth_interference", {model!r}, task_args={args!r},
                 log_dir={str(log_dir)!r}, max_connections=1, cache=False)
    """))

    # first run: three samples answered, the fourth request held by the server, then SIGKILL
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert server.answered.wait(60), proc.stderr.read().decode() if proc.poll() else ""
        deadline = time.monotonic() + 20
        while _samples_in_log(log_dir) < DONE_BEFORE_KILL and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    first = server.answered_keys()
    assert first == ["q0", "q1", "q2"]
    assert _samples_in_log(log_dir) == DONE_BEFORE_KILL

    # resume: only the five unfinished samples reach the model, each once
    server.block_after = None  # the killed run's held request stays held and unrecorded
    seen = len(server.records)
    # the response cache off on both runs: a finished sample run again would reach the server
    log = run_eval("synth_interference", model, task_args=args, log_dir=log_dir,
                   max_connections=1, resume=True, cache=False)
    resumed = [r.key for r in server.records[seen:]]
    assert sorted(resumed) == [f"q{i}" for i in range(DONE_BEFORE_KILL, N)]
    assert log.status == "success"
    results = sample_results(read_samples(log))
    assert sorted(r.answer.id for r in results) == [f"q{i}" for i in range(N)]
    assert all(r.answer.status == "correct" for r in results)

    # resuming a finished run does nothing
    again = run_eval("synth_interference", model, task_args=args, log_dir=log_dir,
                     max_connections=1, resume=True, cache=False)
    assert again.location == log.location  # a path, as the run that wrote it gave
    assert len(server.records) == seen + len(resumed)
