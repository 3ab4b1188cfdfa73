"""M3Eval numbers from raw outputs, each checked against a hand computation.

The questions and outputs are in conftest.py (PREDICTIONS says what each output counts as).
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks.m3eval.load import data_files, data_media, load_m3eval
from m3kit.benchmarks.m3eval.score import score_outputs
from m3kit.cli.main import main
from m3kit.harness.card import data_fingerprint
from m3kit.schema import Choice, ChoiceRole, Question
from m3kit.schema.card import files_fingerprint


def _storyline(source: float, order: float, content: float) -> dict[str, float]:
    """The three storyline columns of a divided-attention row."""
    return {"source_identification": source, "order_understanding": order,
            "content_retention": content}


THIRD, TWO_THIRDS = 1 / 3 * 100, 2 / 3 * 100  # 33.33333333333333, 66.66666666666666

# Hand-computed from conftest.PREDICTIONS (percent, full precision):
EXPECTED = {
    "divided_attention": {
        # no swap: source id ss-1 right, ss-9 wrong -> 1/2; order ss-2 wrong (ss-11 excluded)
        # -> 0/1; content ss-3 invalid -> 0/1
        "no_swap": _storyline(50.0, 0.0, 0.0),
        # swap: ss-4 right (bare A), ss-5 right, ss-6 invalid (E is no option)
        "swap": _storyline(100.0, 100.0, 0.0),
        # swap - no swap: 100 - 50, 100 - 0, 0 - 0
        "delta": _storyline(50.0, 100.0, 0.0),
        # ss-7 right, ss-8 wrong, ss-10 excluded -> 1/2
        "spatial_source_grounding": 50.0,
    },
    "memory_interference": {
        # mi-1 wrong (D: intrusion), mi-2 right, mi-6 invalid -> acc 1/3, intrusions 1/3
        "proactive": {"accuracy": THIRD, "intrusion_rate": THIRD},
        # mi-3 wrong (C = intrusion_option_letter), mi-4 right, mi-5 wrong -> acc 1/3;
        # intrusion over mi-3 and mi-4 only (mi-5 has no role info) -> 1/2
        "retroactive": {"accuracy": THIRD, "intrusion_rate": 50.0},
        "repeat_target": {"accuracy": 100.0, "intrusion_rate": 0.0},  # mt-1 right
        "repeat_interferer": {"accuracy": 0.0, "intrusion_rate": 100.0},  # mt-2 intrusion
        # 100/3 - 100/3 = 0; 100/3 - 50 = -16.666...
        "delta": {"accuracy": 0.0, "intrusion_rate": THIRD - 50.0},
    },
    "interleaved": {
        "source_identification": 100.0,  # il-1 right
        "order_understanding": 0.0,  # il-2 wrong
        "content_retention": 0.0,  # il-3 no prediction: wrong
        "false_memory_discrimination": 100.0,  # il-4 right
        "temporal_source_grounding": 50.0,  # il-5 right, il-6 wrong
    },
    "nback": {
        # right: nb-1, nb-4, nb-5; wrong: nb-2, nb-3; invalid: nb-6 -> 3/6
        "accuracy": 50.0,
        # action: nb-1 right, nb-2 and nb-6 not -> 1/3; scene: nb-4, nb-5 right, nb-3 not -> 2/3
        "by_attribute": {"action": THIRD, "scene": TWO_THIRDS},
        # N=1: nb-1 | nb-3, nb-6 -> 1/3; N=2: nb-4 | nb-2 -> 1/2; N=3: nb-5 -> 1/1
        "by_n": {"1": THIRD, "2": 50.0, "3": 100.0},
        # K=3: nb-1 | nb-2 -> 1/2; K=4: nb-4, nb-5 | nb-3, nb-6 -> 2/4
        "by_k": {"3": 50.0, "4": 50.0},
        "by_k_n": {"K=3,N=1": 100.0, "K=3,N=2": 0.0, "K=4,N=1": 0.0, "K=4,N=2": 100.0,
                   "K=4,N=3": 100.0},
        # points (N, acc): (1,100) (2,0) (1,0) (2,100) (3,100): see tests/metrics/test_fits.py
        # slope = 60 / 2.8 = 150/7 = 21.43, intercept = 60 - 1.8 * slope = 150/7,
        # SSE = 75000/7 = 10714.29, std = sqrt(SSE / 3) = 59.76
        "fit_n": {"slope": 150 / 7, "intercept": 150 / 7, "residual_std": math.sqrt(25000 / 7),
                  "points": 5},
        # points (K, acc): (3,100) (3,0) (4,0) (4,100) (4,100): mean K 3.6, mean acc 60,
        # Sxx = 2 * 0.36 + 3 * 0.16 = 1.2, Sxy = -24 + 36 - 24 + 16 + 16 = 20,
        # slope = 20 / 1.2 = 50/3, intercept = 60 - 3.6 * 50/3 = 0;
        # residuals 50, -50, -200/3, 100/3, 100/3: SSE = 35000/3, std = sqrt(SSE/3) = 62.36
        "fit_k": {"slope": 50 / 3, "intercept": 0.0, "residual_std": math.sqrt(35000 / 9),
                  "points": 5},
    },
    "n_invalid": 4,  # ss-3, ss-6, mi-6, nb-6
    "n_excluded": 2,  # ss-10 (given), ss-11 (the authors' video-failure sentinel)
    "n_failed": 0,
    "n_missing": 2,  # il-3, mt-3 (mt-3 has no condition: it counts in no table cell)
    "n_scored": 30,  # 32 questions loaded, 2 excluded
    # where the two would have counted: those cells above are rates over the rest
    "excluded_by_cell": {"divided_attention · no_swap · order_understanding": ["ss-11"],
                         "divided_attention · spatial_source_grounding": ["ss-10"]},
}


def assert_close(actual: Any, expected: Any, where: str = "result") -> None:
    """``actual`` equals ``expected`` key for key; floats to 1e-12 relative (1e-9 absolute
    near 0), far tighter than any rounding to 4 decimals (33.3333 vs 100/3 differs by 1e-6)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), where
        for key in expected:
            assert_close(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, float):
        assert isinstance(actual, float), where
        assert math.isclose(actual, expected, rel_tol=1e-12, abs_tol=1e-9), (where, actual)
    else:
        assert actual == expected, where


