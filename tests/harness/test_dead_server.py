"""A model server that dies mid-run stops the run: exit 2 with one line naming the endpoint,
progress lines in a pipe, the finished samples kept for ``--resume``, no run lock left; and
SIGTERM stops a run as Ctrl-C does, leaving no lock either.

The server is the scripted OpenAI-compatible server (``tests/fakeserver.py``) in a process of its
own, so that it can be killed for real (SIGKILL: its sockets are closed by the kernel, the request
it was holding is reset, new connections are refused); the run is ``m3kit eval`` in a process of
its own with its output in pipes, as a user's script would run it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.harness.endpoint import endpoint_refuses, is_refusal, refused_url
from m3kit.harness.progress import RunProgress
from m3kit.report.logs import read_samples
from m3kit.schema import write_jsonl

from ..fakeserver import ScriptedServer

FAKESERVER = Path(__file__).resolve().parent.parent / "fakeserver.py"
N = 6
DONE_BEFORE_KILL = 2
KEY = "not-a-real-key-0000"

# The server in its own process: it answers DONE_BEFORE_KILL requests, holds the next one and
# says so on stdout; the test then kills it.
SERVER_SCRIPT = textwrap.dedent("""
    import importlib.util, sys, time
    spec = importlib.util.spec_from_file_location("fakeserver", sys.argv[1])
    fake = importlib.util.module_from_spec(spec)
    sys.modules["fakeserver"] = fake
    spec.loader.exec_module(fake)
    server = fake.ScriptedServer(block_after=int(sys.argv[2])).start()
    print(server.port, flush=True)
    server.answered.wait()
    print("holding", flush=True)
    time.sleep(600)
