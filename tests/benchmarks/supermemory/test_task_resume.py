"""A ``supermemory`` run killed mid-way resumes: the resumed task loads the data again and its
solver finds each remaining sample's person and session by the keys the sample carries (the
sessions are the task's, never the sample's), directly and through a memory; the finished
samples are not asked again, and the log scores as a run that was never stopped."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.supermemory.score import scores_from_log
from m3kit.report.logs import read_samples
from m3kit.schema.evallog import read_record

from ...harness.killed_run import run_and_kill, samples_in_log
from .conftest import EARLY_FACT

pytestmark = pytest.mark.slow  # a run in a child process, killed, then resumed

DONE_BEFORE_KILL = 2
RANKING = "Ranking: A > B > C > D"
# each question of the tiny release, and words of its session heard before it
HEARD = {"Where is the kettle?": EARLY_FACT, "What colour was the car?": "Let us drive home.",
         "Which pet did I see?": "Look, a dog!", "What did I plan to do?": "call the plumber"}


@pytest.mark.parametrize("memory", [None, "context"])
def test_a_killed_run_resumes_with_the_tasks_sessions(
        make_release: Callable[..., Path], tmp_path: Path, scripted, serve,
        memory: str | None) -> None:
    root = make_release()
    args: dict[str, Any] = {"data": str(root), "frames": 2, "memory_fps": 1.0,
                            "frame_store": str(tmp_path / "frames"),
                            **({"memory": memory} if memory else {})}
    server = scripted(block_after=DONE_BEFORE_KILL, answer=lambda _prompt: RANKING)
    model = serve("smresume", server)
    log_dir = tmp_path / "logs"
    run_and_kill(tmp_path, server, model, args, log_dir, DONE_BEFORE_KILL, task="supermemory",
                 answer_s=120, settle_s=30)
    assert samples_in_log(log_dir) == DONE_BEFORE_KILL

    server.block_after = None  # the killed run's held request stays held and unrecorded
    seen = len(server.records)
    log = run_benchmark_task("supermemory", model, task_args=args, log_dir=log_dir,
                             max_connections=1, resume=True, cache=False)
    assert log.status == "success", log.error
    assert len(server.records) - seen == 4 - DONE_BEFORE_KILL  # the others, each once
    assert sorted(str(s.id) for s in log.samples) == ["1", "2", "3", "4"]
    for sample in log.samples:
        record = read_record(sample.metadata)
        assert record is not None and record.failure is None, (sample.id, record)
    if memory is None:  # every prompt, the resumed ones too, carries its session's words
        for asked in server.records:
            heard = next(words for question, words in HEARD.items() if question in asked.prompt)
            assert heard in asked.prompt
    fresh = run_benchmark_task("supermemory", model, task_args=args,
                               log_dir=tmp_path / "fresh", max_connections=1, cache=False)
    resumed, whole = scores_from_log(read_samples(log)), scores_from_log(read_samples(fresh))
    for key in ("qa_acc", "ans_f1", "qa_mrr", "n"):
        assert getattr(resumed, key) == getattr(whole, key), key
