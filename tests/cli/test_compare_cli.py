"""``m3kit compare`` and ``m3kit report --baseline`` end to end: real eval logs of the synthetic
N-Back suite answered by ``m3kit/builtin`` (with frames and blind), two Video-MME-v2
predictions files, and the one-line refusals (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from m3kit.cli.main import main

from ..benchmarks.videomme_v2.conftest import gold_letter, rows, write_table


@pytest.fixture(scope="module")
def builtin_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three runs of ``synth_nback`` by ``m3kit/builtin``, each in its own folder: the first 6
    questions with frames (``frames=0`` keeps the builtin model off OCR, so it runs in
    seconds), the same 6 blind, and the first 2 only."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.synth import SuiteConfig, build_suite

    root = tmp_path_factory.mktemp("compare_e2e")
    config = SuiteConfig(pairs=1, beats=8, evidence=["text"], paradigms=["nback"],
                         nback_n=[1, 2], nback_k=[3], nback_trials=2, size=(160, 120), fps=4.0)
    suite = build_suite(root / "suite", config)
    args = {"suite": str(suite.root), "frames": 0}
    runs = {"full": (args, 6), "blind": ({**args, "blind": True}, 6), "two": (args, 2)}
    for name, (task_args, limit) in runs.items():
        run_benchmark_task("synth_nback", "m3kit/builtin", task_args=task_args, limit=limit,
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
    # --json prints the comparisons keyed by benchmark, each a list: one pair of systems here
    (result,) = json.loads(out)["m3eval"]
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
    text = " ".join(capsys.readouterr().out.split())  # wrapped at 80 columns
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
    text = " ".join(capsys.readouterr().out.split())  # wrapped at 80 columns
    # Avg Acc 81.25 -> 100 (+18.75), Non-Lin +32.29; their intervals exclude 0, but the 4
    # groups are under MIN_UNITS: no p and no *; McNemar b=0, c=3: p = 0.25
    assert "avg_acc" in text and "81.25" in text and "+18.75 " in text
    assert "+32.29 " in text and "*" not in text.split("McNemar")[0]
    assert "3 right in B only, p = 0.25" in text
    assert main([*argv, "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["videomme_v2"]
    assert result["numbers"]["avg_acc"]["diff"] == 18.75
    assert result["mcnemar"] == {"n": 16, "b": 0, "c": 3, "p_value": 0.25}


# -- folders of several systems, as a quickstart writes them ----------------------------------


def _folder(root: Path, *sources: Path) -> Path:
    """A folder holding the logs of ``sources`` (each one system's run)."""
    root.mkdir()
    for source in sources:
        for log in source.glob("*.eval"):
            shutil.copy(log, root / f"{source.name}-{log.name}")
    return root


def _flip_first_right(source: Path, dest: Path) -> str:
    """``source``'s log written to ``dest`` with its first right answer scored wrong; the id of
    that question."""
    from inspect_ai.log import read_eval_log, write_eval_log

    (path,) = source.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.samples is not None
    for sample in log.samples:
        scores = [s for s in (sample.scores or {}).values()
                  if (s.metadata or {}).get("status") == "correct"]
        if scores:
            for score in scores:
                score.metadata = {**(score.metadata or {}), "status": "incorrect"}
                score.value = 0.0
            dest.mkdir()
            write_eval_log(log, str(dest / path.name))
            return str(sample.id)
    raise AssertionError("the builtin model answered no question right")


@pytest.fixture(scope="module")
def two_systems(builtin_runs: dict[str, Path],
                tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """Run A: the full and the blind run in one folder. Run B: the same, but the full run with
    its first right answer scored wrong. Run C: the full run alone."""
    root = tmp_path_factory.mktemp("two_systems")
    flipped = _flip_first_right(builtin_runs["full"], root / "flipped")
    return {
        "a": _folder(root / "a", builtin_runs["full"], builtin_runs["blind"]),
        "b": _folder(root / "b", root / "flipped", builtin_runs["blind"]),
        "c": _folder(root / "c", builtin_runs["full"]),
        "flipped": flipped,
    }


def test_folders_of_two_systems_compare_pairwise(builtin_runs: dict[str, Path],
                                                 two_systems: dict[str, Any],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_systems["a"], two_systems["b"]
    assert main(["compare", str(a), str(b), "--json", "--resamples", "300"]) == 0
    full, blind = json.loads(capsys.readouterr().out)["m3eval"]
    assert (full["a"], full["b"]) == ("m3kit/builtin", "m3kit/builtin")
    assert (blind["a"], blind["b"]) == ("m3kit/builtin (blind)", "m3kit/builtin (blind)")
    assert (full["source_a"], full["source_b"]) == (str(a), str(b))
    right = {q for q, s in _statuses(builtin_runs["full"]).items() if s == "correct"}
    assert two_systems["flipped"] in right
    # the full runs differ by the one flipped answer: 100/6 points, right in A only;
    # McNemar b = 1, c = 0: p = min(1, 2 * (1/2)**1) = 1
    accuracy = full["numbers"]["nback_accuracy"]
    assert accuracy["a"] == pytest.approx(100 * len(right) / 6)
    assert accuracy["b"] == pytest.approx(100 * (len(right) - 1) / 6)
    assert accuracy["diff"] == pytest.approx(-100 / 6)
    assert full["mcnemar"] == {"n": 6, "b": 1, "c": 0, "p_value": 1.0}
    # the blind runs are the same log: every difference 0, its interval [0, 0]
    same = blind["numbers"]["nback_accuracy"]
    assert (same["diff"], same["lo"], same["hi"]) == (0.0, 0.0, 0.0)
    assert blind["mcnemar"] == {"n": 6, "b": 0, "c": 0, "p_value": 1.0}

    assert main(["compare", str(a), str(b)]) == 0
    text = " ".join(capsys.readouterr().out.split())  # wrapped at 80 columns
    assert f"M3Eval: A = m3kit/builtin ({a}), B = m3kit/builtin ({b})" in text
    assert f"M3Eval: A = m3kit/builtin (blind) ({a}), B = m3kit/builtin (blind) ({b})" in text
    assert "1 right in A only, 0 right in B only, p = 1" in text

    argv = ["compare", str(a), str(b), "--json", "--system", "m3kit/builtin (blind)"]
    assert main(argv) == 0
    (only,) = json.loads(capsys.readouterr().out)["m3eval"]
    assert only["a"] == only["b"] == "m3kit/builtin (blind)"


def test_systems_of_one_side_only_are_listed_and_left_out(two_systems: dict[str, Any],
                                                         capsys: pytest.CaptureFixture[str]
                                                         ) -> None:
    assert main(["compare", str(two_systems["a"]), str(two_systems["c"]), "--json",
                 "--resamples", "100"]) == 0
    out, err = capsys.readouterr()
    (result,) = json.loads(out)["m3eval"]
    assert result["a"] == result["b"] == "m3kit/builtin"
    assert result["numbers"]["nback_accuracy"]["diff"] == 0.0
    assert "m3kit: systems only in run A, left out: m3kit/builtin (blind)" in err


def test_an_unknown_system_refuses_in_one_line(two_systems: dict[str, Any],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(two_systems["a"]), str(two_systems["b"]), "--system", "gpt"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.endswith(
        "field '--system': run A holds no system 'gpt' (its systems: m3kit/builtin, "
        "m3kit/builtin (blind))")



# -- folders of several benchmarks, as a quickstart writes them (M3Eval's and SuperMemory's) ---


@pytest.fixture(scope="module")
def two_benchmarks(builtin_runs: dict[str, Path], two_systems: dict[str, Any],
                   tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One blind SuperMemory-VQA run of ``m3kit/builtin`` on a one-person synthetic suite,
    put beside the M3Eval runs: ``a`` (the full and blind M3Eval runs + it), ``b`` (the full
    run with one answer flipped, the blind run + it), ``short`` (M3Eval's first 2 questions +
    it), ``m3eval`` (the full M3Eval run only), ``supermemory`` (it only)."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    root = tmp_path_factory.mktemp("two_benchmarks")
    suite = build_ego_suite(root / "ego", EgoSuiteConfig(
        seed=0, persons=1, sessions=2, segments=8, answerable_per_skill=1, unanswerable=2))
    run_benchmark_task("supermemory", "m3kit/builtin",
                       task_args={"data": str(suite.root), "blind": True},
                       log_dir=root / "sm", cache=False)
    flipped = two_systems["b"].parent / "flipped"
    return {
        "a": _folder(root / "a", builtin_runs["full"], builtin_runs["blind"], root / "sm"),
        "b": _folder(root / "b", flipped, builtin_runs["blind"], root / "sm"),
        "short": _folder(root / "short", builtin_runs["two"], root / "sm"),
        "m3eval": _folder(root / "m3eval", builtin_runs["full"]),
        "supermemory": _folder(root / "supermemory", root / "sm"),
    }


def test_each_benchmark_is_compared_on_its_own(builtin_runs: dict[str, Path],
                                               two_benchmarks: dict[str, Path],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_benchmarks["a"], two_benchmarks["b"]
    assert main(["compare", str(a), str(b), "--json", "--resamples", "200"]) == 0
    out, err = capsys.readouterr()
    result = json.loads(out)
    # keyed by benchmark, in name order; M3Eval's systems pairwise, SuperMemory's one pair
    assert list(result) == ["m3eval", "supermemory"]
    full, blind = result["m3eval"]
    assert (full["a"], blind["a"]) == ("m3kit/builtin", "m3kit/builtin (blind)")
    right = {q for q, s in _statuses(builtin_runs["full"]).items() if s == "correct"}
    # the one flipped answer: -100/6 points
    assert full["numbers"]["nback_accuracy"]["diff"] == pytest.approx(-100 / 6)
    assert full["numbers"]["nback_accuracy"]["a"] == pytest.approx(100 * len(right) / 6)
    (memory,) = result["supermemory"]
    questions = len(_statuses(two_benchmarks["supermemory"]))
    # the same log on both sides: every question shared, no difference, no McNemar discordance
    assert memory["benchmark"] == "supermemory" and memory["n_shared"] == questions
    assert memory["numbers"]["qa_acc"]["diff"] == 0.0
    assert memory["mcnemar"] == {"n": questions, "b": 0, "c": 0, "p_value": 1.0}
    assert "left out" not in err

    assert main(["compare", str(a), str(b), "--resamples", "200"]) == 0
    text = " ".join(capsys.readouterr().out.split())  # wrapped at 80 columns
    m3eval_at = text.index(f"M3Eval: A = m3kit/builtin ({a})")
    blind_at = text.index(f"M3Eval: A = m3kit/builtin (blind) ({a})")
    memory_at = text.index("SuperMemory-VQA: A = ")
    assert m3eval_at < blind_at < memory_at  # one after the other, benchmark by benchmark
    assert "qa_acc" in text[memory_at:] and "nback_accuracy" in text[:memory_at]


def test_a_benchmark_of_one_side_only_is_named_in_one_line(
        two_benchmarks: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["compare", str(two_benchmarks["a"]), str(two_benchmarks["m3eval"]), "--json",
            "--resamples", "100"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)) == ["m3eval"]
    lines = err.strip().splitlines()
    assert "m3kit: benchmarks in one run only, left out: supermemory (run A)" in lines
    assert "m3kit: systems only in run A, left out: m3kit/builtin (blind)" in lines
    swapped = ["compare", str(two_benchmarks["m3eval"]), str(two_benchmarks["a"]), "--json"]
    assert main(swapped) == 0
    assert ("m3kit: benchmarks in one run only, left out: supermemory (run B)"
            in capsys.readouterr().err)


def test_a_benchmark_that_cannot_be_compared_is_left_out_with_its_reason(
        two_benchmarks: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    """M3Eval's runs ask 6 and 2 questions (under half shared): left out, SuperMemory's
    compared. With M3Eval alone on each side the same is the error, exit 2."""
    argv = ["compare", str(two_benchmarks["m3eval"]), str(two_benchmarks["short"]), "--json",
            "--resamples", "100"]
    assert main(argv) == 2  # no benchmark in common but M3Eval, which refuses
    assert "share 2 of 6 questions" in capsys.readouterr().err
    a = two_benchmarks["a"]
    assert main(["compare", str(a), str(two_benchmarks["short"]), "--json",
                 "--system", "m3kit/builtin", "--resamples", "100"]) == 0
    out, err = capsys.readouterr()
    assert list(json.loads(out)) == ["supermemory"]
    (line,) = [line for line in err.splitlines() if "not compared" in line]
    assert line.startswith("m3kit: M3Eval: not compared: the runs share 2 of 6 questions")


def test_sides_sharing_no_benchmark_refuse_in_one_line(two_benchmarks: dict[str, Path],
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    argv = ["compare", str(two_benchmarks["m3eval"]), str(two_benchmarks["supermemory"])]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("m3kit: error: the runs share no benchmark (A: m3eval; B: supermemory): "
                   "only runs of one benchmark compare")


def test_a_baseline_of_several_benchmarks_is_refused(two_benchmarks: dict[str, Path]) -> None:
    """``m3kit report --baseline`` takes one system's run of one benchmark."""
    from m3kit.report.compare import CompareError, run_from_logs

    with pytest.raises(CompareError, match=r"holds logs of several benchmarks \(m3eval, "
                                           r"supermemory\): give one system's logs of one "
                                           r"benchmark"):
        run_from_logs(two_benchmarks["a"])

# -- score files: m3kit score VERB --json --items ---------------------------------------------


def _score_file(data: Path, predictions: Path, out: Path, capsys: pytest.CaptureFixture[str],
                *extra: str) -> Path:
    argv = ["score", "videomme-v2", "--data", str(data), "--predictions", str(predictions),
            "--json", *extra]
    assert main(argv) == 0
    out.write_text(capsys.readouterr().out, encoding="utf-8")
    return out


def test_score_json_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_table(tmp_path / "test.jsonl", rows())
    a = _predictions(tmp_path / "a.jsonl", {"001-4"})
    with_items = json.loads(_score_file(data, a, tmp_path / "a.json", capsys,
                                        "--items").read_text())
    without = json.loads(_score_file(data, a, tmp_path / "plain.json", capsys).read_text())
    assert "items" not in without and "benchmark" not in without
    # --items adds two keys, and nothing else changes
    assert {k: v for k, v in with_items.items() if k not in ("items", "benchmark")} == without
    assert with_items["benchmark"] == "videomme_v2"
    items = {item["id"]: item for item in with_items["items"]}
    assert len(items) == 16
    assert items["001-4"]["status"] == "incorrect" and items["001-3"]["status"] == "correct"
    # each item carries its group of 4: the unit the bootstrap resamples
    assert items["001-4"]["videomme_v2"]["group"] == items["001-1"]["videomme_v2"]["group"]
    assert items["001-4"]["videomme_v2"]["group"] != items["002-1"]["videomme_v2"]["group"]

    assert main(["score", "videomme-v2", "--data", str(data), "--predictions", str(a),
                 "--items"]) == 2
    assert "field 'items': the per-item records are part of the JSON: give --json too" in (
        capsys.readouterr().err)


def test_compare_two_score_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = write_table(tmp_path / "test.jsonl", rows())
    a = _score_file(data, _predictions(tmp_path / "a.jsonl", {"001-4", "002-4", "003-4"}),
                    tmp_path / "a.json", capsys, "--items")
    b = _score_file(data, _predictions(tmp_path / "b.jsonl", set()), tmp_path / "b.json",
                    capsys, "--items")
    assert main(["compare", str(a), str(b), "--json"]) == 0
    out, err = capsys.readouterr()
    (result,) = json.loads(out)["videomme_v2"]
    # the same numbers as the predictions files compared with --score (test above):
    # Avg Acc 81.25 -> 100; McNemar b = 0, c = 3: p = 2 * (1/2)**3
    assert (result["a"], result["b"], result["n_shared"], result["n_units"]) == ("a", "b", 16, 4)
    assert result["numbers"]["avg_acc"]["a"] == 81.25
    assert result["numbers"]["avg_acc"]["diff"] == 18.75
    assert result["mcnemar"] == {"n": 16, "b": 0, "c": 3, "p_value": 0.25}
    # the cards differ in the predictions file's hash alone, which is the model's field
    assert result["card_differences"] == [] and "warning" not in err
    predictions = ["compare", "--score", "videomme-v2", "--data", str(data), "--predictions",
                   str(tmp_path / "a.jsonl"), "--predictions", str(tmp_path / "b.jsonl"),
                   "--json"]
    assert main(predictions) == 0
    (scored,) = json.loads(capsys.readouterr().out)["videomme_v2"]
    assert result["numbers"] == scored["numbers"]


def test_a_score_file_without_items_is_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    data = write_table(tmp_path / "test.jsonl", rows())
    a = _score_file(data, _predictions(tmp_path / "a.jsonl", set()), tmp_path / "a.json",
                    capsys)
    b = _score_file(data, _predictions(tmp_path / "b.jsonl", set()), tmp_path / "b.json",
                    capsys, "--items")
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"m3kit: error: {a}: field 'items': a score file without per-item records: "
                   "re-run 'm3kit score VERB ... --json --items' to write one that compares")


def test_a_bad_score_file_names_record_and_field(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    data = write_table(tmp_path / "test.jsonl", rows())
    good = _score_file(data, _predictions(tmp_path / "a.jsonl", set()), tmp_path / "a.json",
                       capsys, "--items")
    bad = tmp_path / "bad.json"
    content = json.loads(good.read_text())
    del content["items"][1]["status"]
    bad.write_text(json.dumps(content), encoding="utf-8")
    assert main(["compare", str(good), str(bad)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"m3kit: error: {bad}: record items[1]: field 'status': Field required")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"answers": []}), encoding="utf-8")
    assert main(["compare", str(good), str(other)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"m3kit: error: {other}: neither an inspect eval log nor a score file of 'm3kit score "
        "VERB --json --items'")


def test_runs_on_a_copy_of_a_suite_elsewhere_are_made_on_the_same_data(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # issue 36: two quickstarts in two folders were said to be made on different data. A copy
    # of a suite has the fingerprint of the original (question files and media by content,
    # never by where they lie), and runs of several tasks are compared task by task (a pooled
    # run's own card is its latest-started log's, whichever task that was on each side)
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.benchmarks.m3eval.task import synth_interference, synth_nback
    from m3kit.harness.card import task_card
    from m3kit.synth import SuiteConfig, build_suite

    config = SuiteConfig(pairs=1, beats=8, evidence=["text"], swaps=[0],
                         paradigms=["interference", "nback"], interference_questions=1,
                         nback_n=[1], nback_k=[3], nback_trials=1, size=(160, 120), fps=4.0)
    original = build_suite(tmp_path / "here" / "suite", config).root
    copy = tmp_path / "elsewhere" / "suite"
    shutil.copytree(original, copy)
    for task in (synth_interference, synth_nback):
        here = task_card(task(suite=str(original))).data_fingerprint
        assert here is not None
        assert task_card(task(suite=str(copy))).data_fingerprint == here
    orders = {"a": ("synth_interference", "synth_nback"), "b": ("synth_nback",
                                                                "synth_interference")}
    suites = {"a": original, "b": copy}
    for side, tasks in orders.items():
        for task in tasks:
            run_benchmark_task(task, "m3kit/builtin", limit=2, cache=False,
                               task_args={"suite": str(suites[side]), "frames": 0},
                               log_dir=tmp_path / side)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json",
                 "--resamples", "50"]) == 0
    out, err = capsys.readouterr()
    (result,) = json.loads(out)["m3eval"]
    assert result["card_differences"] == [] and "differ" not in err
    assert result["data_a"] == result["data_b"] is not None
