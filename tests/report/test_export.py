"""``m3kit export``: one row per sample of a real run's log, through the one log reader:
id, question, prediction, parsed answer, scores, cost, settings; JSON Lines at full precision
and CSV with flattened score and settings columns."""

from __future__ import annotations

import csv
import io
import json
import logging
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.cli.main import main
from m3kit.report.export import export_rows, write_rows
from m3kit.report.logs import read_samples
from m3kit.schema import write_jsonl

pytestmark = pytest.mark.usefixtures("isolated_dirs")


@pytest.fixture
def log(tmp_path: Path, probe_video: Path, make_q, scripted, serve):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl", [make_q(i, Path("probe.mp4")) for i in range(3)])
    server = scripted(answers={"q1": "Hmm.\nThe final answer is B"},
                      faults={"q2": ["server_error"] * 5})
    return run_benchmark_task("synth_interference", serve("export", server),
                              task_args={"suite": str(suite), "frames": 2},
                              log_dir=tmp_path / "logs", max_retries=1)


def test_rows_are_the_samples_as_the_tables_read_them(log) -> None:
    rows = {r.id: r for r in export_rows([log])}
    samples = {s.id: s for s in read_samples(log)}
    assert set(rows) == set(samples) == {"q0", "q1", "q2"}
    q0, q1, q2 = rows["q0"], rows["q1"], rows["q2"]
    assert q0.task == "synth_interference" and q0.model.endswith("/scripted")
    assert q0.question == samples["q0"].question.text and q0.gold == "A"
    assert q0.prediction == "The final answer is A" and q0.parsed == "A"
    assert q0.status == "correct" and q0.reason is None
    assert q1.parsed == "B" and q1.status == "incorrect" and q1.scores["role"] == "intrusion"
    assert q2.status == "failed" and "InternalServerError" in q2.reason
    assert q0.images_sent == 2 and q0.prompt_tokens == samples["q0"].usage.prompt_tokens
    assert q0.settings["model"] == q0.model and q0.settings["blind"] == "no"


def test_jsonl_and_csv(log, tmp_path: Path, capsys) -> None:
    assert main(["export", log.location]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r.id for r in export_rows([log])]
    out = tmp_path / "rows.csv"
    assert main(["export", str(Path(log.location).parent), "--format", "csv",
                 "--out", str(out)]) == 0
    table = list(csv.DictReader(out.open()))
    assert len(table) == 3
    assert {"id", "question", "prediction", "parsed", "scores.role", "prompt_tokens",
            "settings.model"} <= set(table[0])
    by_id = {row["id"]: row for row in table}
    assert by_id["q1"]["parsed"] == "B" and by_id["q2"]["status"] == "failed"
    buffer = io.StringIO()
    write_rows(export_rows([log]), "csv", buffer)
    assert buffer.getvalue() == out.read_text()
    assert main(["export", log.location, "--format", "xlsx"]) == 2


def test_a_damaged_log_beside_is_named_once(log, tmp_path: Path, capsys,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """As ``m3kit report`` names it: one warning (the reader's), not one more from export."""
    folder = Path(log.location).parent
    damaged = folder / "2025-01-01_synth_interference_cut.eval"
    damaged.write_bytes(b"PK\x03\x04 cut short by a kill")
    with caplog.at_level(logging.WARNING):
        assert main(["export", str(folder), "--format", "csv", "--out",
                     str(tmp_path / "rows.csv")]) == 0
    said = [r.getMessage() for r in caplog.records] + capsys.readouterr().err.splitlines()
    (named,) = [line for line in said if str(damaged) in line]
    assert named.startswith(f"skipped {damaged}: not a readable eval log")
    assert len(list(csv.DictReader((tmp_path / "rows.csv").open()))) == 3


def test_rows_name_their_log_and_run(tmp_path: Path, probe_video: Path, make_q) -> None:
    """Two runs of the same questions made the same way (two quickstarts, a rerun) are one
    system, as the report pools them: each sample once, from the later run, named by its log
    file and inspect's run and eval ids; each log exported alone gives its own rows."""
    from inspect_ai.log import read_eval_log

    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl", [make_q(i, Path("probe.mp4")) for i in range(2)])
    logs = [run_benchmark_task("synth_interference", "m3kit/builtin",
                               task_args={"suite": str(suite), "frames": 0},
                               log_dir=tmp_path / name, cache=False)
            for name in ("first", "second")]
    out = tmp_path / "rows.csv"
    assert main(["export", str(tmp_path / "first"), str(tmp_path / "second"), "--format", "csv",
                 "--out", str(out)]) == 0
    table = list(csv.DictReader(out.open()))
    assert len(table) == 2 and {"log", "run_id", "eval_id"} <= set(table[0])
    assert sorted(row["id"] for row in table) == ["q0", "q1"]
    # the ids the later log records, read back from the file the rows name
    header = read_eval_log(logs[1].location, header_only=True).eval
    assert {(row["log"], row["run_id"], row["eval_id"]) for row in table} == {
        (logs[1].location, header.run_id, header.eval_id)}
    for log in logs:
        assert [(r.id, r.log) for r in export_rows([log])] == [
            ("q0", log.location), ("q1", log.location)]


def _as_killed(log, kept: int) -> None:
    """Rewrite ``log`` as a run killed after ``kept`` samples leaves it: those samples, status
    ``error``, no results (a real kill and its resume: ``tests/harness/test_resume.py``)."""
    from inspect_ai.log import write_eval_log

    write_eval_log(log.model_copy(update={"status": "error", "samples": log.samples[:kept],
                                          "results": None}), log.location)


def test_a_resumed_run_is_one_row_per_question(tmp_path: Path, probe_video: Path,
                                               make_q) -> None:
    """A run killed, resumed, killed again and resumed: three logs in its folder, one row per
    question, each from the log that holds its final answer (the report's pooling)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl", [make_q(i, Path("probe.mp4")) for i in range(4)])
    log_dir = tmp_path / "logs"
    options = {"task_args": {"suite": str(suite), "frames": 0}, "log_dir": log_dir,
               "cache": False}
    first = run_benchmark_task("synth_interference", "m3kit/builtin", **options)
    _as_killed(first, 1)
    second = run_benchmark_task("synth_interference", "m3kit/builtin", resume=True, **options)
    _as_killed(second, 2)
    final = run_benchmark_task("synth_interference", "m3kit/builtin", resume=True, **options)
    assert final.status == "success" and len(list(log_dir.glob("*.eval"))) == 3

    out = tmp_path / "rows.jsonl"
    assert main(["export", str(log_dir), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == ["q0", "q1", "q2", "q3"]
    # the finished samples are carried into each resumed log: all come from the final one
    assert {r["log"] for r in rows} == {final.location}
    assert {r["eval_id"] for r in rows} == {final.eval.eval_id}
    # the same run as the report reads it
    from m3kit.benchmarks import benchmark_named
    from m3kit.report.inputs import pooled_runs, read_inputs

    (run,) = pooled_runs(benchmark_named("m3eval"), read_inputs([log_dir]).logs)
    assert sorted(s.id for s in run.samples) == sorted(r["id"] for r in rows)
