"""Scoring a SuperMemory-VQA predictions file: every metric by hand on the four questions of
``conftest.default_records`` (the JSON alone is enough), and the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.supermemory.item import item_of
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.score import (
    aggregate,
    headline,
    items_from_predictions,
    score_predictions,
)
from m3kit.cli.main import main
from m3kit.schema import NothingToScoreError

from .conftest import write_release


def _predictions(path: Path, lines: list[dict | bytes]) -> Path:
    with path.open("wb") as out:
        for line in lines:
            out.write(line if isinstance(line, bytes) else json.dumps(line).encode())
            out.write(b"\n")
    return path


@pytest.fixture
def qa_json(tmp_path: Path) -> Path:
    return write_release(tmp_path / "r", videos=False) / "data" / "json" / "all_qa.json"


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """q1 vague first then gold (B > A), q2 the abstain gold (D), q3 a one-item ranking of the
    abstain option (index 1), q4 missing, id 99 unknown."""
    return _predictions(tmp_path / "p.jsonl", [
        {"question_id": 1, "prediction": "The kettle...\nRanking: B > A"},
        {"question_id": "2", "prediction": "D"},
        {"question_id": 3, "ranking": [1]},
        {"question_id": 99, "ranking": ["A"]},
    ])


def test_every_metric_by_hand(qa_json: Path, mixed: Path) -> None:
    card = score_predictions(qa_json, mixed)
    assert (card.n, card.n_answerable, card.n_unanswerable) == (4, 3, 1)
    assert (card.n_invalid, card.n_missing) == (0, 1)
    assert card.qa_acc == pytest.approx(25.0)  # only q2
    # MRR: q1 1/2, q2 1, q3 gold unranked behind one option: (1/2+1/3+1/4)/3, q4 0
    assert card.qa_mrr == pytest.approx(100 * (0.5 + 1 + 13 / 36 + 0) / 4)
    # answerable positive: q1 TP, q2 TN, q3 FN (abstained), q4 FN (missing)
    assert card.ans_f1 == pytest.approx(100 * 2 / (2 + 0 + 2))
    # unanswerable positive: q1 TN, q2 TP, q3 FP, q4 FP (missing on an answerable question)
    assert card.abstain_f1 == pytest.approx(100 * 2 / (2 + 2 + 0))
    # vague credit: q1 picked the vague option (0.5), q2 1
    assert card.vague_credit_acc == pytest.approx(37.5)
    assert card.vague_gain == pytest.approx(12.5)
    assert card.by_person["1"].n == 3 and card.by_person["1"].qa_acc == pytest.approx(100 / 3)
    assert card.by_person["2"].qa_acc == 0.0
    assert card.person_mean == pytest.approx(50 / 3)
    assert card.person_std == pytest.approx((100 / 3) / 2 ** 0.5)  # sample std of two
    assert card.by_video["P1_D3"].qa_acc == 100.0
    assert card.video_mean == pytest.approx(25.0)
    assert card.video_std == pytest.approx(50.0)  # [0, 100, 0, 0], n - 1
    a, u = card.answerable, card.unanswerable
    assert (a.correct, a.wrong) == (0.0, 0.0)
    assert a.vague == a.abstained == a.invalid == pytest.approx(100 / 3)
    assert (u.abstained, u.answered, u.invalid) == (100.0, 0.0, 0.0)
    assert card.by_skill["conversational_memory"].qa_acc == 100.0
    assert card.by_skill["object_location_memory"].qa_mrr == 50.0
    # the unknown id is listed under skipped
    assert [(s.record, s.field) for s in card.skipped] == [("99", "question_id")]
    assert card.unmatched_ids == ["99"]
    assert headline(items_from_predictions(qa_json, mixed)) == pytest.approx(
        {"ans_f1": card.ans_f1, "qa_acc": card.qa_acc, "qa_mrr": card.qa_mrr})


def test_vague_weight_changes_only_vague_credit(qa_json: Path, mixed: Path) -> None:
    card = score_predictions(qa_json, mixed, vague_weight=0.25)
    assert card.vague_credit_acc == pytest.approx(100 * 1.25 / 4)
    assert card.qa_acc == pytest.approx(25.0)


def test_invalid_replies_are_wrong_everywhere(qa_json: Path, tmp_path: Path) -> None:
    preds = _predictions(tmp_path / "p.jsonl", [
        {"question_id": 1, "prediction": "I am not sure."},  # answerable, invalid
        {"question_id": 2, "prediction": "Ranking: E > A"},  # unanswerable, invalid
        {"question_id": 3, "ranking": ["D", "C", "B", "A"]},
        {"question_id": 4, "ranking": [7]},  # an index past the options: invalid
    ])
    one = score_predictions(qa_json, _predictions(tmp_path / "q.jsonl", [
        {"question_id": 4, "ranking": 1}]))  # one bare 0-based index: the gold B
    assert one.qa_acc == 25.0 and one.n_invalid == 0
    card = score_predictions(qa_json, preds)
    assert (card.n_invalid, card.n_missing) == (3, 0)
    assert card.qa_acc == 25.0 and card.qa_mrr == 25.0
    # answerable positive: q1 FN, q2 FP, q3 TP, q4 FN
    assert card.ans_f1 == pytest.approx(100 * 2 / (2 + 1 + 2))
    # unanswerable positive: q1 FP, q2 FN, q3 TN, q4 FP
    assert card.abstain_f1 == 0.0
    assert card.answerable.invalid == pytest.approx(200 / 3)
    assert card.unanswerable.invalid == 100.0


def test_a_missing_prediction_scores_as_an_invalid_one(qa_json: Path, tmp_path: Path) -> None:
    full = score_predictions(qa_json, _predictions(tmp_path / "a.jsonl", [
        {"question_id": q, "prediction": "nothing"} for q in (1, 2, 3)] + [
        {"question_id": 4, "prediction": "B"}]))
    partial = score_predictions(qa_json, _predictions(tmp_path / "b.jsonl", [
        {"question_id": 4, "prediction": "B"}]))
    for key in ("qa_acc", "qa_mrr", "ans_f1", "abstain_f1", "vague_credit_acc"):
        assert getattr(full, key) == getattr(partial, key), key
    assert (full.n_invalid, full.n_missing) == (3, 0)
    assert (partial.n_invalid, partial.n_missing) == (0, 3)


def test_bad_prediction_lines_are_named(qa_json: Path, tmp_path: Path) -> None:
    preds = _predictions(tmp_path / "p.jsonl", [
        {"question_id": 1, "prediction": "A"},
        b'{"question_id": 2, "prediction": "\xff\xfe"}',
        {"question_id": 3},
        {"question_id": 1, "prediction": "D"},
    ])
    card = score_predictions(qa_json, preds)
    reasons = [(s.record, s.field) for s in card.skipped]
    assert len(reasons) == 3
    assert reasons[1][0].startswith("3") and reasons[2][0].startswith("4")
    assert card.qa_acc == 25.0  # the first answer of q1 kept; q2-q4 missing
    assert card.n_missing == 3


def test_nothing_to_score(qa_json: Path, tmp_path: Path) -> None:
    preds = _predictions(tmp_path / "p.jsonl", [{"question_id": 77, "prediction": "A"}])
    with pytest.raises(NothingToScoreError):
        score_predictions(qa_json, preds)


def test_std_is_none_with_one_group(qa_json: Path) -> None:
    question = load_supermemory(qa_json).questions[0]
    card = aggregate([item_of(question, [0])])
    assert card.person_mean == 100.0 and card.person_std is None
    assert card.abstain_f1 is None  # no unanswerable question, none abstained


def test_cli_json_is_unrounded_and_carries_the_card(qa_json: Path, mixed: Path,
                                                    capsys: pytest.CaptureFixture) -> None:
    code = main(["score", "supermemory", "--data", str(qa_json), "--predictions", str(mixed),
                 "--json", "--vague-weight", "0.25", "--stats"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["qa_mrr"] == pytest.approx(100 * (0.5 + 1 + 13 / 36) / 4, abs=0)
    assert out["vague_weight"] == 0.25
    assert out["data_stats"]["n"] == 4
    assert out["data_stats"]["by_skill"]["visual_recall"]["n"] == 1
    assert out["skipped"][0]["record"] == "99"
    assert out["card"]["scoring"]["vague_weight"] == "0.25"
    assert out["card"]["data_fingerprint"]


def test_cli_text_shows_counts(qa_json: Path, mixed: Path, capsys) -> None:
    assert main(["score", "supermemory", "--data", str(qa_json), "-p", str(mixed)]) == 0
    out = capsys.readouterr().out
    assert "ans_f1" in out and "n_missing" in out and "by skill" in out


def test_the_parsed_answer_is_the_first_ranked_letter() -> None:
    from m3kit.benchmarks.supermemory.item import SuperMemoryItem

    ranked = SuperMemoryItem(id="7", status="correct", ranking=[2, 0], gold=2,
                             option_types=["incorrect", "vague", "correct", "abstain"])
    assert ranked.parsed_answer() == "C"  # what m3kit export writes as the parsed answer
    assert SuperMemoryItem(id="8", status="invalid").parsed_answer() is None
