"""A run's results file (``m3kit.report.results``, ``m3kit.schema.results``): written by
``m3kit eval`` beside its log, its numbers exactly the printed summary's (the same code builds
both: compared unrounded and as the summary prints them), for failed-sample runs too, with the
run's public card and no credential."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks import benchmark_for_task
from m3kit.benchmarks.intervals import HeadlineIntervals, interval_lines, log_intervals
from m3kit.cli.main import main
from m3kit.report.logs import logged_card, read_samples
from m3kit.report.summary import summary_table
from m3kit.schema import write_jsonl
from m3kit.schema.results import RESULTS_VERSION, RunResults

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # runs the harness: caches per test


def _run(args: list[str], log_dir: Path, capsys: pytest.CaptureFixture[str]) -> RunResults:
    """``m3kit eval ARGS`` -> the results file beside its one log (checked: there, named
    after the log)."""
    code = main(["eval", *args, "--log-dir", str(log_dir), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0, out
    (log,) = log_dir.glob("*.eval")
    assert f"log: {log}" in out
    path = log.with_name(f"results-{log.stem}.json")
    results = RunResults.model_validate_json(path.read_text())
    assert results.log == str(log) and results.version == RESULTS_VERSION
    return results


def _same_as_summary(results: RunResults, task: str) -> None:
    """The file's numbers are those of the summary ``m3kit eval`` printed, exactly."""
    from inspect_ai.log import read_eval_log

    log = read_eval_log(results.log)
    benchmark = benchmark_for_task(task)
    samples = read_samples(log)
    intervals = log_intervals(benchmark, samples)
    # unrounded: every headline number, its bounds and units, equal to the float
    assert {k: v.model_dump() for k, v in results.headline.items()} == \
        {k: v.model_dump() for k, v in intervals.ci.items()}
    assert results.printed == dict(benchmark.summary_intervals)
    # as the summary prints them: the file's numbers give the summary's interval lines
    from_file = HeadlineIntervals(ci=results.model_dump()["headline"], ci_unit=results.ci_unit,
                                  ci_level=results.ci_level, ci_resamples=results.ci_resamples,
                                  ci_seed=results.ci_seed)
    table = summary_table(log)
    assert table.intervals
    assert interval_lines(from_file, benchmark.summary_intervals,
                          spec=benchmark.summary_format) == table.intervals
    assert results.n == len(samples)
    assert results.score == benchmark.scoring.load().scores_from_log(samples).score_json()
    card = logged_card(log)
    assert card is not None and results.card == card


def test_m3eval_results_equal_the_summary_with_failures_and_no_secret(
        tmp_path, probe_video, make_q, scripted, serve, secret, capsys) -> None:
    """A synth run where one sample fails (server errors past the retries) and the loader
    skips a record: the file counts both, its numbers are the summary's, and it holds no
    trace of the API key."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl",
                [make_q(i, Path("probe.mp4"), condition=c)
                 for i, c in enumerate(("far", "near", "far", "near"))])
    with (suite / "questions.jsonl").open("a") as f:
        f.write('{"id": "broken"}\n')
    server = scripted(answers={"q0": "The final answer is A", "q1": "The final answer is B",
                               "q2": "The final answer is A"},
                      faults={"q3": ["server_error"] * 5}, api_key=secret)
    model = serve("results", server)
    results = _run(["synth_interference", "--model", model, "-T", f"suite={suite}",
                    "-T", "frames=1", "--max-retries", "1"], tmp_path / "logs", capsys)
    assert results.failures.failed == 1 and results.failures.total == 4
    assert [s.id for s in results.failed_samples] == ["q3"]
    assert "\n" not in results.failed_samples[0].reason
    assert results.failures.kinds and results.skipped_records == 1
    _same_as_summary(results, "synth_interference")
    path = Path(results.log).with_name(f"results-{Path(results.log).stem}.json")
    assert secret not in path.read_text()
    assert results.card is not None and results.card.model == model


def test_videomme_results_equal_the_summary(tmp_path, probe_video, capsys) -> None:
    from ..benchmarks.videomme_v2.conftest import write_release

    release = write_release(tmp_path / "rel", probe_video)
    results = _run(["videomme_v2", "--model", "m3kit/builtin", "-M", "ocr=false",
                    "-T", f"data={release}", "--limit", "4"], tmp_path / "logs", capsys)
    assert results.benchmark == "videomme_v2" and results.failures.failed == 0
    _same_as_summary(results, "videomme_v2")


def test_json_is_never_rounded() -> None:
    """A value with many digits is written as the float it is."""
    from m3kit.schema.failures import FailureCount
    from m3kit.schema.results import HeadlineNumber

    value = 2 / 3 * 100
    results = RunResults(task="t", model="m", status="success", log="x.eval", n=3,
                         headline={"accuracy": HeadlineNumber(value=value, lo=1 / 7, hi=99.9999,
                                                              n_units=3)},
                         failures=FailureCount.of([None, None, None]))
    again = json.loads(results.model_dump_json())["headline"]["accuracy"]
    assert again["value"] == value and again["lo"] == 1 / 7
