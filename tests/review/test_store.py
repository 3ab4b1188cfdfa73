"""Decisions kept beside the data: the latest per item rewritten atomically, every one appended
to the history with who and when, read back by a new store."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from m3kit.errors import SchemaError
from m3kit.review.store import DECISIONS_FILE, HISTORY_FILE, DecisionStore
from m3kit.schema.review import REVIEW_DIR, ItemEdit, ReviewDecision


def _decision(item: str, verdict: str = "accepted", **kw: object) -> ReviewDecision:
    return ReviewDecision.model_validate({"item_id": item, "verdict": verdict, "reviewer": "ann",
                                          "at": datetime(2026, 1, 2, tzinfo=UTC), **kw})


def test_decisions_are_kept_and_read_back(tmp_path: Path) -> None:
    store = DecisionStore(tmp_path, "supermemory")
    assert store.decisions() == {}
    store.record(_decision("1"))
    store.record(_decision("2", "rejected", reason="leaks the answer"))
    store.record(_decision("1", "accepted", edit=ItemEdit(options={"A": "new text"})))
    again = DecisionStore(tmp_path, "supermemory")
    assert set(again.decisions()) == {"1", "2"}
    assert again.decisions()["1"].edit.options == {"A": "new text"}
    assert again.get("2") is not None and again.get("2").reason == "leaks the answer"
    history = (tmp_path / REVIEW_DIR / HISTORY_FILE).read_text().splitlines()
    assert [json.loads(line)["item_id"] for line in history] == ["1", "2", "1"]
    assert all(json.loads(line)["reviewer"] == "ann" for line in history)
    # nothing but the two files, no temporary left behind
    assert sorted(p.name for p in (tmp_path / REVIEW_DIR).iterdir()) == \
        sorted([DECISIONS_FILE, HISTORY_FILE])


def test_decisions_of_another_benchmark_are_refused(tmp_path: Path) -> None:
    DecisionStore(tmp_path, "supermemory").record(_decision("1"))
    with pytest.raises(SchemaError, match="supermemory items"):
        DecisionStore(tmp_path, "m3eval")


def test_a_damaged_decisions_file_is_named(tmp_path: Path) -> None:
    (tmp_path / REVIEW_DIR).mkdir()
    (tmp_path / REVIEW_DIR / DECISIONS_FILE).write_text("{not json")
    with pytest.raises(SchemaError) as caught:
        DecisionStore(tmp_path, "supermemory")
    assert caught.value.path == str(tmp_path / REVIEW_DIR / DECISIONS_FILE)
