"""A run resumed after its question file changed carries the new data fingerprint: inspect's
``eval_retry`` keeps the killed run's eval metadata (its card, the old fingerprint) but rebuilds
the task, whose part of the card the log reader takes."""

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
from m3kit.benchmarks.m3eval.load import media_files
from m3kit.benchmarks.m3eval.task import load_suite_with_skips
from m3kit.harness.card import data_fingerprint
from m3kit.report.logs import logged_card
from m3kit.report.summary import summary_table
from m3kit.schema import write_jsonl
from m3kit.schema.card import CARD_KEY

N = 6
DONE_BEFORE_KILL = 2


def _samples_in_log(log_dir: Path) -> int:
    logs = list(log_dir.glob("*.eval"))
    if not logs:
        return 0
    try:
        with zipfile.ZipFile(logs[0]) as archive:
            return sum(n.startswith("samples/") for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return 0


def _fingerprint(suite: Path) -> str | None:
    questions, root, _ = load_suite_with_skips(suite, "interference")
    return data_fingerprint([suite / "questions.jsonl"], media_files(questions, root))


def test_a_resumed_run_carries_the_edited_question_files_fingerprint(
        tmp_path, scripted, serve, make_q, probe_video):
    suite = tmp_path / "suite"
    questions = [make_q(i, probe_video) for i in range(N)]
    write_jsonl(suite / "questions.jsonl", questions)
    old = _fingerprint(suite)
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

    # the question file is edited between the kill and the resume (a question not yet asked)
    last = questions[-1]
    questions[-1] = last.model_copy(update={"text": last.text + " Think carefully."})
    write_jsonl(suite / "questions.jsonl", questions)
    new = _fingerprint(suite)
    assert new != old
    server.block_after = None
    log = run_eval("synth_interference", model, task_args=args, log_dir=log_dir,
                   max_connections=1, resume=True, cache=False)
    assert log.status == "success"
    # inspect kept the killed run's eval metadata: the whole card it recorded is the old one
    assert log.eval.metadata[CARD_KEY]["data_fingerprint"] == old
    card = logged_card(log)
    assert card is not None and card.data_fingerprint == new
    assert card.model == model  # the run's own part is kept
    caption = summary_table(log).caption
    assert caption is not None and f"data {new[:12]}" in caption