def test_score_equals_hand_computation(
    released_root: Path, released_predictions: dict[str, str], released_excluded: set[str]
) -> None:
    loaded = load_m3eval(released_root)
    result = score_outputs(loaded.questions, released_predictions,
                               excluded=released_excluded).model_dump()
    assert_close(result, EXPECTED)


def test_score_text_names_the_cells_excluded_questions_leave(
    released_root: Path, released_predictions: dict[str, str], released_excluded: set[str]
) -> None:
    from m3kit.benchmarks.m3eval.score import score_text

    loaded = load_m3eval(released_root)
    card = score_outputs(loaded.questions, released_predictions, excluded=released_excluded)
    (text,) = score_text(card, Path("p.jsonl"))
    assert text.splitlines()[-4:] == [
        "invalid 4, excluded 2, missing 2, scored 30",
        "excluded (video unreadable), left out of these cells' rates:",
        "  divided_attention · no_swap · order_understanding: ss-11",
        "  divided_attention · spatial_source_grounding: ss-10"]
    # nothing excluded (no sentinel, no id given): the text ends with the counts, as before
    clean = score_outputs(loaded.questions, {k: v for k, v in released_predictions.items()
                                             if k != "ss-11"})
    assert score_text(clean, Path("p.jsonl"))[0].splitlines()[-1].startswith("invalid ")
    assert clean.excluded_by_cell == {}


def test_cli_json_equals_hand_computation(released_root: Path, predictions_file: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["score", "m3eval", "--data", str(released_root), "--predictions",
                 str(predictions_file), "--json", "--exclude", "ss-10"])
    out = capsys.readouterr()
    assert code == 0
    result = json.loads(out.out)
    # 8 records of the release were skipped (see test_load.py), then the predictions file's
    # line that is not JSON; one prediction matches nothing
    skipped = result.pop("skipped")
    assert result.pop("n_skipped_records") == len(skipped) == 9
    assert skipped[-1]["file"] == str(predictions_file) and skipped[-1]["record"] == "4"
    assert "invalid JSON" in skipped[-1]["reason"]
    assert result.pop("n_unmatched_predictions") == 1
    # the reproducibility card: the model of external predictions is unknown; the data set's
    # fingerprint is over the question files the loader reads and the videos their questions
    # name, the predictions file's own hash
    card = result.pop("card")
    assert card["model"] is None and card["benchmark"] == "m3eval"
    assert card["data_fingerprint"] == data_fingerprint(data_files(released_root),
                                                        data_media(released_root))
    assert card["data_fingerprint"] != files_fingerprint(data_files(released_root))
    assert card["predictions_sha256"] == hashlib.sha256(predictions_file.read_bytes()).hexdigest()
    assert card["scoring"]["invalid"] == "counted wrong"
    assert card["m3kit_version"] and card["inspect_ai_version"]
    assert_close(result, EXPECTED)
    # unrounded: 1 of 3 proactive answers right is 1/3 * 100 to the last bit, not 33.3333
    assert result["memory_interference"]["proactive"]["accuracy"] == 1 / 3 * 100
    assert '"accuracy": 33.33333333333333,' in out.out
    # stderr names the first five skips and counts the rest
    assert "not json" not in out.out and "m3kit: ... and 4 more skipped" in out.err
    assert "m3kit: 1 predictions match no question: not-a-question" in out.err


