"""SuperMemory-VQA's review source on the synthetic egocentric suite: items with their option
roles, media at each span (none for a transcript-only session, whose lines become evidence),
stage 2's verdicts and causality check as checks, and the export of the accepted records with
their edits, consistent and read back with zero skips."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from m3kit.benchmarks.supermemory.construct.records import (
    AnnotatedQA,
    CausalityCheck,
    CriterionScore,
    PersonAnnotations,
)
from m3kit.benchmarks.supermemory.construct.review_source import open_review_source
from m3kit.benchmarks.supermemory.fields import SuperMemoryError
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.schema.review import ItemEdit, ReviewDecision, ReviewSource
from m3kit.schema.supermemory import ABSTAIN_TEXT


def _decide(item: str, verdict: str = "accepted", **kw: object) -> ReviewDecision:
    return ReviewDecision.model_validate({"item_id": item, "verdict": verdict, "reviewer": "t",
                                          "at": datetime.now(UTC), **kw})


def _record(root: Path, qid: str) -> dict:
    return next(r for r in json.loads((root / "data/json/all_qa.json").read_text())
                if str(r["question_id"]) == qid)


def test_items_of_the_suite(suite_root: Path) -> None:
    source = open_review_source(suite_root)
    assert isinstance(source, ReviewSource) and source.benchmark == "supermemory"
    items = {item.id: item for item in source.items()}
    assert len(items) == 30
    first = items["1"]
    raw = _record(suite_root, "1")
    assert first.question == raw["question"] and first.answer == "C"
    assert [o.role for o in first.options] == ["incorrect", "abstain", "correct", "vague"]
    assert [(m.path, m.start, m.end) for m in first.media] == [
        ("data/video/Person_1/P1_D1.mp4", 42.0, 47.0),
        ("data/video/Person_1/P1_D1.mp4", 33.2, 35.8),
        ("data/video/Person_1/P1_D1.mp4", 36.0, 42.0)]
    assert first.media[0].label.startswith("question span 1") and \
        first.media[1].label.startswith("evidence 1")
    assert all((suite_root / m.path).is_file() for i in items.values() for m in i.media)
    facts = dict(first.facts)
    assert facts["skill"] == raw["metadata"]["skill"] and facts["answerable"] == "yes"
    assert facts["question time"] == "2026-03-02T10:54:47+00:00"
    assert first.evidence[0] == raw["answer_evidence"]["text"]
    assert first.checks == ()
    # P1_D2 is transcript-only: its evidence has no video, its lines are shown instead
    on_d2 = [i for i in items.values()
             if any(e["video_id"] == "P1_D2"
                    for e in (_record(suite_root, i.id)["answer_evidence"] or {})
                    .get("evidence_list", []))]
    assert on_d2
    for item in on_d2:
        assert not any("P1_D2" in m.path for m in item.media)
        assert any("(P1_D2 " in line for line in item.evidence)


def test_not_a_supermemory_folder(tmp_path: Path) -> None:
    assert open_review_source(tmp_path) is None
    assert open_review_source(tmp_path / "missing") is None


def test_stage_two_verdicts_become_checks(suite_root: Path) -> None:
    folder = suite_root / "annotations" / "qa"
    folder.mkdir(parents=True)
    verdicts = [CriterionScore(name="factual_correctness", score=0.9, rationale="the ledger "
                               "says so", passed=True),
                CriterionScore(name="naturalness", score=0.4, rationale="stilted",
                               passed=False)]
    pair = AnnotatedQA.model_validate({
        "qa_id": "qa_1", "subject": 1, "skill": "in_context_retrieval", "scope": "local",
        "drafts": [], "verdicts": [[], verdicts],
        "causality": CausalityCheck(question_unix=1772448887.0,
                                    latest_evidence_unix=1772448882.0, passed=True),
        "status": "accepted", "question_id": 1})
    (folder / "person_1.json").write_text(PersonAnnotations(
        subject=1, model="scripted", pairs=[pair]).model_dump_json())
    source = open_review_source(suite_root)
    assert source is not None
    item = next(i for i in source.items() if i.id == "1")
    assert [(c.name, c.passed, c.score) for c in item.checks] == [
        ("factual_correctness", True, 0.9), ("naturalness", False, 0.4),
        ("causality", True, None)]
    assert "10:54:42" in item.checks[2].rationale and "10:54:47" in item.checks[2].rationale
    assert dict(item.facts)["verification loops"] == "2"
    other = next(i for i in source.items() if i.id == "2")
    assert other.checks == ()


def test_export_applies_edits_consistently(suite_root: Path, tmp_path: Path) -> None:
    source = open_review_source(suite_root)
    assert source is not None
    ids = [i.id for i in source.items()]
    decisions = {qid: _decide(qid) for qid in ids}
    # item 1: gold C -> D (the vague option), option A's text edited
    decisions["1"] = _decide("1", edit=ItemEdit(question="Dry in time?", answer="D",
                                                options={"A": "Not a chance"}))
    # item 2: the gold becomes the abstain option
    abstain = next(o.letter for o in source.items()[1].options if o.role == "abstain")
    decisions["2"] = _decide("2", edit=ItemEdit(answer=abstain))
    decisions["3"] = _decide("3", "rejected", reason="wrong")
    del decisions["5"]  # pending
    generated = (suite_root / "data/json/all_qa.json").read_bytes()
    result = source.export(decisions, tmp_path / "out")
    assert (result.exported, result.rejected, result.pending, result.loaded) == (28, 1, 1, 28)
    assert result.skipped == []
    assert (suite_root / "data/json/all_qa.json").read_bytes() == generated
    written = {str(r["question_id"]): r
               for r in json.loads((tmp_path / "out/data/json/all_qa.json").read_text())}
    assert "3" not in written and "5" not in written
    one = written["1"]
    assert one["question"] == "Dry in time?" and one["choices"][0] == "Not a chance"
    assert one["correct_option_index"] == 3 and one["correct_answer"] == one["choices"][3]
    assert one["choice_types"] == ["incorrect", "incorrect", "vague", "correct"]
    assert one["is_answerable"] is True
    two = written["2"]
    assert two["is_answerable"] is False and two["correct_answer"] == ABSTAIN_TEXT
    assert two["choice_types"][two["correct_option_index"]] == "correct"
    loaded = {q.id: q for q in load_supermemory(tmp_path / "out").questions}
    assert loaded["1"].answer == "D" and loaded["2"].metadata["is_answerable"] is False
    assert not (tmp_path / "out/data/video").is_symlink()


def test_an_edit_that_breaks_the_record_is_named(suite_root: Path, tmp_path: Path) -> None:
    source = open_review_source(suite_root)
    assert source is not None
    not_abstain = next(o.letter for o in source.items()[0].options if o.role != "abstain")
    bad = {"1": _decide("1", edit=ItemEdit(options={not_abstain: ABSTAIN_TEXT}))}
    with pytest.raises(SuperMemoryError) as caught:
        source.export(bad, tmp_path / "out")
    assert caught.value.record == "1" and "abstain" in caught.value.reason
