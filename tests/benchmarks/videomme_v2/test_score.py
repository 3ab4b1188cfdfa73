"""Scoring raw predictions, hand-computed, and ``m3kit score videomme-v2``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from m3kit.benchmarks.videomme_v2.item import QuestionOutcome, outcome_of
from m3kit.benchmarks.videomme_v2.load import load_videomme_v2
from m3kit.benchmarks.videomme_v2.score import (
    LEADERBOARD_KEYS,
    aggregate,
    score_groups,
    score_outputs,
)
from m3kit.cli.main import main

from .conftest import EXTRA_GROUPS, GROUPS, rows, write_table
from .harness_outputs import lmms_eval_samples, vlmevalkit_json, vlmevalkit_tsv

# Gold letters: 001 E F G H, 002 H A B C, 003 C D E F, 004 F G H A.
PREDICTIONS = {
    # 001 relevance: right, wrong, failed extraction, right -> k = 2: 100*4/16 = 25, linear 50
    # (the released script stores -1 for the failure: its sum 1+0-1+1 = 1 would give 6.25)
    "001-1": "E", "001-2": "A", "001-3": "no idea at all", "001-4": "The answer is H",
    # 002 chain: right, right, failed extraction, right -> L = 2: 100*4/16 = 25
    # (the released script's -1 is truthy there: L = 4, 100)
    "002-1": "Final Answer: H", "002-2": "A", "002-3": "", "002-4": "C",
    # 003 [1, [2, 3], 4]: right, wrong, right, wrong -> L = 1 bumped to 2: 400/12 = 33.33
    "003-1": "C", "003-2": "A", "003-3": "E", "003-4": "A",
    # 004 [[1, 2], 3, 4]: wrong, right, right, right -> L = 0 bumped to 1: 10
    "004-1": "B", "004-2": "G", "004-3": "H", "004-4": "A",
}
EXPECTED = {
    "total": (25 + 25 + 400 / 12 + 10) / 4,  # 23.333
    "level_1": 25.0,
    "level_2": 25.0,
    "level_3": (400 / 12 + 10) / 2,  # 21.667
    "relevance_score": 25.0,
    "relevance_linear_score": 50.0,
    "logic_score": (25 + 400 / 12 + 10) / 3,  # 22.778
    "avg_acc": 100 * 10 / 16,  # 2 + 3 + 2 + 3 correct of 16 = 62.5
    "non_lin_over_avg_acc": 100 * ((25 + 25 + 400 / 12 + 10) / 4) / 62.5,  # 37.333
    "n_failed_extraction": 2,
    "second_head": {"Frame-Only": 25.0, "Order": 25.0,
                    "Physical World Reasoning": (400 / 12 + 10) / 2},
    "third_head": {"Basic Counting": 25.0, "Counterfactual Reasoning": 10.0,
                   "Event Sequence Ordering": 25.0, "Spatial Understanding": 400 / 12},
}


def _check(result: dict) -> None:
    assert list(result) == list(LEADERBOARD_KEYS)
    for key, value in EXPECTED.items():
        assert result[key] == pytest.approx(value), key


def _check_cli(result: dict, skipped: int = 0, unmatched: int = 0) -> list[dict]:
    """``--json``: the leaderboard keys, the reproducibility card, then what was skipped
    (returned)."""
    assert list(result)[len(LEADERBOARD_KEYS)] == "card"
    card = result.pop("card")
    # external predictions: the model is unknown; the data and the predictions file are hashed
    assert card["model"] is None and card["benchmark"] == "videomme_v2"
    assert len(card["data_fingerprint"]) == len(card["predictions_sha256"]) == 64
    assert card["scoring"]["relevance"].startswith("capability consistency 100*(k/4)^2")
    records = result.pop("skipped")
    assert (result.pop("n_skipped_records"), result.pop("n_unmatched_predictions")) == (
        skipped, unmatched)
    assert len(records) == skipped
    _check(result)
    return records


def test_hand_computed_scores(tmp_path: Path) -> None:
    write_table(tmp_path / "test.parquet", rows())
    result = score_outputs(load_videomme_v2(tmp_path), PREDICTIONS)
    _check(result.leaderboard())
    # Q1..Q4 accuracy: relevance 001 only -> 100, 0, 0, 100: mean 50, variance
    # (50^2 * 4) / 4 = 2500; logic (002, 003, 004): each position has two right of three
    assert result.position_accuracy["relevance"] == pytest.approx([100, 0, 0, 100])
    assert result.position_accuracy["logic"] == pytest.approx([200 / 3] * 4)
    assert result.relevance_accuracy_mean == pytest.approx(50.0)
    assert result.relevance_accuracy_variance == pytest.approx(2500.0)
    assert result.n_missing == 0


def test_shuffled_rows_score_the_same(tmp_path: Path) -> None:
    shuffled = rows()
    random.Random(3).shuffle(shuffled)
    write_table(tmp_path / "test.tsv", shuffled)
    _check(score_outputs(load_videomme_v2(tmp_path), PREDICTIONS).leaderboard())


def test_missing_prediction_is_a_failed_extraction(tmp_path: Path) -> None:
    write_table(tmp_path / "test.parquet", rows())
    partial = {k: v for k, v in PREDICTIONS.items() if k != "003-1"}
    result = score_outputs(load_videomme_v2(tmp_path), partial)
    # 003 now wrong, wrong, right, wrong: L = 0 (no bump under [1, [2, 3], 4]) -> 0
    assert result.n_missing == 1 and result.n_failed_extraction == 3
    assert result.level_3 == pytest.approx((0 + 10) / 2)


def test_unknown_prediction_id_is_counted_not_scored(tmp_path: Path) -> None:
    write_table(tmp_path / "test.parquet", rows())
    result = score_outputs(load_videomme_v2(tmp_path), {**PREDICTIONS, "009-1": "A"})
    _check(result.leaderboard())  # the 16 known predictions score as before
    assert (result.n_unmatched_predictions, result.unmatched_ids) == (1, ["009-1"])


def test_cli_unknown_ids_are_counted_and_no_match_is_an_error(tmp_path: Path, capsys) -> None:
    """As ``m3kit score m3eval``: predictions for ids the table lacks are counted and named on
    stderr, the rest is scored (exit 0); a file of which no id matches is refused (exit 2)."""
    write_table(tmp_path / "test.parquet", rows())
    predictions = tmp_path / "p.jsonl"
    lines = [{"question_id": k, "prediction": v} for k, v in PREDICTIONS.items()]
    lines += [{"question_id": "009-1", "prediction": "A"},
              {"question_id": "009-2", "prediction": "B"}]
    predictions.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    code = main(["score", "videomme-v2", "--data", str(tmp_path), "--predictions",
                 str(predictions), "--json"])
    out = capsys.readouterr()
    assert code == 0
    _check_cli(json.loads(out.out), unmatched=2)
    assert "m3kit: 2 predictions match no question: 009-1, 009-2" in out.err

    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"question_id": "009-1", "prediction": "A"}) + "\n")
    assert main(["score", "videomme-v2", "--data", str(tmp_path), "--predictions",
                 str(stray), "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.strip() == (f"m3kit: error: {stray}: none of the 1 predictions matches a "
                               f"question id of {tmp_path} (16 questions)")


def test_cli_json_from_an_lmms_eval_samples_file(tmp_path: Path, capsys) -> None:
    table = rows()
    write_table(tmp_path / "data" / "test.parquet", table)
    samples = lmms_eval_samples(tmp_path / "logs", table, PREDICTIONS)
    code = main(["score", "videomme-v2", "--data", str(tmp_path / "data"),
                 "--predictions", str(samples), "--json"])
    assert code == 0
    _check_cli(json.loads(capsys.readouterr().out))


@pytest.mark.parametrize("writer", [vlmevalkit_tsv, vlmevalkit_json])
def test_cli_json_from_a_vlmevalkit_file(tmp_path: Path, capsys, writer) -> None:
    table = rows()
    write_table(tmp_path / "test.parquet", table)
    predictions = writer(tmp_path, table, PREDICTIONS)
    code = main(["score", "videomme-v2", "--data", str(tmp_path / "test.parquet"),
                 "--predictions", str(predictions), "--json"])
    assert code == 0
    _check_cli(json.loads(capsys.readouterr().out))


def test_cli_tsv_and_table_output(tmp_path: Path, capsys) -> None:
    write_table(tmp_path / "test.jsonl", rows())
    predictions = tmp_path / "preds.tsv"
    lines = ["question_id\tprediction"] + [f"{k}\t{v}" for k, v in PREDICTIONS.items()]
    predictions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["score", "videomme-v2", "--data", str(tmp_path / "test.jsonl"),
                 "--predictions", str(predictions)])
    assert code == 0
    out = capsys.readouterr().out
    assert "23.33" in out and "Spatial Understanding" in out


def test_unreadable_media_exclude_the_group(tmp_path: Path) -> None:
    """Groups 001-004 answered, group 005's video unreadable: 005 is left
    out of every number: total and Avg Acc are those of 001-004 alone (``EXPECTED``)."""
    write_table(tmp_path / "test.parquet", rows({**GROUPS, "005": EXTRA_GROUPS["005"]}))
    data = load_videomme_v2(tmp_path)
    assert [g.id for g in data.groups] == ["001", "002", "003", "004", "005"]
    outcomes = {q.id: outcome_of(q, PREDICTIONS.get(q.id)) for q in data.questions}
    for n in range(1, 5):
        qid = f"005-{n}"
        outcomes[qid] = QuestionOutcome(id=qid, status="failed",
                                        reason="media: MediaNotFoundError: videos/005.mp4")
    result = aggregate(score_groups(data.groups, outcomes), outcomes.values())
    # total = (25 + 25 + 400/12 + 10) / 4 = 23.333; Avg Acc = 10 correct / 16 = 62.5
    _check(result.leaderboard())
    assert result.n_groups == 4 and result.n_questions == 16
    assert result.n_excluded_groups == 1 and result.excluded_groups == ["005"]
    assert result.n_failed == 0  # excluded, not failed
    # a failure that is not about media (a model error) stays a wrong answer inside its group
    outcomes["005-1"] = QuestionOutcome(id="005-1", status="failed", reason="model: timeout")
    for n in range(2, 5):
        outcomes[f"005-{n}"] = QuestionOutcome(id=f"005-{n}", status="correct")
    counted = aggregate(score_groups(data.groups, outcomes), outcomes.values())
    # 005 relevance, k = 3: 100 * 9 / 16 = 56.25; total (93.333 + 56.25) / 5 = 29.917
    assert counted.total == pytest.approx((25 + 25 + 400 / 12 + 10 + 56.25) / 5)
    assert counted.avg_acc == pytest.approx(100 * 13 / 20)  # 10 + 3 correct of 20
    assert counted.n_excluded_groups == 0 and counted.n_failed == 1


def test_cli_non_utf8_prediction_rows_are_named_skips(tmp_path: Path, capsys) -> None:
    """One policy for every score verb: the row that is not UTF-8 is skipped and named on
    stderr, the other rows are scored."""
    write_table(tmp_path / "test.parquet", rows())
    predictions = tmp_path / "latin1.tsv"
    predictions.write_bytes("question_id\tprediction\n001-1\tréponse E\n001-2\tA\n"
                            .encode("latin-1"))
    code = main(["score", "videomme-v2", "--data", str(tmp_path), "--predictions",
                 str(predictions), "--json"])
    assert code == 0
    err = capsys.readouterr().err
    assert f"m3kit: skipped: {predictions}: record 2: not UTF-8 text" in err
    assert "Traceback" not in err


def test_cli_repeated_ids_keep_the_first_and_are_named(tmp_path: Path, capsys) -> None:
    write_table(tmp_path / "test.parquet", rows())
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"question_id": "001-1", "prediction": "A"}\n'
                           '{"question_id": "001-1", "prediction": "B"}\n', encoding="utf-8")
    code = main(["score", "videomme-v2", "--data", str(tmp_path), "--predictions",
                 str(predictions), "--json"])
    assert code == 0
    err = capsys.readouterr().err
    assert (f"m3kit: skipped: {predictions}: record 2 (id 001-1): field 'id': id '001-1' "
            "given again") in err


def test_a_predictions_file_with_no_valid_line_exits_2(tmp_path: Path, capsys) -> None:
    """One rule across benchmarks: a file none of whose lines is a valid prediction is an
    error, never a table of failed extractions."""
    write_table(tmp_path / "test.parquet", rows())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('not json\n{"prediction": "A"}\n', encoding="utf-8")
    assert main(["score", "videomme-v2", "--data", str(tmp_path), "--predictions",
                 str(bad), "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "none of the 0 predictions matches" in out.err


def _limited_run(tmp_path: Path) -> list:
    """A ``--limit 6`` run's samples: group 001 whole, group 002 cut after its second
    question. 001 (relevance, gold E F G H): right, wrong, wrong, right; 002 (gold H A):
    right, right."""
    from m3kit.benchmarks.videomme_v2.item import VideoMMEv2Item, group_fields
    from m3kit.schema.evallog import LoggedSample

    write_table(tmp_path / "test.parquet", rows())
    questions = {q.id: q for q in load_videomme_v2(tmp_path).questions}
    replies = {"001-1": "E", "001-2": "A", "001-3": "A", "001-4": "H", "002-1": "H",
               "002-2": "A"}
    samples = []
    for qid, reply in replies.items():
        outcome = outcome_of(questions[qid], reply)
        item = VideoMMEv2Item(status=outcome.status, letter=outcome.letter,
                              videomme_v2=group_fields(questions[qid]))
        samples.append(LoggedSample(id=qid, question=questions[qid], item=item))
    return samples


def test_groups_cut_by_limit_are_named_and_left_out(tmp_path: Path) -> None:
    from m3kit.benchmarks.videomme_v2.score import (
        incomplete_note,
        scores_from_log,
        summary_rows,
    )

    samples = _limited_run(tmp_path)
    card = scores_from_log(samples)
    # 001 alone is scored: k = 2 -> 100 * 4 / 16 = 25; Avg Acc 2 of its 4 = 50 (counting
    # 002's two right answers would give 4 of 6 = 66.7)
    assert card.total == 25.0 and card.avg_acc == 50.0
    assert (card.n_groups, card.n_questions) == (1, 4)
    assert card.incomplete_groups == ["002"] and card.n_incomplete_questions == 2
    assert incomplete_note(card, "run") == (
        "run: 1 of 2 groups scored; 1 incomplete (fewer than four of their questions run, a "
        "--limit run) left out of every number, Avg Acc included, with their 2 answered "
        "question(s): 002")
    columns, (row,) = summary_rows(samples)
    cells = dict(zip(columns, row, strict=True))
    assert (cells["groups"], cells["Avg Acc"], cells["incompl"]) == ("1", "50.0", "1")
    assert incomplete_note(scores_from_log(samples[:4]), "run") is None  # nothing cut


def test_the_task_metric_counts_incomplete_groups(tmp_path: Path) -> None:
    from inspect_ai.scorer import SampleScore, Score

    from m3kit.benchmarks.videomme_v2.scorer import (
        videomme_v2_avg_acc,
        videomme_v2_incomplete_groups,
    )

    scores = [SampleScore(sample_id=s.id, score=Score(value=0, metadata=s.item.to_metadata()))
              for s in _limited_run(tmp_path)]
    assert videomme_v2_incomplete_groups()(scores) == 1
    assert videomme_v2_avg_acc()(scores) == 50.0  # over 001's four questions only
    assert videomme_v2_incomplete_groups()(scores[:4]) == 0