def test_cli_tables_and_errors(released_root: Path, predictions_file: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["score", "m3eval", "--data", str(released_root), "--predictions",
                 str(predictions_file)]) == 0
    text = capsys.readouterr().out
    assert "spatial source grounding" in text and "50.00" in text
    # the table rounds for display: 2 decimals (100/3 -> 33.33)
    assert "33.33" in text and "33.333" not in text
    # a missing folder or predictions file: one line, exit 2
    assert main(["score", "m3eval", "--data", str(tmp_path / "nope"), "--predictions",
                 str(predictions_file)]) == 2
    assert main(["score", "m3eval", "--data", str(released_root), "--predictions",
                 str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "none.jsonl" in err and "Traceback" not in err


def _question(qid: str, roles: dict[str, str | None], paradigm: str = "interference",
              condition: str = "proactive") -> Question:
    return Question(
        id=qid, benchmark="t", text="?", answer="A",
        choices=[Choice(letter=k, text=k.lower(), role=ChoiceRole(r) if r else None)
                 for k, r in roles.items()],
        metadata={"paradigm": paradigm, "condition": condition},
    )


def test_intrusion_rate_counts_invalid_answers_and_skips_unannotated_questions() -> None:
    roles = {"A": "correct", "B": "intrusion", "C": "intrusion", "D": "irrelevant_distractor"}
    qs = [_question("q1", roles), _question("q2", roles), _question("q3", roles),
          _question("q4", roles), _question("q5", dict.fromkeys("ABCD"))]
    preds = {"q1": "The final answer is B",  # intrusion
             "q2": "The final answer is C",  # intrusion
             "q3": "The final answer is D",  # irrelevant distractor
             "q4": "b",  # invalid: in the denominator, not an intrusion
             "q5": "The final answer is B"}  # no roles: accuracy only
    result = score_outputs(qs, preds).model_dump()["memory_interference"]["proactive"]
    # accuracy 0/5; intrusion 2/4 (q5 has no annotation)
    assert result == {"accuracy": 0.0, "intrusion_rate": 50.0}


def test_empty_cells_are_none() -> None:
    result = score_outputs([], {}).model_dump()
    assert result["divided_attention"]["no_swap"]["source_identification"] is None
    assert result["memory_interference"]["delta"] == {"accuracy": None, "intrusion_rate": None}
    assert "repeat_target" not in result["memory_interference"]
    assert result["nback"]["fit_n"] is None and result["nback"]["by_n"] == {}
    assert result["n_scored"] == 0


def test_synthetic_suite_metadata_scores_in_the_same_columns() -> None:
    # The synthetic suite names question types by column and gives no source_dimension.
    q = Question(id="s1", benchmark="m3kit-synth", text="?", answer="A",
                 question_type="order_understanding",
                 choices=[Choice(letter="A", text="x", role=ChoiceRole.CORRECT),
                          Choice(letter="B", text="y", role=ChoiceRole.ORDER_DISRUPTION)],
                 metadata={"paradigm": "divided_attention", "condition": "swap10",
                           "question_type": "order_understanding"})
    result = score_outputs([q], {"s1": "The final answer is A"}).model_dump()
    assert result["divided_attention"]["swap"]["order_understanding"] == 100.0
    # no no-swap question: no delta
    assert result["divided_attention"]["delta"]["order_understanding"] is None


def test_cli_nothing_to_score_is_an_error(released_root: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every record skipped, or no prediction matching a question, is one error
    line and exit 2, not a table of dashes with exit 0."""
    bad_root = tmp_path / "all_bad"
    folder = bad_root / "qa_root" / "interleaved"
    folder.mkdir(parents=True)
    (folder / "interleaved_qa.json").write_text(json.dumps(
        [{"id": "x-1", "video": "../out.mp4", "question": "Q?", "options": ["A. a", "B. b"],
          "answer": "A"}]))
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"id": "x-1", "prediction": "The final answer is A"}) + "\n")
    assert main(["score", "m3eval", "--data", str(bad_root), "--predictions", str(preds)]) == 2
    out = capsys.readouterr()
    assert out.out == ""  # no table
    last = out.err.strip().splitlines()[-1]
    assert "no question could be loaded (1 records skipped" in last
    assert "leaves the M3Eval root" in out.err  # the skipped record is still named

    stray = tmp_path / "stray.jsonl"
    stray.write_text(json.dumps({"id": "nope-1", "prediction": "A"}) + "\n")
    assert main(["score", "m3eval", "--data", str(released_root), "--predictions",
                 str(stray), "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert "none of the 1 predictions matches a question id" in out.err
    assert "Traceback" not in out.err


def test_a_predictions_file_with_no_valid_line_exits_2(released_root: Path, tmp_path: Path,
                                                       capsys) -> None:
    """One rule across benchmarks: no valid line is an error (exit 2), not a table of wrong
    answers."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text('not json\n{"prediction": "A"}\n', encoding="utf-8")
    assert main(["score", "m3eval", "--data", str(released_root), "--predictions", str(bad),
                 "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "none of the 0 predictions matches" in out.err
