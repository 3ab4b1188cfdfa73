"""``m3kit review DIR --export OUT``: the reviewed set written without serving; a folder no
builder made is refused with one line naming it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.cli.main import main
from m3kit.review.store import DecisionStore
from m3kit.schema.review import ReviewDecision
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

TINY = EgoSuiteConfig(seed=5, persons=2, sessions=3, segments=8, fps=1.0, size=256,
                      answerable_per_skill=2, unanswerable=3)


def test_export_without_serving(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build_ego_suite(tmp_path / "suite", TINY).root
    store = DecisionStore(root, "supermemory")
    for qid, verdict in (("1", "accepted"), ("2", "accepted"), ("3", "rejected")):
        store.record(ReviewDecision(item_id=qid, verdict=verdict, reason="no", reviewer="t",
                                    at=datetime.now(UTC)))
    out = tmp_path / "reviewed"
    assert main(["review", str(root), "--export", str(out)]) == 0
    said = capsys.readouterr().out
    assert "exported 2 supermemory items" in said and "2 loaded, 0 skipped" in said
    assert sorted(q.id for q in load_supermemory(out).questions) == ["1", "2"]


def test_a_folder_no_builder_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(tmp_path)]) == 2
    assert "not the output of an m3kit builder" in capsys.readouterr().err
