"""One damaged eval log in a folder costs itself: named in a warning, the rest reported."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from m3kit.report.inputs import ReportInputError, read_inputs

SCORES = {"nback": {"accuracy": 50.0}}


def test_a_damaged_eval_is_skipped_and_named(tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "model-a.json").write_text(json.dumps(SCORES))
    damaged = runs / "2025-01-01_m3eval_nback.eval"
    damaged.write_bytes(b"PK\x03\x04 cut short by a kill")
    with caplog.at_level(logging.WARNING, logger="m3kit.report.inputs"):
        inputs = read_inputs([runs])
    assert [list(cards) for cards in inputs.cards.values()] == [["model-a"]]
    (skip,) = inputs.skipped
    assert (skip.path, skip.reason.split(":")[0]) == (str(damaged), "not a readable eval log")
    assert [r.getMessage() for r in caplog.records] == [f"skipped {skip}"]
    # named explicitly, the same: skipped, while the score file beside it is reported
    inputs = read_inputs([damaged, runs / "model-a.json"])
    assert len(inputs.skipped) == 1
    assert [list(cards) for cards in inputs.cards.values()] == [["model-a"]]


def test_nothing_but_damaged_logs_is_an_error_that_names_one(tmp_path: Path) -> None:
    for name in ("a.eval", "b.eval"):
        (tmp_path / name).write_bytes(b"not a zip")
    with pytest.raises(ReportInputError, match="not a readable eval log") as info:
        read_inputs([tmp_path])
    assert info.value.path == str(tmp_path / "a.eval")


def test_an_unreadable_json_in_a_folder_is_skipped_and_named(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "model-a.json").write_text(json.dumps(SCORES))
    truncated = runs / "bad.json"
    truncated.write_text('{"eval": {"task": "x"}, "version": 2')  # cut off before its "}"
    with caplog.at_level(logging.WARNING, logger="m3kit.report.inputs"):
        inputs = read_inputs([runs])
    assert [list(cards) for cards in inputs.cards.values()] == [["model-a"]]
    (skip,) = inputs.skipped
    assert (skip.path, skip.reason.split(":")[0]) == (str(truncated), "not readable as JSON")
    assert [r.getMessage() for r in caplog.records] == [f"skipped {skip}"]
    # named explicitly, it is an error
    with pytest.raises(ReportInputError, match="not readable as JSON") as info:
        read_inputs([truncated, runs / "model-a.json"])
    assert info.value.path == str(truncated)


TINY_TASK = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import match
from inspect_ai.solver import solver


@solver
def answer_a():
    async def solve(state, generate):
        state.output.completion = "A"
        return state
    return solve


@task
def tiny():
    return Task(dataset=[Sample(input="Say A", target="A")], solver=answer_a(), scorer=match())
'''


def test_a_foreign_tasks_log_is_skipped_and_named(tmp_path: Path, isolated_dirs: Path,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    """An inspect log of a task that is no m3kit benchmark's, in a folder of runs: skipped by
    name, as a damaged log, and the report of the rest is written."""
    import inspect_ai

    from m3kit.report.build import build_report

    (tmp_path / "tiny.py").write_text(TINY_TASK)
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "model-a.json").write_text(json.dumps(SCORES))
    (foreign,) = inspect_ai.eval(f"{tmp_path / 'tiny.py'}@tiny", model="mockllm/model",
                                 log_dir=str(runs), display="none")
    assert foreign.status == "success", foreign.error
    with caplog.at_level(logging.WARNING, logger="m3kit.report.inputs"):
        inputs = read_inputs([runs])
    assert inputs.logs == [] and [list(c) for c in inputs.cards.values()] == [["model-a"]]
    (skip,) = inputs.skipped
    assert Path(skip.path).parent == runs and skip.path.endswith(".eval")
    assert skip.reason == "not a log of an m3kit benchmark (task tiny)"
    assert [r.getMessage() for r in caplog.records
            if r.name == "m3kit.report.inputs"] == [f"skipped {skip}"]
    assert build_report([runs], tmp_path / "report").is_file()
    # m3kit export writes a foreign task's rows as they are: it asks for its logs
    assert len(read_inputs([runs], foreign=True).logs) == 1
    # alone, it is the error, named
    alone = tmp_path / "alone"
    alone.mkdir()
    Path(skip.path).rename(alone / "tiny.eval")
    with pytest.raises(ReportInputError, match="not a log of an m3kit benchmark"):
        read_inputs([alone])
