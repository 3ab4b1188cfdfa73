"""``--max-retries N`` is N requests in total; a run in which every sample failed (or more than
``--max-failed``) exits non-zero with the reasons counted."""

from __future__ import annotations

from collections import Counter

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.task import m3eval_task
from m3kit.cli.main import main
from m3kit.harness.failures import (
    FailureCount,
    RunFailedError,
    check_failures,
    count_failures,
    failure_kind,
)

ALWAYS_500 = ["server_error"] * 20


@pytest.mark.parametrize("attempts", [1, 2])
def test_max_retries_counts_requests_in_total(tmp_path, scripted, serve, questions, attempts):
    server = scripted(faults={q.id: ALWAYS_500 for q in questions[:2]})
    model = serve("always500", server)
    task = m3eval_task(questions[:2], name="always500", frames=0, cache=False)
    log = run_benchmark_task(task, model, log_dir=tmp_path / "logs", max_retries=attempts)

    assert Counter(r.key for r in server.records) == {"q0": attempts, "q1": attempts}
    count = count_failures(log)
    assert count == FailureCount(total=2, failed=2, kinds=[("model: InternalServerError", 2)])
    with pytest.raises(RunFailedError) as info:
        check_failures(log)
    assert info.value.reason == "2 of 2 samples failed: 2× model: InternalServerError"


def test_max_retries_below_one_is_refused(tmp_path, scripted, serve, questions):
    from m3kit.errors import M3kitError

    model = serve("never", scripted())
    with pytest.raises(M3kitError, match="at least 1"):
        run_benchmark_task(m3eval_task(questions[:1], name="never", frames=0), model,
                           log_dir=tmp_path / "logs", max_retries=0)


def _eval(suite_dir, model, log_dir, *options: str) -> list[str]:
    return ["eval", "synth_interference", "--model", model, "-T", f"suite={suite_dir}",
            "-T", "frames=0", "--log-dir", str(log_dir), "--no-cache", "--max-retries", "1",
            *options]


def test_cli_exits_non_zero_when_every_sample_failed(tmp_path, scripted, serve, suite_dir,
                                                     capsys):
    server = scripted(faults={f"q{i}": ALWAYS_500 for i in range(3)})
    model = serve("down", server)
    code = main(_eval(suite_dir, model, tmp_path / "logs"))
    err = capsys.readouterr().err
    assert code == 2
    # beside the progress lines a run in a pipe writes (tests/harness/test_dead_server.py)
    lines = [line for line in err.splitlines() if line.strip() and "samples done" not in line]
    assert len(lines) == 1 and lines[0].startswith("m3kit: error: ")
    assert lines[0].endswith(": 3 of 3 samples failed: 3× model: InternalServerError")
    assert len(server.records) == 3  # one request per sample: --max-retries 1


def test_cli_max_failed(tmp_path, scripted, serve, suite_dir, capsys):
    server = scripted(faults={"q1": ALWAYS_500})  # one of the three samples fails
    model = serve("flaky", server)
    assert main(_eval(suite_dir, model, tmp_path / "a")) == 0  # default: only all-failed fails
    assert main(_eval(suite_dir, model, tmp_path / "b", "--max-failed", "1")) == 0
    capsys.readouterr()
    assert main(_eval(suite_dir, model, tmp_path / "c", "--max-failed", "0")) == 2
    err = capsys.readouterr().err
    assert err.strip().endswith(
        ": 1 of 3 samples failed: 1× model: InternalServerError (more than --max-failed 0)")


def test_failure_kinds_and_their_description():
    assert failure_kind("model: APIConnectionError: Connection error.") == (
        "model: APIConnectionError")
    assert failure_kind("media: MediaError: clip.mp4: cannot decode") == "media: MediaError"
    assert failure_kind("model: no reply") == "model: no reply"
    many = FailureCount(total=12, failed=9, kinds=[("a: X", 4), ("b: Y", 2), ("c: Z", 1),
                                                   ("d: W", 1), ("e: V", 1)])
    assert many.describe() == "9 of 12 samples failed: 4× a: X; 2× b: Y; 1× c: Z; 2× other reasons"
    assert FailureCount(total=3, failed=0, kinds=[]).describe() == "0 of 3 samples failed"
