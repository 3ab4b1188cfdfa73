"""``--resume`` refuses a run that is still going in another process; a lock left by a dead
process is stale and ignored."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.harness.run import RunLockedError, qualified_task_name
from m3kit.harness.runlock import held_lock, live_locks, resume_lock, run_key

# The key run_benchmark_task uses for ``m3kit eval synth_nback --model m3kit/builtin -T frames=0
# --limit 1``.
KEY = run_key(qualified_task_name("synth_nback"), "m3kit/builtin", {"frames": 0}, 1)

_HOLDER = textwrap.dedent("""
    import sys, time
    from m3kit.harness.runlock import held_lock
    with held_lock(sys.argv[1], sys.argv[2], task="m3kit/synth_nback", model="m3kit/builtin"):
        print("held", flush=True)
        time.sleep(120)
""")


@pytest.mark.slow
def test_resume_refuses_a_live_run_and_ignores_a_dead_one(tmp_path):
    logs = tmp_path / "logs"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(logs), KEY],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert [info.pid for _, info in live_locks(logs, KEY)] == [holder.pid]
        with pytest.raises(RunLockedError) as info:
            run_benchmark_task("synth_nback", "m3kit/builtin", task_args={"frames": 0}, resume=True,
                               log_dir=logs, limit=1)
        text = str(info.value)
        assert "\n" not in text and f"pid {holder.pid}" in text and "still going" in text
    finally:
        holder.kill()
        holder.wait()
    # killed without cleaning up: its lock file is still there, but its pid is gone
    assert len(list(logs.glob(".m3kit-run-*.lock"))) == 1
    assert live_locks(logs, KEY) == []
    assert list(logs.glob(".m3kit-run-*.lock")) == []  # stale lock removed


def test_lock_is_held_only_during_the_block(tmp_path):
    with held_lock(tmp_path, "k", task="t", model="m") as path:
        assert path.is_file()
        assert live_locks(tmp_path, "k") == []  # this process's own lock never blocks it
    assert not path.exists()


TRIALS = 50


def _attempt(log_dir: Path, start: Any, done: Any) -> bool:
    """One resume: wait for the other (``start``, a barrier), try to take the lock, hold it
    until both have tried (``done``)."""
    start.wait()
    try:
        with resume_lock(log_dir, KEY, task="m3kit/synth_nback", model="m3kit/builtin"):
            done.wait()
            return True
    except RunLockedError:
        done.wait()
        return False


def _thread_attempt(log_dir: Path, start: Any, done: Any, won: list[bool]) -> None:
    won.append(_attempt(log_dir, start, done))


def test_two_resumes_at_once_one_wins_threads(tmp_path):
    for trial in range(TRIALS):
        logs = tmp_path / f"t{trial}"
        start, done = threading.Barrier(2), threading.Barrier(2)
        won: list[bool] = []
        threads = [threading.Thread(target=_thread_attempt, args=(logs, start, done, won))
                   for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert sorted(won) == [False, True], trial
        assert list(logs.iterdir()) == []  # the lock files went with the winner


def _process_attempt(log_dir, start, done, results) -> None:
    results.put(_attempt(Path(log_dir), start, done))


@pytest.mark.slow
def test_two_resumes_at_once_one_wins_processes(tmp_path):
    context = multiprocessing.get_context("fork")
    for trial in range(TRIALS):
        logs = tmp_path / f"p{trial}"
        start, done, results = context.Barrier(2), context.Barrier(2), context.Queue()
        procs = [context.Process(target=_process_attempt, args=(str(logs), start, done, results))
                 for _ in range(2)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(30)
        assert [p.exitcode for p in procs] == [0, 0]
        assert sorted(results.get(timeout=5) for _ in procs) == [False, True], trial


def test_a_killed_resume_leaves_no_lock(tmp_path):
    """The kernel drops a dead holder's lock: the file it left is no obstacle."""
    logs = tmp_path / "logs"
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        import sys, time
        from m3kit.harness.runlock import resume_lock
        with resume_lock(sys.argv[1], sys.argv[2], task="t", model="m"):
            print("held", flush=True)
            time.sleep(120)
    """), str(logs), KEY], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError) as info, resume_lock(logs, KEY, task="t", model="m"):
            pass
        assert f"pid {holder.pid}" in str(info.value)
    finally:
        holder.kill()
        holder.wait()
    assert (logs / f".m3kit-resume-{KEY}.lock").exists()  # left behind by the kill
    with resume_lock(logs, KEY, task="t", model="m") as path:
        assert path.exists()
    assert list(logs.glob(".m3kit-*")) == []
