"""M3Exam scoring: per-type table, TOTAL and Overall, hand-computed; the real persona scored
with gold predictions; judge scores computed for the items that lack one."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from fakeserver import ScriptedServer
from m3kit.benchmarks.m3exam.load import M3ExamData, load_m3exam
from m3kit.benchmarks.m3exam.predictions import PredictionRecord, read_predictions
from m3kit.benchmarks.m3exam.score import overall_score, score_outputs
from m3kit.schema import Conversation, Question


def _q(i: int, qtype: str, answers: list[str]) -> Question:
    return Question(
        id=f"p/{i}", benchmark="m3exam", text=f"question {i}", answer=answers[0],
        alternatives=answers[1:], question_type=qtype,
        metadata={"persona": "p", "label": answers[0]},
    )  # fmt: skip


@pytest.fixture
def data() -> M3ExamData:
    questions = [
        _q(0, "ss", ["Medial Saphenous Vein", "Cephalic Vein"]),
        _q(1, "tr", ["2023-03-01", "March 1, 2023"]),
        _q(2, "fj", ["C"]),
        _q(3, "fm", ["img_60", "img_61"]),
        _q(4, "fm", ["otoscope"]),
        _q(5, "ss", ["never answered"]),
    ]
    return M3ExamData(conversations={"p": Conversation(id="p")}, questions=questions)


PREDICTIONS = [
    PredictionRecord(id="p/0", prediction="Cephalic vein", judge=0.5),
    PredictionRecord(id="p/1", prediction="2023-03-01", judge=1.0),
    PredictionRecord(id="p/2", prediction="(C)"),
    PredictionRecord(id="p/3", prediction="img_60, img_61"),
    PredictionRecord(id="p/4", prediction="otoscope", judge=0.75),
    PredictionRecord(id="p/99", prediction="unknown id"),
]


def test_per_type_total_and_overall_hand_computed(data: M3ExamData) -> None:
    result = score_outputs(data, PREDICTIONS)
    e = math.exp(-0.5)
    # p/0 ss: EM 1/2 (second entry); F1 vs "Medial Saphenous Vein": overlap 1 (vein),
    #   P 1/2, R 1/3 -> 0.4; BLEU-1: p1 1/2, BP exp(1 - 3/2) -> 0.5*e; judge 0.5
    # p/1 tr: EM 1; tokens [2023, 03, 01] both sides -> F1 1, BLEU-1 1; judge 1
    # p/2 fj: letter C -> EM 1 (no F1/BLEU/judge)
    # p/3 fm image: names the hard negative img_61 -> EM 0
    # p/4 fm text: EM 1, soft scores kept out of TOTAL
    # p/5 ss: no prediction -> counted wrong: EM 0, F1 0, BLEU-1 0, judge 0 (a judge is in play)
    per_type = result.per_type
    assert list(per_type) == ["ss", "tr", "fm", "fj"]  # the paper's type order
    assert per_type["ss"] == pytest.approx(
        {"count": 2, "em": 0.25, "f1": 0.2, "bleu1": 0.25 * e, "llm_judge": 0.25}
    )
    assert per_type["fm"] == {"count": 2, "em": 0.5}  # (0 + 1) / 2
    assert per_type["fj"] == {"count": 1, "em": 1.0}
    total = result.total
    # EM over all 6: (0.5 + 1 + 1 + 0 + 1 + 0) / 6 = 0.58333
    # F1 over ss+tr: (0.4 + 1 + 0) / 3 = 0.46667; BLEU-1: (0.5e + 1 + 0) / 3;
    # LLM-J: (0.5 + 1 + 0) / 3 = 0.5
    bleu = (0.5 * e + 1) / 3
    assert total["count"] == 6
    assert total["em"] == pytest.approx(3.5 / 6)
    assert total["f1"] == pytest.approx(1.4 / 3)
    assert total["bleu1"] == pytest.approx(bleu)
    assert total["llm_judge"] == pytest.approx(0.5)
    # Overall = 0.5 * 0.5 + (0.58333 + 0.46667 + 0.43442) / 6 = 0.25 + 1.48442 / 6 ~ 0.49740
    assert total["overall"] == pytest.approx(0.25 + (3.5 / 6 + 1.4 / 3 + bleu) / 6)
    assert total["overall"] == pytest.approx(0.497404, abs=1e-6)
    assert result.n_missing == 1  # p/5, counted wrong
    # the unknown id is counted and named, not scored
    assert (result.n_unmatched_predictions, result.unmatched_ids) == (1, ["p/99"])
    assert result.skipped == [] and result.n_skipped_records == 0


def test_fj_whole_answer_by_default_and_letter_on_request(data: M3ExamData) -> None:
    preds = {"p/0": "Medial Saphenous Vein", "p/2": "The answer is C"}
    exact = score_outputs(data, preds)
    # the paper's rule: "the answer is c" is not the letter "c" -> fj EM 0; EM (1 + 0) over
    # all 6 questions, the 4 without a prediction counted wrong
    assert exact.fj_rule == "exact"
    assert exact.per_type["fj"] == {"count": 1, "em": 0.0}
    assert exact.total["em"] == pytest.approx(1 / 6)
    letter = score_outputs(data, preds, fj_rule="letter")
    # m3kit's addition: the stated letter C -> fj EM 1; EM (1 + 1) / 6; other types unchanged
    assert letter.fj_rule == "letter"
    assert letter.per_type["fj"] == {"count": 1, "em": 1.0}
    assert letter.total["em"] == pytest.approx(2 / 6)
    assert letter.per_type["ss"] == exact.per_type["ss"]


def test_unknown_fj_rule_is_a_typed_error(data: M3ExamData) -> None:
    from m3kit.errors import M3kitError

    with pytest.raises(M3kitError, match="fj rule 'first'") as caught:
        score_outputs(data, {"p/2": "C"}, fj_rule="first")  # type: ignore[arg-type]
    assert caught.value.field == "fj_rule"


def test_overall_formula() -> None:
    # 0.5 * 0.6 + (0.3 + 0.45 + 0.15) / 6 = 0.3 + 0.15 = 0.45
    assert overall_score(em=0.3, f1=0.45, bleu1=0.15, llm_judge=0.6) == pytest.approx(0.45)


def test_without_judge_scores_overall_is_none(data: M3ExamData) -> None:
    result = score_outputs(data, {"p/0": "Medial Saphenous Vein", "p/2": "B"})
    # no judge in play: the missing questions get no judge score either
    assert result.total["llm_judge"] is None and result.total["overall"] is None
    assert result.total["em"] == pytest.approx(1 / 6)  # (1 + 0 + 4 missing × 0) / 6
    assert result.n_missing == 4


# p/0 carries a judge score; p/1 (tr) and p/5 (ss) do not: the judge is partial
PARTIAL = [
    PredictionRecord(id="p/0", prediction="Cephalic vein", judge=0.5),
    PredictionRecord(id="p/1", prediction="2023-03-01"),
    PredictionRecord(id="p/2", prediction="(C)"),
    PredictionRecord(id="p/3", prediction="img_60, img_61"),
    PredictionRecord(id="p/4", prediction="otoscope"),  # fm text: not in TOTAL, not counted
    PredictionRecord(id="p/5", prediction="never answered"),
]


def test_partial_judge_gives_counts_not_a_mean(data: M3ExamData) -> None:
    result = score_outputs(data, PARTIAL)
    e = math.exp(-0.5)
    # ss: p/0 EM 1/2, F1 0.4, BLEU-1 0.5e, judge 0.5; p/5 EM 1, F1 1, BLEU-1 1, no judge:
    # 1 of 2 judged -> no LLM-J; the judged item's mean 0.5 kept apart
    assert result.per_type["ss"] == pytest.approx(
        {"count": 2, "em": 0.75, "f1": 0.7, "bleu1": (0.5 * e + 1) / 2, "llm_judge": None,
         "llm_judge_partial": 0.5, "judge_count": 1, "judgeable_count": 2})
    # tr: its one item unjudged while a judge is in play: 0 of 1, no mean at all
    assert result.per_type["tr"] == {"count": 1, "em": 1.0, "f1": 1.0, "bleu1": 1.0,
                                     "llm_judge": None, "llm_judge_partial": None,
                                     "judge_count": 0, "judgeable_count": 1}
    assert result.per_type["fm"] == {"count": 2, "em": 0.5}  # no LLM-J row for fm
    total = result.total
    # TOTAL over ss + tr (3 items): 1 judged; EM over all 6: (0.5 + 1 + 1 + 0 + 1 + 1) / 6
    assert total["em"] == pytest.approx(4.5 / 6)
    assert (total["llm_judge"], total["llm_judge_partial"]) == (None, 0.5)
    assert (total["judge_count"], total["judgeable_count"]) == (1, 3)
    assert total["overall"] is None
    assert total["overall_missing"] == "LLM-J partial: 1 of 3 items judged"


def test_partial_judge_table_and_warning(data: M3ExamData, tmp_path: Path) -> None:
    from m3kit.benchmarks.m3exam.score import judge_gap_note, score_text

    card = score_outputs(data, PARTIAL)
    table, reason = score_text(card, tmp_path / "p.jsonl")
    llm_j = {row[0]: row[5] for row in table.rows}
    assert llm_j == {"ss": "1 of 2 judged", "tr": "0 of 1 judged", "fm": "-", "fj": "-",
                     "TOTAL": "1 of 3 judged"}
    assert table.rows[-1][6] == "-"  # Overall
    assert reason.startswith("Overall: not computed, LLM-J partial: 1 of 3 items judged")
    assert judge_gap_note(card.total, "fix it") == (
        "LLM-J partial: 2 of 3 items LLM-J applies to have no judge score, so LLM-J is shown "
        "as judged counts and Overall is not computed; fix it")


def test_full_and_no_judge_tables_unchanged(data: M3ExamData, tmp_path: Path) -> None:
    """A judge on every item and no judge at all print what they always printed."""
    from m3kit.benchmarks.m3exam.score import judge_gap_note, score_text

    full = score_outputs(data, PREDICTIONS)
    (table,) = score_text(full, tmp_path / "p.jsonl")
    # LLM-J: ss (0.5 + 0) / 2, tr 1; TOTAL (0.5 + 1 + 0) / 3; Overall as hand-computed above
    assert [row[5] for row in table.rows] == ["0.2500", "1.0000", "-", "-", "0.5000"]
    assert table.rows[-1][6] == "0.4974"
    assert judge_gap_note(full.total, "x") is None and "overall_missing" not in full.total
    bare = score_outputs(data, {r.id: r.prediction for r in PREDICTIONS})
    (table,) = score_text(bare, tmp_path / "p.jsonl")
    assert [row[5] for row in table.rows] == ["-"] * 5 and table.rows[-1][6] == "-"
    # no judge: the TOTAL's JSON as it always was (no partial keys; judge_count 0)
    assert set(bare.total) == {"count", "em", "f1", "bleu1", "llm_judge", "judge_count",
                               "overall"}
    assert bare.total["judge_count"] == 0 and judge_gap_note(bare.total, "x") is None
    assert all("judge_count" not in row for row in bare.per_type.values())


def test_eval_summary_shows_judged_counts() -> None:
    """``m3kit eval``'s table of a run whose items are judged only in part."""
    from m3kit.benchmarks.m3exam.item import M3ExamItem
    from m3kit.benchmarks.m3exam.score import summary_rows
    from m3kit.schema import LoggedSample

    def sample(i: int, qtype: str, em: float, judge: float | None) -> LoggedSample:
        item = M3ExamItem(status="correct" if em == 1 else "incorrect", kind="text", em=em,
                          f1=em, bleu1=em, judged=True, in_total=True, question_type=qtype,
                          llm_judge=judge)
        return LoggedSample(id=f"p/{i}", item=item)

    partial = [sample(0, "ss", 1.0, 1.0), sample(1, "ss", 0.0, None),
               sample(2, "tr", 1.0, 0.75)]
    columns, rows = summary_rows(partial)
    assert columns[5] == "LLM-J"
    # all: 2 of 3 judged; ss 1 of 2; tr 1 of 1 -> its own mean 0.75
    assert [(row[0], row[5]) for row in rows] == [("all", "2 of 3 judged"),
                                                  ("ss", "1 of 2 judged"), ("tr", "0.7500")]
    whole = [sample(0, "ss", 1.0, 1.0), sample(1, "ss", 0.0, 0.0)]
    assert [row[5] for row in summary_rows(whole)[1]] == ["0.5000", "0.5000"]
    none = [sample(0, "ss", 1.0, None)]
    assert "LLM-J" not in summary_rows(none)[0]


