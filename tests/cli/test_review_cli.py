"""``m3kit review DIR --export OUT``: the reviewed set written without serving; a folder no
builder made is refused with one line naming it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.cli.main import main
from m3kit.review.sources import open_source
from m3kit.review.store import DecisionStore
from m3kit.schema.review import ReviewDecision, item_fingerprint


def test_export_without_serving(suite_root: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    root = suite_root
    store = DecisionStore(root, "supermemory")
    shown = {item.id: item_fingerprint(item) for item in open_source(root).items()}
    # question 4's decision was taken on another item under the same id (the builder ran
    # again since): it is left out, and said so
    for qid, verdict, seen in (("1", "accepted", shown["1"]), ("2", "accepted", shown["2"]),
                               ("3", "rejected", shown["3"]), ("4", "accepted", "earlier")):
        store.record(ReviewDecision(item_id=qid, item_fingerprint=seen, verdict=verdict,
                                    reason="no", reviewer="t", at=datetime.now(UTC)))
    out = tmp_path / "reviewed"
    assert main(["review", str(root), "--export", str(out)]) == 0
    said = capsys.readouterr()
    assert "exported 2 supermemory items" in said.out and "2 loaded, 0 skipped" in said.out
    assert "1 decisions left out: taken on an earlier version" in said.err
    assert sorted(q.id for q in load_supermemory(out).questions) == ["1", "2"]


def test_a_folder_no_builder_made(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["review", str(tmp_path)]) == 2
    assert "not the output of an m3kit builder" in capsys.readouterr().err
