"""A run killed mid-way, as ``kill -9`` leaves it: ``synth_interference`` started in its own
process against a scripted server that holds the request after ``done`` answers, killed once
those samples are in the log (shared by the resume tests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path
from typing import Any


def samples_in_log(log_dir: Path) -> int:
    """Samples flushed into the (single) log being written, 0 while it is unreadable."""
    logs = list(log_dir.glob("*.eval"))
    if not logs:
        return 0
    try:
        with zipfile.ZipFile(logs[0]) as archive:
            return sum(n.startswith("samples/") for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return 0


def run_and_kill(tmp_path: Path, server: Any, model: str, task_args: dict[str, Any],
                 log_dir: Path, done: int, *, task: str = "synth_interference",
                 answer_s: float = 120, settle_s: float = 120) -> None:
    """Run ``task`` on ``model`` (served by ``server``, which holds the request after ``done``
    answers) in a child process and SIGKILL it once ``done`` samples are in the log under
    ``log_dir`` (waiting up to ``answer_s`` for the answers, ``settle_s`` for the log)."""
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(f"""
        from m3kit.benchmarks import run_benchmark_task
        run_benchmark_task({task!r}, {model!r}, task_args={task_args!r},
                           log_dir={str(log_dir)!r}, max_connections=1, cache=False)
    """))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert server.answered.wait(answer_s), proc.stderr.read().decode() if proc.poll() else ""
        deadline = time.monotonic() + settle_s
        while samples_in_log(log_dir) < done and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