def test_real_persona_gold_predictions(m3exam_persona: Path) -> None:
    alex = load_m3exam(m3exam_persona)
    result = score_outputs(alex, {q.id: q.answer for q in alex.questions})
    total = result.total
    # The head of every answer list is its own first entry (fm: the gold id, fj: the letter).
    assert total["count"] == 358 and total["em"] == 1.0
    assert sum(row["count"] for row in result.per_type.values()) == 358
    assert set(result.per_type["fm"]) == {"count", "em"}
    # F1/BLEU-1 are against ``label``, which differs from the answer head on a few items.
    assert 0.9 < total["f1"] <= 1.0 and 0.9 < total["bleu1"] <= 1.0


def test_read_predictions_reports_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text(
        '{"id": "p/0", "prediction": "x"}\n'
        "not json\n"
        '{"id": "p/1", "prediction": 63, "judge": 0.5}\n'
        '{"id": "p/2", "prediction": "y", "judge": 3}\n',
        encoding="utf-8",
    )
    records, issues = read_predictions(path)
    assert [(r.id, r.prediction, r.judge) for r in records] == [
        ("p/0", "x", None),
        ("p/1", "63", 0.5),
    ]
    assert [(i.record, i.field) for i in issues] == [("2", None), ("4 (id p/2)", "judge")]


