"""Unknown tasks and bad task arguments fail before any run starts: one typed line naming the
task or the argument, exit 2, no log written, no "resume" hint."""

from __future__ import annotations

import math

import pytest

from m3kit.benchmarks import (
    UnknownTaskError,
    build_task,
    check_task_args,
    known_tasks,
    run_benchmark_task,
)
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
    ("synth_nback", {"fps": 0}, "fps", "fps must be > 0 and <= 1000, got 0"),
    ("m3eval_nback", {"fps": -1}, "fps", "fps must be > 0 and <= 1000, got -1"),
    # past the sampler's bound every sample would fail: refused before any work
    ("synth_nback", {"fps": 5000}, "fps", "fps must be > 0 and <= 1000, got 5000"),
    ("supermemory", {"data": ".", "memory_fps": 1e4}, "memory_fps",
     "memory_fps must be > 0 and <= 1000"),
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
        run_benchmark_task("synth_nback", "m3kit/builtin", task_args={"fps": -1}, log_dir=logs)
    assert not logs.exists()


@pytest.mark.parametrize(("argv", "says"), [
    (["eval", "nosuchtask"], "unknown task 'nosuchtask'; known tasks: "),
    (["eval", "m3eval_nback", "-T", "fps=-1"], "fps must be > 0 and <= 1000, got -1"),
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


# -- numbers: read as the parameter's type says, finite, in range ----------------------------------


def _numeric_params() -> list[tuple[str, str, type]]:
    """(task, argument, int or float) for every numeric argument of every declared task."""
    import inspect as pyinspect
    import typing

    from m3kit.benchmarks import BENCHMARKS

    found = []
    for benchmark in BENCHMARKS:
        for task in benchmark.tasks:
            hints = typing.get_type_hints(pyinspect.unwrap(benchmark.task_function(task)))
            for name, hint in hints.items():
                kinds = {a for a in typing.get_args(hint) or (hint,) if a is not type(None)}
                if kinds and kinds <= {int, float}:
                    found.append((task, name, float if float in kinds else int))
    return found


def _check(task: str, args: dict) -> dict:
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.harness.taskargs import check_args

    benchmark = benchmark_for_task(task)
    return check_args(task, benchmark.task_function(task), args, benchmark.ranges)


def test_every_numeric_argument_of_the_four_benchmarks_is_swept():
    params = _numeric_params()
    assert {(t, p) for t, p, _ in params} >= {
        ("supermemory", "memory_fps"), ("supermemory", "frames"), ("m3exam", "dpi"),
        ("m3exam", "max_images"), ("locomo", "token_budget"), ("videomme_v2", "fps"),
        ("synth_nback", "frames"), ("m3eval_interference", "max_side")}
    for task, name, kind in params:
        # YAML 1.1 reads 1e1 as text: the parameter's type says what it is
        got = _check(task, {name: "1e1" if kind is float else "7"})[name]
        assert type(got) is kind and got == (10.0 if kind is float else 7), (task, name)
        for bad in (math.inf, -math.inf, math.nan):
            with pytest.raises(TaskArgumentError) as info:
                _check(task, {name: bad})
            assert info.value.field == name, (task, name, bad)
        with pytest.raises(TaskArgumentError, match=f"{name} must be"):
            _check(task, {name: True})  # ``-T frames=yes`` is no number
        with pytest.raises(TaskArgumentError, match=f"{name} must be"):
            _check(task, {name: -1})  # every numeric argument is declared >= 0 or > 0


def test_a_float_given_as_yaml_text_reaches_the_task_as_a_float(tmp_path):
    # ``-T memory_fps=1e-9``: YAML read "1e-9", and the task formatted it with :g
    from m3kit.benchmarks import build_task
    from m3kit.cli.options import parse_key_values
    from m3kit.schema.evallog import FPS_KEY, FRAMES_KEY
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    root = build_ego_suite(tmp_path / "ego", EgoSuiteConfig(
        seed=0, persons=1, sessions=2, segments=8, answerable_per_skill=1,
        unanswerable=1)).root
    args = parse_key_values([f"data={root}", "memory=context", "memory_fps=1e-9"], "-T")
    assert args["memory_fps"] == "1e-9"
    assert _check("supermemory", args)["memory_fps"] == 1e-9
    task = build_task("supermemory", args)
    assert task.metadata[FPS_KEY] == 1e-9 and task.metadata[FRAMES_KEY] == "1e-09 fps"


@pytest.mark.parametrize(("argv", "field", "says"), [
    (["supermemory", "-T", "memory_fps=.inf"], "memory_fps", "must be a finite number"),
    (["supermemory", "-T", "memory_fps=.nan"], "memory_fps", "must be a finite number"),
    (["supermemory", "-T", "memory_fps=1e999"], "memory_fps", "must be a finite number"),
    (["supermemory", "-T", "memory_fps=-1e-9"], "memory_fps",
     "must be > 0 and <= 1000, got '-1e-9'"),
    (["synth_nback", "-T", "fps=.inf"], "fps", "must be a finite number"),
    (["videomme_v2", "-T", "frames=yes"], "frames", "frames must be int, got True"),
    (["m3exam", "-T", "max_images=1.5"], "max_images", "max_images must be int"),
    (["m3exam", "-T", "token_budget=0"], "token_budget", "must be > 0, got 0"),
    (["m3exam", "-T", "data=/nowhere", "-T", "dpi=5000"], "dpi", "less than or equal to 600"),
    (["synth_nback", "--memory", "context", "-T", "memory_config={tokens_per_char: .inf}"],
     "memory_config", "'tokens_per_char' must be a finite number"),
    (["synth_nback", "--memory", "context", "-T", "memory_config={token_budget: .nan}"],
     "memory_config", "'token_budget' must be a finite number"),
])
def test_a_bad_number_is_one_line_naming_the_argument(tmp_path, capsys, argv, field, says):
    logs = tmp_path / "logs"
    code = main(["eval", *argv, "--model", "m3kit/builtin", "--log-dir", str(logs)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith(f"m3kit: error: field '{field}': "), err
    assert says in lines[0]
    assert not logs.exists()


def test_run_eval_refuses_bad_run_numbers_before_a_log(tmp_path):
    from m3kit.harness.taskargs import RunNumberError

    logs = tmp_path / "logs"
    for bad in ({"limit": 0}, {"limit": -3}, {"max_connections": 0},
                {"attempt_timeout": -5}, {"max_retries": 0}, {"limit": 2.5}):
        with pytest.raises(RunNumberError) as info:
            run_benchmark_task("synth_nback", "m3kit/builtin", log_dir=logs, **bad)
        assert info.value.field == next(iter(bad))
    assert not logs.exists()
