"""Unknown tasks and bad task arguments fail before any run starts: one typed line naming the
task or the argument, exit 2, no log written, no "resume" hint."""

from __future__ import annotations

import pytest

from m3kit.benchmarks import UnknownTaskError, build_task, check_task_args, known_tasks, run_eval
from m3kit.cli.main import main
from m3kit.harness.taskargs import TaskArgumentError


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(UnknownTaskError) as info:
        check_task_args("nosuchtask", {})
    text = str(info.value)
    assert "'nosuchtask'" in text and "synth_nback" in text and "videomme_v2" in text
    assert {"synth_nback", "m3eval_nback", "videomme_v2", "m3exam", "locomo"} <= set(
        known_tasks())


@pytest.mark.parametrize(("task", "args", "field", "says"), [
    ("synth_nback", {"fps": 0}, "fps", "fps must be > 0, got 0"),
    ("m3eval_nback", {"fps": -1}, "fps", "fps must be > 0, got -1"),
    ("synth_nback", {"frames": "abc"}, "frames", "frames must be int"),
    ("synth_nback", {"frames": -2}, "frames", "frames must be >= 0, got -2"),
    ("videomme_v2", {"data": ".", "fps": 0}, "fps", "fps must be > 0"),
    ("synth_nback", {"bogus": 1}, "bogus", "takes no argument 'bogus'"),
])
def test_bad_argument_is_named(task, args, field, says):
    with pytest.raises(TaskArgumentError) as info:
        check_task_args(task, args)
    assert info.value.field == field and says in str(info.value)


def test_refusals_inside_the_task_factory_are_typed(tmp_path):
    # the regime is parsed by the task itself (before its data is read): still one typed line
    with pytest.raises(Exception) as info:
        build_task("m3exam", {"data": str(tmp_path), "regime": "zz"})
    from m3kit.errors import M3kitError

    assert isinstance(info.value, M3kitError)
    assert info.value.field == "regime" and "unknown regime 'zz'" in str(info.value)


def test_run_eval_checks_before_writing_a_log(tmp_path):
    logs = tmp_path / "logs"
    with pytest.raises(TaskArgumentError):
        run_eval("synth_nback", "m3kit/builtin", task_args={"fps": -1}, log_dir=logs)
    assert not logs.exists()


@pytest.mark.parametrize(("argv", "says"), [
    (["eval", "nosuchtask"], "unknown task 'nosuchtask'; known tasks: "),
    (["eval", "m3eval_nback", "-T", "fps=-1"], "fps must be > 0, got -1"),
    (["eval", "synth_nback", "-T", "frames=abc"], "frames must be int"),
])
def test_cli_one_line_exit_2(tmp_path, capsys, argv, says):
    logs = tmp_path / "logs"
    code = main([*argv, "--model", "m3kit/builtin", "--log-dir", str(logs)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith("m3kit: error: ") and says in lines[0]
    assert "resume" not in err and "Traceback" not in err
    assert not logs.exists()