_ANSWER = re.compile(r"^Model's answer: (.*)$", re.MULTILINE)


@pytest.fixture
def judge_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedServer]:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    replies = {"Cephalic vein": "Score: 0.25", "otoscope": "Score: 1"}
    server = ScriptedServer(
        answer=lambda p: replies.get(_ANSWER.search(p).group(1), "no idea"),
        key_of=lambda p: _ANSWER.search(p).group(1),
    ).start()
    monkeypatch.setenv("SCORESRV_BASE_URL", server.base_url)
    monkeypatch.setenv("SCORESRV_API_KEY", "sk-test")
    yield server
    server.stop()


def test_missing_judge_scores_are_computed(data: M3ExamData, judge_server: ScriptedServer) -> None:
    preds = [
        PredictionRecord(id="p/0", prediction="Cephalic vein"),  # judged now: 0.25
        PredictionRecord(id="p/1", prediction="2023-03-01", judge=1.0),  # given: kept
        PredictionRecord(id="p/2", prediction="C"),  # fj: never judged
        PredictionRecord(id="p/3", prediction="img_60"),  # fm image: never judged
        PredictionRecord(id="p/4", prediction="otoscope"),  # fm text: judged, not in TOTAL
    ]
    result = score_outputs(data, preds, judge_model="openai-api/scoresrv/judge")
    # p/5 has no prediction: the judge is not asked, it scores 0 (counted wrong)
    assert sorted(judge_server.answered_keys()) == ["Cephalic vein", "otoscope"]
    assert result.per_type["ss"]["llm_judge"] == pytest.approx((0.25 + 0.0) / 2)
    assert result.total["llm_judge"] == pytest.approx((0.25 + 1.0 + 0.0) / 3)
    assert result.n_missing == 1
    assert "judge_failures" not in result


def test_a_predictions_file_with_no_valid_line_exits_2(m3exam_persona: Path, tmp_path: Path,
                                                       capsys) -> None:
    """One rule across benchmarks: no valid line is an error (exit 2), not 358 wrong answers."""
    from m3kit.cli.main import main

    bad = tmp_path / "bad.jsonl"
    bad.write_text('not json\n{"prediction": "x"}\n', encoding="utf-8")
    assert main(["score", "m3exam", "--data", str(m3exam_persona), "--predictions", str(bad),
                 "--json"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "none of the 0 predictions matches" in out.err
