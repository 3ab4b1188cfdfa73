"""M3Exam's headline numbers from per-item records: the same values as the score card's TOTAL,
the session of the question's evidence as the bootstrap's unit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam import BENCHMARK
from m3kit.benchmarks.m3exam.load import evidence_session, load_m3exam
from m3kit.benchmarks.m3exam.score import (
    cluster_of,
    headline,
    item_correct,
    items_from_predictions,
    score_predictions,
)
from m3kit.schema import Question


@pytest.fixture
def predictions(tmp_path: Path, m3exam_persona: Path) -> Path:
    """Gold answers for every other question, a wrong one otherwise; a judge score on every
    line (a judge on only some would leave LLM-J and Overall undefined: test_score.py)."""
    lines = []
    for i, q in enumerate(load_m3exam(m3exam_persona).questions):
        record = {"id": q.id, "prediction": q.answer if i % 2 == 0 else "no idea",
                  "judge": 1.0 if i % 2 == 0 else 0.25}
        lines.append(json.dumps(record))
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_headline_equals_the_score_card(m3exam_persona: Path, predictions: Path) -> None:
    items = items_from_predictions(m3exam_persona, predictions)
    total = score_predictions(m3exam_persona, predictions).total
    assert headline(items) == {k: total[k] for k in ("em", "f1", "bleu1", "llm_judge",
                                                     "overall")}
    assert len(items) == total["count"] == 358
    # gold answers (even lines) get full EM credit; "no idea" never does
    assert sum(item_correct(i) for i in items) == 179


def test_partial_judge_leaves_llm_j_and_overall_undefined(
        m3exam_persona: Path, tmp_path: Path) -> None:
    """A judge score on every third line only: as the score card, no LLM-J and no Overall,
    so no interval is built on the judged subset."""
    lines = []
    for i, q in enumerate(load_m3exam(m3exam_persona).questions):
        record = {"id": q.id, "prediction": q.answer}
        if i % 3 == 0:
            record["judge"] = 1.0
        lines.append(json.dumps(record))
    path = tmp_path / "partial.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    items = items_from_predictions(m3exam_persona, path)
    total = score_predictions(m3exam_persona, path).total
    numbers = headline(items)
    assert numbers == {k: total[k] for k in ("em", "f1", "bleu1", "llm_judge", "overall")}
    assert numbers["llm_judge"] is None and numbers["overall"] is None
    assert numbers["em"] == 1.0  # every answer is its gold
    intervals = BENCHMARK.headline_intervals(items)
    assert intervals["llm_judge"].value is None and intervals["overall"].value is None


def test_the_unit_is_the_evidence_session(m3exam_persona: Path, predictions: Path) -> None:
    q = Question(id="Alex/7", benchmark="m3exam", text="?", answer="a", question_type="ss",
                 evidence=["D3:5", "D4:1"], metadata={"persona": "Alex"})
    assert evidence_session(q) == "Alex/D3"
    assert evidence_session(q.model_copy(update={"evidence": []})) is None
    items = items_from_predictions(m3exam_persona, predictions)
    units = {cluster_of(i) for i in items}
    # every question of the persona names its evidence; they fall in 15 of its sessions
    # (45 questions on session 1 alone)
    assert len(units) == 15
    assert sum(cluster_of(i) == "Alex_Veterinarian/D1" for i in items) == 45
    bare = items[0].model_copy(update={"session": None})
    assert cluster_of(bare) == bare.id  # no evidence named: the question is its own unit


def test_every_headline_number_gets_an_interval_around_it(
        m3exam_persona: Path, predictions: Path) -> None:
    items = items_from_predictions(m3exam_persona, predictions)
    intervals = BENCHMARK.headline_intervals(items)
    assert intervals
    for interval in intervals.values():
        assert interval.lo < interval.value < interval.hi
