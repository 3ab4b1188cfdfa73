"""``m3kit compare`` and ``m3kit report --baseline`` end to end: real eval logs of the synthetic
N-Back suite answered by ``m3kit/builtin`` (with frames and blind), two Video-MME-v2
predictions files, and the one-line refusals (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main

from ..benchmarks.videomme_v2.conftest import gold_letter, rows, write_table


@pytest.fixture(scope="module")
def builtin_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three runs of ``synth_nback`` by ``m3kit/builtin``, each in its own folder: the first 6
    questions with frames (``frames=0`` keeps the builtin model off OCR, so it runs in
    seconds), the same 6 blind, and the first 2 only."""
    from m3kit.benchmarks import run_eval
    from m3kit.synth import SuiteConfig, build_suite

    root = tmp_path_factory.mktemp("compare_e2e")
    config = SuiteConfig(pairs=1, beats=8, evidence=["text"], paradigms=["nback"],
                         nback_n=[1, 2], nback_k=[3], nback_trials=2, size=(160, 120), fps=4.0)
    suite = build_suite(root / "suite", config)
    args = {"suite": str(suite.root), "frames": 0}
    runs = {"full": (args, 6), "blind": ({**args, "blind": True}, 6), "two": (args, 2)}
    for name, (task_args, limit) in runs.items():
        run_eval("synth_nback", "m3kit/builtin", task_args=task_args, limit=limit,
                 log_dir=root / name, cache=False)
    return {name: root / name for name in runs}


def _statuses(folder: Path) -> dict[str, str]:
    from inspect_ai.log import read_eval_log

    from m3kit.report.logs import read_samples

    (log,) = [read_eval_log(str(p)) for p in folder.glob("*.eval")]
    return {s.id: s.status for s in read_samples(log)}


def test_compare_two_logs(builtin_runs: dict[str, Path],
                          capsys: pytest.CaptureFixture[str]) -> None:
    full, blind = builtin_runs["full"], builtin_runs["blind"]
    assert main(["compare", str(full), str(blind), "--json", "--resamples", "300"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    # the blind flag is the one card field besides the model that differs between the runs
    assert "the runs' cards differ in " in err and "blind" in result["card_differences"]
    assert not any(f.startswith("model") for f in result["card_differences"])
    a, b = _statuses(full), _statuses(blind)
    assert sorted(a) == sorted(b) and len(a) == 6
    right_a = {q for q, s in a.items() if s == "correct"}
    right_b = {q for q, s in b.items() if s == "correct"}
    assert (result["a"], result["b"], result["n_shared"]) == (
        "m3kit/builtin", "m3kit/builtin (blind)", 6)
    accuracy = result["numbers"]["nback_accuracy"]
    assert accuracy["a"] == pytest.approx(100 * len(right_a) / 6)
    assert accuracy["b"] == pytest.approx(100 * len(right_b) / 6)
    assert result["mcnemar"]["b"] == len(right_a - right_b)
    assert result["mcnemar"]["c"] == len(right_b - right_a)
    assert result["resamples"] == 300

    assert main(["compare", str(full), str(blind)]) == 0
    text = capsys.readouterr().out
    assert "M3Eval: A = m3kit/builtin" in text and "nback_accuracy" in text
    assert "Differences without * are inside the noise" in text
    assert "intrusion_rate" not in text  # no question of the run offers an intrusion


def test_different_question_sets_refuse_in_one_line(builtin_runs: dict[str, Path],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(builtin_runs["full"]), str(builtin_runs["two"])]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("m3kit: error: ") and "\n" not in err
    assert "share 2 of 6 questions" in err and "different question sets" in err


@pytest.mark.parametrize("argv", [
    ["compare", "one.eval"],
    ["compare", "--score", "videomme-v2", "--predictions", "a.jsonl"],
    ["compare", "a.eval", "b.eval", "--data", "d"],
])
def test_incomplete_inputs_say_what_to_give(argv: list[str],
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "give two runs: 'm3kit compare LOG_A LOG_B'" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["compare", "a.eval", "b.eval", "--level", "1.5"],
     "field '--level': the level must be in (0, 1), got 1.5"),
    (["compare", "a.eval", "b.eval", "--resamples", "0"],
     "field '--resamples': resamples must be >= 1, got 0"),
])
def test_bad_bootstrap_settings(argv: list[str], message: str,
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"m3kit: error: {message}"


def test_unknown_score_verb(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", "--score", "mmlu", "--data", str(tmp_path), "--predictions", "a",
            "--predictions", "b"]
    assert main(argv) == 2
    assert "field '--score': unknown benchmark 'mmlu' (one of m3eval" in capsys.readouterr().err


def test_report_with_a_baseline(builtin_runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "report"
    argv = ["report", str(builtin_runs["full"]), str(builtin_runs["blind"]), "--out", str(out),
            "--baseline", str(builtin_runs["full"])]
    assert main(argv) == 0
    page = (out / "index.html").read_text()
    assert "M3Eval: comparison with baseline m3kit/builtin" in page
    assert "m3kit/builtin (blind) vs baseline m3kit/builtin (6 shared questions)" in page
    assert "Δ vs baseline" in page
    # the baseline itself, among the inputs, is not compared with itself
    assert "m3kit/builtin vs baseline" not in page
    assert "Differences without * are inside the noise" in page


def _predictions(path: Path, wrong: set[str]) -> Path:
    lines = []
    for row in rows():
        qid = row["question_id"]
        gold = gold_letter(row["video_id"], int(qid.rsplit("-", 1)[1]))
        answer = ("H" if gold != "H" else "G") if qid in wrong else gold
        lines.append(json.dumps({"question_id": qid, "prediction": answer}) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_compare_two_predictions_files(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    data = write_table(tmp_path / "test.jsonl", rows())
    a = _predictions(tmp_path / "a.jsonl", {"001-4", "002-4", "003-4"})
    b = _predictions(tmp_path / "b.jsonl", set())
    argv = ["compare", "--score", "videomme-v2", "--data", str(data), "--predictions", str(a),
            "--predictions", str(b)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    # Avg Acc 81.25 -> 100 (+18.75) and Non-Lin significant; McNemar b=0, c=3: p = 0.25
    assert "avg_acc" in text and "81.25" in text and "+18.75*" in text
    assert "+32.29*" in text
    assert "3 right in B only, p = 0.25" in text
    assert main([*argv, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["numbers"]["avg_acc"]["diff"] == 18.75
    assert result["mcnemar"] == {"n": 16, "b": 0, "c": 3, "p_value": 0.25}
