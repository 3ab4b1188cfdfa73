"""A run resumed after its question file changed carries the new data fingerprint: inspect's
``eval_retry`` keeps the killed run's eval metadata (its card, the old fingerprint) but rebuilds
the task, whose part of the card the log reader takes."""

from __future__ import annotations

import logging
from pathlib import Path

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.load import media_files
from m3kit.benchmarks.m3eval.task import load_suite_with_skips
from m3kit.harness.card import data_fingerprint
from m3kit.report.logs import logged_card
from m3kit.report.summary import summary_table
from m3kit.schema import write_jsonl
from m3kit.schema.card import CARD_KEY

from .killed_run import run_and_kill

N = 6
DONE_BEFORE_KILL = 2


def _fingerprint(suite: Path) -> str | None:
    questions, root, _ = load_suite_with_skips(suite, "interference")
    return data_fingerprint([suite / "questions.jsonl"], media_files(questions, root))


def test_a_resumed_run_carries_the_edited_question_files_fingerprint(
        tmp_path, scripted, serve, make_q, probe_video, caplog):
    suite = tmp_path / "suite"
    questions = [make_q(i, probe_video) for i in range(N)]
    write_jsonl(suite / "questions.jsonl", questions)
    old = _fingerprint(suite)
    server = scripted(block_after=DONE_BEFORE_KILL)
    model = serve("resume", server)
    log_dir = tmp_path / "logs"
    args = {"suite": str(suite), "frames": 1}
    run_and_kill(tmp_path, server, model, args, log_dir, DONE_BEFORE_KILL)

    # the question file is edited between the kill and the resume (a question not yet asked)
    last = questions[-1]
    questions[-1] = last.model_copy(update={"text": last.text + " Think carefully."})
    write_jsonl(suite / "questions.jsonl", questions)
    new = _fingerprint(suite)
    assert new != old
    server.block_after = None
    with caplog.at_level(logging.WARNING, logger="m3kit.harness.run"):
        log = run_benchmark_task("synth_interference", model, task_args=args, log_dir=log_dir,
                                 max_connections=1, resume=True, cache=False)
    # said at the resume: the finished samples were answered on the old data
    (said,) = [r.getMessage() for r in caplog.records if "the data changed" in r.getMessage()]
    assert f"fingerprint {old[:12]}, now {new[:12]}" in said
    assert log.status == "success"
    # inspect kept the killed run's eval metadata: the whole card it recorded is the old one
    assert log.eval.metadata[CARD_KEY]["data_fingerprint"] == old
    card = logged_card(log)
    assert card is not None and card.data_fingerprint == new
    assert card.model == model  # the run's own part is kept
    caption = summary_table(log).caption
    assert caption is not None and f"data {new[:12]}" in caption
