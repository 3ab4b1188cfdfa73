"""``m3kit supermemory stats``: the data set's statistics without predictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite


def test_stats_counts_the_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    suite = build_ego_suite(tmp_path / "suite", EgoSuiteConfig(
        seed=3, persons=1, sessions=2, segments=8, fps=1.0, answerable_per_skill=1,
        unanswerable=2))
    assert main(["supermemory", "stats", "--data", str(suite.root), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    answerable = sum(q.is_answerable for q in suite.questions)
    assert stats["n"] == len(suite.questions)
    assert stats["n_persons"] == 1
    assert stats["answerable"] == pytest.approx(100 * answerable / len(suite.questions))
    assert sum(s["n"] for s in stats["by_skill"].values()) == len(suite.questions)
    assert main(["supermemory", "stats", "--data", str(suite.root)]) == 0
    assert "answerable" in capsys.readouterr().out


def test_stats_of_a_missing_folder_is_one_line(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["supermemory", "stats", "--data", str(tmp_path / "absent")]) == 2
    assert "absent" in capsys.readouterr().err
