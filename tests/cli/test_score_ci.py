"""``m3kit score <verb> --ci``: every headline number with its percentile cluster-bootstrap
interval, in the JSON (``ci``, ``ci_unit``, ``ci_level``, ``ci_resamples``, ``ci_seed``) and
the text; without ``--ci`` nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.metrics.bootstrap import Interval, cluster_bootstrap, group_units

from ..benchmarks.videomme_v2.conftest import rows, write_table
from ..benchmarks.videomme_v2.test_score import PREDICTIONS


@pytest.fixture
def videomme(tmp_path: Path) -> tuple[Path, Path]:
    write_table(tmp_path / "test.parquet", rows())
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"question_id": k, "prediction": v}) + "\n"
                                   for k, v in PREDICTIONS.items()), encoding="utf-8")
    return tmp_path, predictions


def _score(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["score", "videomme-v2", *args])
    return code, capsys.readouterr().out


def test_ci_json_adds_an_interval_per_headline_number(videomme, capsys) -> None:
    data, predictions = videomme
    base = ["--data", str(data), "--predictions", str(predictions), "--json"]
    code, plain = _score(capsys, *base)
    assert code == 0
    code, out = _score(capsys, *base, "--ci", "--resamples", "300", "--seed", "7",
                       "--ci-level", "0.9")
    assert code == 0
    result, before = json.loads(out), json.loads(plain)
    assert "ci" not in before
    assert result["ci_unit"] == "video (its group of 4 questions)"
    assert (result["ci_level"], result["ci_resamples"], result["ci_seed"]) == (0.9, 300, 7)
    assert list(result["ci"]) == ["non_lin", "level_1", "level_2", "level_3", "avg_acc"]
    # the values are the leaderboard's, the intervals the library's with the same settings
    assert result["ci"]["non_lin"]["value"] == pytest.approx(before["total"])
    assert result["ci"]["avg_acc"]["value"] == pytest.approx(before["avg_acc"])
    from m3kit.benchmarks.videomme_v2.score import cluster_of, headline, items_from_predictions

    items = items_from_predictions(data, predictions)
    expected = cluster_bootstrap(group_units(items, cluster_of), headline, resamples=300,
                                 level=0.9, seed=7)
    assert {k: Interval(**v) for k, v in result["ci"].items()} == expected
    # nothing else changed: the score's keys, in order, then the intervals before the skips
    without_ci = {k: v for k, v in result.items() if not k.startswith("ci")}
    assert without_ci == before and list(without_ci) == list(before)


def test_ci_text_shows_value_and_interval(videomme, capsys) -> None:
    data, predictions = videomme
    code, out = _score(capsys, "--data", str(data), "--predictions", str(predictions), "--ci",
                       "--resamples", "200")
    assert code == 0
    assert "95 % intervals, 200 resamples of video (its group of 4 questions), seed 0" in out
    line = next(x for x in out.splitlines() if "non_lin " in x)
    assert "23.33 [" in line  # (25 + 25 + 400/12 + 10) / 4
    assert "] (4 units)" in line  # the table's four groups of 4


def test_ci_level_out_of_range_is_a_one_line_error(videomme, capsys) -> None:
    data, predictions = videomme
    code = main(["score", "videomme-v2", "--data", str(data), "--predictions",
                 str(predictions), "--ci", "--ci-level", "95"])
    assert code == 2
    assert "--ci-level must be between 0 and 1, got 95.0" in capsys.readouterr().err


def test_m3eval_and_m3exam_verbs_take_ci(tmp_path, m3exam_persona, capsys) -> None:
    from m3kit.benchmarks.m3exam.load import load_m3exam

    questions = load_m3exam(m3exam_persona).questions
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(json.dumps({"id": q.id, "prediction": q.answer}) + "\n"
                                   for q in questions), encoding="utf-8")
    code = main(["score", "m3exam", "--data", str(m3exam_persona), "--predictions",
                 str(predictions), "--json", "--ci", "--resamples", "100"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0
    # gold answers everywhere: EM 1 in every resample, a zero-width interval
    # (the persona's questions name their evidence in 15 of its sessions)
    assert result["ci"]["em"] == {"value": 1.0, "lo": 1.0, "hi": 1.0, "n_units": 15}
    assert result["ci"]["llm_judge"] == {"value": None, "lo": None, "hi": None, "n_units": 0}
    assert result["ci_unit"].startswith("session")
