"""``m3kit eval file.py@task``: a plain inspect task m3kit does not own runs as inspect runs it,
and the summary is one generic row (samples, failed, tokens, inspect's own metrics), exit 0;
an unknown m3kit task name still fails before any work."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.cli.main import main

pytestmark = pytest.mark.usefixtures("isolated_dirs")

# Two samples of 2 and 4 words: m3kit/builtin counts input tokens as words (mean 3). The scorer
# calls the first correct and the second incorrect, so inspect's accuracy is 0.5.
TASK_FILE = '''
from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.solver import generate


@scorer(metrics=[accuracy()])
def first_is_right():
    async def score(state, target):
        return Score(value=CORRECT if state.sample_id == 1 else INCORRECT)

    return score


@task
def ext():
    return Task(dataset=[Sample(id=1, input="Say hello", target="hello"),
                         Sample(id=2, input="Please say hello now", target="hello")],
                solver=generate(), scorer=first_is_right())
'''


def test_a_task_file_runs_and_prints_the_generic_row(tmp_path: Path, capsys) -> None:
    task_file = tmp_path / "ext.py"
    task_file.write_text(TASK_FILE)
    logs = tmp_path / "logs"
    code = main(["eval", f"{task_file}@ext", "--model", "m3kit/builtin", "--log-dir", str(logs)])
    captured = capsys.readouterr()
    assert code == 0, captured.out + captured.err
    lines = captured.out.splitlines()
    header = next(line for line in lines if line.split()[:1] == ["group"])
    assert header.split() == ["group", "n", "failed", "tok", "in", "tok", "out",
                              "first_is_right", "accuracy"]
    row = next(line for line in lines if line.split()[:1] == ["all"])
    assert row.split() == ["all", "2", "0", "3", "0", "0.500"]
    (log_file,) = logs.glob("*.eval")
    assert f"log: {log_file}" in captured.out  # a path, not a file:// URL
    assert "unknown task" not in captured.err


def test_an_unknown_m3kit_task_fails_before_any_work(tmp_path: Path, capsys) -> None:
    logs = tmp_path / "logs"
    code = main(["eval", "m3kit/nosuch", "--model", "m3kit/builtin", "--log-dir", str(logs)])
    assert code == 2
    assert "field 'task': unknown task 'nosuch'; known tasks: " in capsys.readouterr().err
    assert not logs.exists()
