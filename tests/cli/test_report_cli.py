"""``m3kit report`` end to end on real eval logs (synthetic tasks answered by ``m3kit/builtin``),
and its one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="session")
def synth_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of real eval logs: interference with both repetition probes, N-back, and a
    blind N-back run, each on a tiny synthetic suite. ``frames=0`` keeps the builtin model off
    OCR (seconds instead of a minute on a shared CPU); the report reads logs, not pixels."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.synth import SuiteConfig, build_suite

    root = tmp_path_factory.mktemp("report_e2e")
    config = SuiteConfig(
        pairs=1, beats=8, evidence=["text"], paradigms=["interference", "nback"],
        interference_questions=1, nback_n=[1, 2], nback_k=[3], nback_trials=1,
        size=(160, 120), fps=4.0,
    )
    suite = build_suite(root / "suite", config)
    logs = root / "logs"
    common = {"log_dir": logs, "cache": False}
    args = {"suite": str(suite.root), "frames": 0}
    run_benchmark_task("synth_interference", "m3kit/builtin", task_args=args, **common)
    run_benchmark_task("synth_nback", "m3kit/builtin", task_args=args, limit=4, **common)
    run_benchmark_task("synth_nback", "m3kit/builtin", limit=4, task_args={**args, "blind": True},
                       **common)
    return logs


def test_report_from_a_folder_of_real_logs(synth_logs: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]):
    from inspect_ai.log import read_eval_log

    from m3kit.benchmarks.m3eval.score import scores_from_log
    from m3kit.report.logs import read_samples

    out = tmp_path / "report"
    assert main(["report", str(synth_logs), "--out", str(out), "--title", "tiny"]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out / 'index.html'}"
    page = (out / "index.html").read_text()
    assert "<title>tiny</title>" in page
    for name in ("Table 1: Divided Attention", "Table 2: Memory Interference",
                 "Table 3: Interleaved Events"):
        assert name in page
    # interference (with repeats) and N-back were run: Figures 8, 10 and 11; no source memory
    figures = sorted(p.name for p in out.glob("*.png"))
    assert figures == ["fig10_nback_attribute.png", "fig11_nback_n_k.png",
                       "fig8_repetition.png"]
    assert all((out / f).read_bytes()[:8] == PNG_MAGIC for f in figures)
    assert "Figure 9 needs" in page
    # the plotted numbers are the logs' own scores
    logs = [read_eval_log(str(p)) for p in sorted(synth_logs.glob("*.eval"))]
    interference = next(log for log in logs if log.eval.task.endswith("synth_interference"))
    expected = scores_from_log(read_samples(interference)).model_dump()["memory_interference"]
    fig8 = json.loads((out / "fig8_repetition.json").read_text())
    [series] = fig8["series"]
    assert series["label"] == "m3kit/builtin"
    assert series["y"] == [expected[c]["accuracy"] for c in
                           ("retroactive", "repeat_target", "repeat_interferer")]
    fig10 = json.loads((out / "fig10_nback_attribute.json").read_text())
    # the blind run sits beside the full one
    assert [s["label"] for s in fig10["series"]] == ["m3kit/builtin", "m3kit/builtin (blind)"]
    markdown = (out / "tables.md").read_text()
    pro, retro = expected["proactive"], expected["retroactive"]
    assert f"| m3kit/builtin | {pro['accuracy']:.2f} | {retro['accuracy']:.2f} |" in markdown


def test_score_files_and_humans(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    scores = {"interleaved": {"source_identification": 43.04, "order_understanding": 50.0,
                              "content_retention": 49.09, "false_memory_discrimination": 26.32,
                              "temporal_source_grounding": 40.0},
              "divided_attention": {"spatial_source_grounding": 70.0}}
    (tmp_path / "gpt-5.4.json").write_text(json.dumps(scores))
    humans = tmp_path / "humans.json"
    humans.write_text(json.dumps({"interleaved": {"source_identification": 75.95}}))
    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "gpt-5.4.json"), "--out", str(out),
                 "--humans", str(humans)]) == 0
    markdown = (out / "tables.md").read_text()
    assert "| Human | 75.95 | — | — | — |" in markdown
    assert "| gpt-5.4 | 43.04 | 50.00 | 49.09 | 26.32 |" in markdown
    assert (out / "fig9_source_grounding.png").read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("content, message", [
    (None, "no such file or folder"),
    ('{"hello": 1}', "neither an inspect eval log nor an M3Eval score file"),
    ("not json", "not readable as JSON"),
])
def test_bad_inputs_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        content: str | None, message: str):
    path = tmp_path / "input.json"
    if content is not None:
        path.write_text(content)
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"m3kit: error: {path}: ") and message in err
    assert "\n" not in err


def test_a_broken_eval_file_is_a_one_line_error(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "run.eval"
    path.write_bytes(b"PK\x03\x04 truncated")
    assert main(["report", str(path), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"m3kit: error: {path}: not a readable eval log") and "\n" not in err


def test_a_log_given_twice_counts_once(synth_logs: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]):
    once, twice = tmp_path / "once", tmp_path / "twice"
    assert main(["report", str(synth_logs), "--out", str(once)]) == 0
    assert main(["report", str(synth_logs), str(synth_logs), "--out", str(twice)]) == 0
    for name in ("fig8_repetition.json", "fig11_nback_n_k.json", "tables.md"):
        assert (once / name).read_text() == (twice / name).read_text()
    counts = (once / "tables.md").read_text()
    # 4 interference + 4 N-back samples of the full run, none invalid (the builtin model
    # always answers in the required form), none excluded
    assert "| m3kit/builtin | 8 | 0 | 0 | 0 | 0 |" in counts


def test_a_truncated_json_beside_a_good_log_is_skipped_with_a_warning(
        synth_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture):
    import logging
    import shutil

    runs = tmp_path / "runs"
    runs.mkdir()
    good = min(synth_logs.glob("*nback*.eval"))
    shutil.copy(good, runs / good.name)
    (runs / "bad.json").write_text('{"eval": {"task": "x"}, "version": 2')
    out = tmp_path / "report"
    with caplog.at_level(logging.WARNING, logger="m3kit.report.inputs"):
        assert main(["report", str(runs), "--out", str(out)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {out / 'index.html'}"
    (warning,) = [r.getMessage() for r in caplog.records if "bad.json" in r.getMessage()]
    assert warning.startswith(f"skipped {runs / 'bad.json'}: not readable as JSON")
    assert "fig10_nback_attribute.png" in (out / "index.html").read_text()  # the good log's
    # the same file named on its own is an error, as before
    assert main(["report", str(runs / "bad.json"), "--out", str(out)]) == 2
    assert "not readable as JSON" in capsys.readouterr().err
