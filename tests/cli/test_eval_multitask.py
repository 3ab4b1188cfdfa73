"""``m3kit eval TASK [TASK...]``: several tasks in one call, each printing its own summary under
its name, one combined exit status; every task's arguments checked before any work; a
benchmark's name means its tasks; ``--resume`` continues each task's own log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from m3kit.benchmarks import BENCHMARKS, expand_tasks
from m3kit.cli.main import main
from m3kit.schema import write_jsonl

pytestmark = pytest.mark.usefixtures("isolated_dirs")

TASKS = ("synth_nback", "synth_interference")


@pytest.fixture
def suite(tmp_path: Path, probe_video: Path, make_q) -> Path:
    root = tmp_path / "suite"
    write_jsonl(root / "questions.jsonl", [*(make_q(i, probe_video) for i in range(2)),
                                           *(make_q(i, probe_video, nback=True)
                                             for i in range(2, 4))])
    return root


def _log_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("log: ")]


def test_two_tasks_print_both_summaries_and_resume_each(tmp_path, suite, capsys,
                                                         caplog) -> None:
    logs = tmp_path / "logs"
    args = ["eval", *TASKS, "--model", "m3kit/builtin", "-T", f"suite={suite}", "-T",
            "frames=1", "--limit", "2", "--log-dir", str(logs), "--quiet"]
    assert main(args) == 0
    out = capsys.readouterr().out
    headings = [line for line in out.splitlines() if line.startswith("== ")]
    assert headings == ["== synth_nback (1 of 2) ==", "== synth_interference (2 of 2) =="]
    # each summary under its heading: its table's title names its task
    first, second = out.split(headings[1])
    assert "m3kit/synth_nback ·" in first and "m3kit/synth_interference" not in first
    assert "m3kit/synth_interference ·" in second
    written = _log_lines(out)
    assert len(written) == 2 and len(list(logs.glob("*.eval"))) == 2
    assert len(list(logs.glob("results-*.json"))) == 2
    # inspect (``inspect view``, ``list_eval_logs``) sees the two logs, not the results files
    from inspect_ai.log import list_eval_logs

    assert sorted(Path(i.name).name for i in list_eval_logs(str(logs))) == sorted(
        p.name for p in logs.glob("*.eval"))
    # --resume: each task finds its own finished log (not the other's, not a results file)
    caplog.set_level(logging.WARNING)
    assert main([*args, "--resume"]) == 0
    assert _log_lines(capsys.readouterr().out) == written
    assert len(list(logs.glob("*.eval"))) == 2
    assert not [r for r in caplog.records if "unreadable log" in r.getMessage()]


def _refused(capsys: pytest.CaptureFixture[str], code: int, says: str) -> None:
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith("m3kit: error: ") and says in lines[0], lines[0]
    assert out == ""


def test_a_bad_argument_for_one_task_refuses_all_before_any_work(tmp_path, suite,
                                                                  capsys) -> None:
    """``token_budget`` is m3exam's alone (not the synth task's): given a bad value, neither
    task runs and no log is written."""
    logs = tmp_path / "logs"
    code = main(["eval", "synth_nback", "m3exam", "--model", "m3kit/builtin", "-T",
                 f"suite={suite}", "-T", "token_budget=lots", "--log-dir", str(logs)])
    _refused(capsys, code, "token_budget")
    assert not logs.exists()


def test_an_argument_no_task_takes_is_refused(tmp_path, suite, capsys) -> None:
    logs = tmp_path / "logs"
    code = main(["eval", *TASKS, "--model", "m3kit/builtin", "-T", f"suite={suite}", "-T",
                 "nonsense=1", "--log-dir", str(logs)])
    _refused(capsys, code, "no task of synth_nback, synth_interference takes -T nonsense")
    assert not logs.exists()


def test_an_unknown_task_among_several_refuses_all(tmp_path, suite, capsys) -> None:
    logs = tmp_path / "logs"
    code = main(["eval", "synth_nback", "nosuchtask", "--model", "m3kit/builtin", "-T",
                 f"suite={suite}", "--log-dir", str(logs)])
    _refused(capsys, code, "unknown task 'nosuchtask'")
    assert not logs.exists()


def test_a_benchmark_name_is_its_tasks() -> None:
    m3eval = next(b for b in BENCHMARKS if b.name == "m3eval")
    assert expand_tasks(["m3eval"]) == list(m3eval.tasks)
    # a name that is a task's and its benchmark's: the task
    assert expand_tasks(["m3exam"]) == ["m3exam"]
    assert expand_tasks(["supermemory", "videomme_v2"]) == ["supermemory", "videomme_v2"]
    # each task once, in order; other names kept for the task checks
    assert expand_tasks(["synth_nback", "m3eval", "x.py@t"])[:2] == ["synth_nback",
                                                                     m3eval.tasks[0]]
    assert expand_tasks(["synth_nback", "m3eval"]).count("synth_nback") == 1
    assert expand_tasks(["x.py@t"]) == ["x.py@t"]


def test_a_task_that_fails_at_run_is_named_and_the_others_run(tmp_path, probe_video, make_q,
                                                                capsys) -> None:
    """A suite without N-Back questions: synth_nback stops when built, synth_interference still
    runs and prints its summary; exit 2 naming the failed task."""
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(2)])
    code = main(["eval", *TASKS, "--model", "m3kit/builtin", "-T", f"suite={suite}", "-T",
                 "frames=1", "--log-dir", str(tmp_path / "logs"), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "no nback questions" in err and "1 of 2 tasks failed: synth_nback" in err
    assert len(_log_lines(out)) == 1 and "m3kit/synth_interference ·" in out
