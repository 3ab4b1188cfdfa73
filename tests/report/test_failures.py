"""What ``m3kit eval`` prints under its table about failures (``m3kit.report.failures``): the
count by kind of reason and the first reasons in full, on hand-made samples; and on a real run
against a server that answers HTTP 500, where the run's status is still ``success``."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.cli.main import main
from m3kit.report.failures import SHOW_REASONS, failure_lines
from m3kit.schema import LoggedSample, write_jsonl
from m3kit.schema.evallog import ScoreItem


def _ok(i: int) -> LoggedSample:
    return LoggedSample(id=f"q{i}", item=ScoreItem(status="correct"))


def _failed(i: int, reason: str) -> LoggedSample:
    return LoggedSample(id=f"q{i}", failure=reason, item=ScoreItem(status="failed"))


def test_a_run_without_failures_prints_nothing() -> None:
    assert failure_lines([_ok(0), _ok(1)]) == []


def test_failures_are_counted_by_kind_and_the_first_shown() -> None:
    samples = [
        _ok(0),
        _failed(1, "model: InternalServerError: Error code: 500 - boom"),
        _failed(2, "model: InternalServerError: Error code: 500 - boom again"),
        _failed(3, "model: APIConnectionError: Connection error."),
        _failed(4, "model: InternalServerError: Error code: 500 - third"),
        # inspect's own error (no score record), counted too
        LoggedSample(id="q5", error="RuntimeError: the solver crashed"),
    ]
    lines = failure_lines(samples)
    # most common first, ties in name order
    assert lines[0] == ("5 of 6 samples failed: 3× model: InternalServerError; 1× "
                        "RuntimeError: the solver crashed; 1× model: APIConnectionError "
                        "(counted wrong)")
    assert lines[1:1 + SHOW_REASONS] == [
        "  q1: model: InternalServerError: Error code: 500 - boom",
        "  q2: model: InternalServerError: Error code: 500 - boom again",
        "  q3: model: APIConnectionError: Connection error.",
    ]
    assert lines[-1] == "  ... and 2 more (each sample's error in the log)"


def test_unreadable_media_is_said_to_be_excluded() -> None:
    lines = failure_lines([_ok(0), _failed(1, "media: missing.mp4: file not found")])
    assert lines[0].endswith("(failures counted wrong, unreadable media excluded)")


def test_judge_failures_are_listed() -> None:
    judged = M3ExamItem(status="incorrect", question_type="ss", em=0.0, f1=0.0, bleu1=0.0,
                        kind="text", judged=True, in_total=True, llm_judge=0.0,
                        judge_failure="judge reply states no rubric level (scored 0)")
    fine = judged.model_copy(update={"judge_failure": None, "llm_judge": 1.0})
    lines = failure_lines([LoggedSample(id="a", item=judged), LoggedSample(id="b", item=fine)])
    assert lines == ["judge: 1 item(s) got no usable verdict from the judge (scored 0)",
                     "  a: judge reply states no rubric level (scored 0)"]
    # the record keeps the field only where set (a score's metadata stays as it was)
    assert "judge_failure" not in fine.to_metadata()
    assert M3ExamItem.from_metadata(judged.to_metadata()) == judged


@pytest.mark.usefixtures("isolated_dirs")
@pytest.mark.slow
def test_http_500_is_shown_under_the_table(tmp_path: Path, probe_video: Path, make_q,
                                           scripted, serve, capsys) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl", [make_q(i, Path("probe.mp4")) for i in range(3)])
    server = scripted(faults={"q1": ["server_error"] * 10})
    model = serve("failing", server)
    code = main(["eval", "synth_interference", "--model", model, "-T", f"suite={suite}",
                 "-T", "frames=2", "--max-retries", "2", "--log-dir", str(tmp_path / "logs"),
                 "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out  # one failure of three: the run stands, and says so
    assert "success" in out  # inspect's status: the failure is visible all the same
    assert "1 of 3 samples failed: 1× model: InternalServerError (counted wrong)" in out
    assert "q1: model: InternalServerError: Error code: 500" in out