""")


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    script = tmp_path / "server.py"
    script.write_text(SERVER_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(FAKESERVER),
                             str(DONE_BEFORE_KILL)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        yield proc, port
    finally:
        proc.kill()
        proc.wait(10)


def _env(tmp_path: Path, port: int) -> dict[str, str]:
    home = tmp_path / "home"
    return {**os.environ,
            "DEADSRV_BASE_URL": f"http://127.0.0.1:{port}/v1", "DEADSRV_API_KEY": KEY,
            "INSPECT_CACHE_DIR": str(home / "inspect-cache"),
            "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
            "M3KIT_CACHE_DIR": str(home / "m3kit"), "COLUMNS": "200"}


def _eval_args(suite: Path, log_dir: Path) -> list[str]:
    # the response cache off: a finished sample that a resume ran again would reach the server
    return [sys.executable, "-m", "m3kit", "eval", "synth_interference",
            "--model", "openai-api/deadsrv/scripted", "-T", f"suite={suite}", "-T", "frames=0",
            "--log-dir", str(log_dir), "--max-connections", "1", "--max-retries", "1",
            "--no-cache"]


@pytest.mark.slow
def test_dead_server_stops_the_run_and_resume_finishes_it(
        tmp_path, server_process, make_q, probe_video):
    proc, port = server_process
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(N)])
    log_dir = tmp_path / "logs"
    run = subprocess.Popen(_eval_args(suite, log_dir), env=_env(tmp_path, port),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "holding"
        proc.kill()  # mid-run: two samples answered, the third request held
        proc.wait(10)
        out, err = run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 2, err
    # one line naming the endpoint (the key never shown), and what to do
    stopped = [line for line in err.splitlines() if "is down" in line]
    assert len(stopped) == 1, err
    assert f"http://127.0.0.1:{port}/v1" in stopped[0] and "--resume" in stopped[0]
    assert KEY not in out + err
    # progress lines in the pipe: one at the start and one at the end at least
    progress = [line for line in err.splitlines() if "samples done" in line]
    assert progress[0].startswith("m3kit/synth_interference: 0 of 6 samples done"), err
    assert "2 of 6 samples done (0 failed)" in progress[-1], err
    assert not list(log_dir.glob(".m3kit-*.lock"))

    # the killed server's run kept its two answers; restarted where the log says, --resume
    # sends only the four others
    with ScriptedServer().start(port) as server:
        resumed = subprocess.run([*_eval_args(suite, log_dir), "--resume"],
                                 env=_env(tmp_path, port), capture_output=True, text=True,
                                 timeout=180, check=False)
        assert resumed.returncode == 0, resumed.stderr
        assert sorted(server.answered_keys()) == [f"q{i}" for i in range(DONE_BEFORE_KILL, N)]
    logs = sorted(log_dir.glob("*.eval"))
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(logs[-1]))
    assert log.status == "success"
    results = sample_results(read_samples(log))
    assert sorted(r.answer.id for r in results) == [f"q{i}" for i in range(N)]
    assert all(r.answer.status == "correct" for r in results)


# What a shell does to ``m3kit eval ... &`` in a script: SIGINT ignored, then the command run.
IGNORING_SIGINT = ["bash", "-c", 'trap "" INT; exec "$@"', "bash"]


@pytest.mark.parametrize("background", [False, True], ids=["foreground", "background"])
@pytest.mark.slow
def test_sigterm_stops_the_run_and_removes_its_lock(tmp_path, scripted, make_q, probe_video,
                                                    background):
    """``background``: started as a shell starts ``m3kit eval ... &``, with SIGINT ignored."""
    server = scripted(block_after=1)
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(3)])
    log_dir = tmp_path / "logs"
    command = [*(IGNORING_SIGINT if background else []), *_eval_args(suite, log_dir)]
    run = subprocess.Popen(command, env=_env(tmp_path, server.port),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.answered.wait(120)  # the second request is held: the run is mid-way
        assert list(log_dir.glob(".m3kit-run-*.lock"))
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        server.release()
        if run.poll() is None:
            run.kill()
    # stopped as Ctrl-C stops it, no lock left
    assert run.returncode == 130 and "m3kit: interrupted" in err, err
    assert not list(log_dir.glob(".m3kit-*.lock")), err
    from inspect_ai.log import read_eval_log

    (log_file,) = log_dir.glob("*.eval")
    log = read_eval_log(str(log_file))
    # inspect cancels the run and writes its log; in the background (and, seen once in a CI
    # run under load, in the foreground) the interrupt can land where inspect does not finish
    # the log, which then stays as a kill leaves it: inspect recovers it on resume
    assert log.status in ("cancelled", "started")
    if log.status == "cancelled":
        assert [s.id for s in log.samples or [] if s.error is None] == ["q0"]
    # either way the finished sample is kept: a resume sends only the two others (counted
    # once the held request of the stopped run is recorded: under load it lands late)
    assert server.settle(30)
    server.block_after = None
    seen = len(server.records)
    resumed = subprocess.run([*_eval_args(suite, log_dir), "--resume"],
                             env=_env(tmp_path, server.port), capture_output=True, text=True,
                             timeout=180, check=False)
    assert resumed.returncode == 0, resumed.stderr
    assert sorted(r.key for r in server.records[seen:] if r.outcome == "answer") == ["q1", "q2"]


def test_refusals_are_told_from_other_failures():
    import httpx
    import openai

    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    refused = openai.APIConnectionError(request=request)
    refused.__cause__ = httpx.ConnectError("[Errno 111] Connection refused")
    assert is_refusal(refused)
    assert is_refusal(ConnectionResetError(104, "Connection reset by peer"))
    # a slow server is not a dead one, and an HTTP error reply came from a live server
    assert not is_refusal(openai.APITimeoutError(request=request))
    assert not is_refusal(httpx.ReadTimeout("timed out"))
    reply = httpx.Response(500, request=request)
    assert not is_refusal(openai.InternalServerError("boom", response=reply, body=None))
    assert not is_refusal(ValueError("bad frame"))
    # the server probed is the one the failed request went to (a reranker's, a captioner's)
    assert refused_url(refused) == "http://127.0.0.1:9/v1/chat/completions"
    assert refused_url(ConnectionResetError(104, "reset")) is None


def test_a_dead_port_refuses_and_a_live_server_answers(scripted):
    server = scripted()
    assert not endpoint_refuses(server.base_url + "/chat/completions", 3, 0.01, 5.0)  # a 405/404
    port = server.port
    server.stop()
    assert endpoint_refuses(f"http://127.0.0.1:{port}/v1/models", 3, 0.01, 5.0)


def test_progress_lines_count_and_bracket_the_run():
    lines: list[str] = []
    progress = RunProgress("m3kit/synth_nback", 3, lines.append, interval_s=3600)
    with progress.running():
        progress.sample_done(failed=False)
        progress.sample_done(failed=True)
    # only the elapsed time may differ with how busy the machine is
    assert re.match(r"m3kit/synth_nback: 0 of 3 samples done \(0 failed\), \d+:\d\d:\d\d",
                    lines[0]), lines
    assert re.match(r"m3kit/synth_nback: 2 of 3 samples done \(1 failed\), \d+:\d\d:\d\d",
                    lines[-1]), lines
    assert len(lines) == 2  # the interval never passed
    unknown = RunProgress("resumed", None, lines.append)
    assert unknown.line().startswith("resumed: 0 samples done (0 failed)")


def test_a_beat_is_written_between_samples():
    lines: list[str] = []
    progress = RunProgress("t", 1, lines.append, interval_s=0.05)
    with progress.running():
        deadline = time.monotonic() + 60  # a bound for a beat that never comes, not a speed
        while len(lines) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(lines) >= 4  # start, two beats at least, end
