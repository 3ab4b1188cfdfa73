"""``m3kit score m3exam`` and ``m3kit judge-agreement`` on real and fixture files."""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam.load import load_m3exam
from m3kit.cli.main import main

from ..waits import FAST_S


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "{broken\n", encoding="utf-8")
    return path


def test_score_m3exam_json_on_real_persona(m3exam_persona: Path, tmp_path: Path, capsys) -> None:
    preds = _write_jsonl(
        tmp_path / "preds.jsonl",
        [
            # Alex_Veterinarian/0 (ss): answers [Medial Saphenous Vein, Cephalic Vein, Jugular Vein]
            {"id": "Alex_Veterinarian/0", "prediction": "Jugular vein", "judge": 0.25},
            {"id": "nobody/1", "prediction": "x"},
        ],
    )
    code = main(["score", "m3exam", "--data", str(m3exam_persona), "--predictions", str(preds),
                 "--json"])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    # EM 1/2^2 = 0.25 (third entry); F1 vs the label: pred [jugular, vein], gold [medial,
    # saphenous, vein]: overlap 1, P 1/2, R 1/3 -> 0.4; BLEU-1 0.5 * exp(1 - 3/2)
    bleu = 0.5 * math.exp(-0.5)
    # the other 357 questions have no prediction: each counted wrong (0 on every metric, its
    # judge score 0 as a judge score is in play), so every mean is over all questions
    types = Counter(q.question_type for q in load_m3exam(m3exam_persona).questions)
    n_ss, n_all = types["ss"], sum(types.values())
    n_soft = sum(n for t, n in types.items() if t not in ("fm", "fj"))
    assert result["per_type"]["ss"] == pytest.approx(
        {"count": n_ss, "em": 0.25 / n_ss, "f1": 0.4 / n_ss, "bleu1": bleu / n_ss,
         "llm_judge": 0.25 / n_ss})
    assert sum(row["count"] for row in result["per_type"].values()) == n_all == 358
    em, f1, bleu1, judge = 0.25 / n_all, 0.4 / n_soft, bleu / n_soft, 0.25 / n_soft
    assert result["total"]["overall"] == pytest.approx(0.5 * judge + (em + f1 + bleu1) / 6)
    assert result["n_missing"] == 357
    # the broken last line is a named skip; the unknown id is counted and named on stderr
    assert [(r["file"], r["record"]) for r in result["skipped"]] == [(str(preds), "3")]
    assert (result["n_skipped_records"], result["n_unmatched_predictions"]) == (1, 1)
    assert f"m3kit: skipped: {preds}: record 3: " in captured.err
    assert "m3kit: 1 predictions match no question: nobody/1" in captured.err


def test_score_m3exam_fj_rule_flag(m3exam_persona: Path, tmp_path: Path, capsys) -> None:
    # Alex_Veterinarian/314 is fj with gold letter C
    preds = _write_jsonl(tmp_path / "preds.jsonl",
                         [{"id": "Alex_Veterinarian/314", "prediction": "The answer is C"}])
    args = ["score", "m3exam", "--data", str(m3exam_persona), "--predictions", str(preds)]
    assert main([*args, "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)
    # the paper's rule: the whole answer "the answer is c" is not "c"; the persona's other 28
    # fj questions have no prediction and count wrong
    assert exact["fj_rule"] == "exact" and exact["per_type"]["fj"] == {"count": 29, "em": 0.0}
    assert main([*args, "--json", "--fj-letter"]) == 0
    letter = json.loads(capsys.readouterr().out)
    assert letter["fj_rule"] == "letter"
    assert letter["per_type"]["fj"] == {"count": 29, "em": pytest.approx(1 / 29)}
    assert main([*args, "--fj-letter"]) == 0
    assert "(fj EM: letter)" in capsys.readouterr().out


def test_score_m3exam_partial_judge_is_named_not_averaged(m3exam_persona: Path,
                                                          tmp_path: Path, capsys) -> None:
    """Every question answered with its gold; only the ss answers carry a judge score."""
    questions = load_m3exam(m3exam_persona).questions
    types = Counter(q.question_type for q in questions)
    n_soft = sum(n for t, n in types.items() if t not in ("fm", "fj"))  # 305: LLM-J's items
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(
        json.dumps({"id": q.id, "prediction": q.answer,
                    **({"judge": 1.0} if q.question_type == "ss" else {})}) + "\n"
        for q in questions), encoding="utf-8")
    args = ["score", "m3exam", "--data", str(m3exam_persona), "--predictions", str(preds)]
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    # ss: all 48 judged, its mean stands; tr: none of its 87 judged, no mean
    assert result["per_type"]["ss"]["llm_judge"] == 1.0
    assert "judge_count" not in result["per_type"]["ss"]
    assert {k: result["per_type"]["tr"][k] for k in
            ("llm_judge", "llm_judge_partial", "judge_count", "judgeable_count")} == {
        "llm_judge": None, "llm_judge_partial": None, "judge_count": 0,
        "judgeable_count": types["tr"]}
    total = result["total"]
    assert (total["llm_judge"], total["llm_judge_partial"], total["overall"]) == (None, 1.0,
                                                                                 None)
    assert (total["judge_count"], total["judgeable_count"]) == (types["ss"], n_soft)
    missing = n_soft - types["ss"]
    assert (f"m3kit: LLM-J partial: {missing} of {n_soft} items LLM-J applies to have no "
            "judge score") in captured.err
    assert "--judge-model" in captured.err
    assert main(args) == 0
    captured = capsys.readouterr()
    assert f"{types['ss']} of {n_soft} judged" in captured.out
    assert f"0 of {types['tr']} judged" in captured.out
    assert "Overall: not computed, LLM-J partial" in captured.out
    total_line = next(line for line in captured.out.splitlines() if "TOTAL" in line)
    assert [cell.strip() for cell in total_line.split("│") if cell.strip()][-1] == "-"


def test_score_m3exam_table_on_locomo(tmp_path: Path, capsys) -> None:
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "May 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I paint."}]},
        "qa": [{"question": "What does A do?", "answer": "paints", "evidence": ["D1:1"],
                "category": 4}],
    }]), encoding="utf-8")  # fmt: skip
    preds = _write_jsonl(tmp_path / "p.jsonl", [{"id": "conv-1/0", "prediction": "paints"}])
    assert main(["score", "m3exam", "--data", str(locomo), "--predictions", str(preds)]) == 0
    out = capsys.readouterr().out
    assert "TOTAL" in out and "1.0000" in out


def test_score_m3exam_bad_data_is_one_line(tmp_path: Path, capsys) -> None:
    preds = _write_jsonl(tmp_path / "p.jsonl", [])
    code = main(
        ["score", "m3exam", "--data", str(tmp_path / "absent"), "--predictions", str(preds)]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("m3kit: error:") and "no such file" in err and "\n" not in err


def test_judge_agreement_from_file_scores(tmp_path: Path, capsys) -> None:
    rows = [
        {"id": "t1", "human": True, "group": "text", "judges": {"big": 1.0, "small": 0.5}},
        {"id": "t2", "human": False, "group": "text", "judges": {"big": 0.25, "small": 0.75}},
        {"id": "p1", "human": True, "group": "pdf", "judges": {"big": 0.75, "small": 1}},
        {"id": "p2", "human": 0, "group": "pdf", "judges": {"big": 0, "small": 0}},
    ]
    labels = _write_jsonl(tmp_path / "labels.jsonl", rows)
    assert main(["judge-agreement", str(labels), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    table = report["table"]
    # big: text T,F vs human T,F -> 2/2; pdf T,F vs T,F -> 2/2
    assert table["big"]["text"]["accuracy"] == 1.0 and table["big"]["pdf"]["accuracy"] == 1.0
    # small (>= 0.75): text F,T vs T,F -> 0/2; pdf T,F vs T,F -> 2/2
    assert table["small"]["text"] == {
        "count": 2, "correct": 1, "incorrect": 1, "agree": 0, "accuracy": 0.0,
    }  # fmt: skip
    assert table["human"]["pdf"]["correct"] == 1
    assert len(report["skipped"]) == 1  # the broken last line
    # At threshold 0.5 "small" calls t1 correct too: text T,T vs T,F -> 1/2.
    assert main(["judge-agreement", str(labels), "--threshold", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "Human verification" in out and "50" in out


def test_judge_agreement_cli_overall_and_empty_cells(tmp_path: Path, capsys) -> None:
    rows = [
        {"id": "t1", "human": True, "group": "text", "judges": {"big": 1.0}},
        {"id": "t2", "human": False, "group": "text", "judges": {"big": 1.0, "small": 0}},
        {"id": "u1", "human": True, "judges": {"big": 0.75}},
    ]
    labels = _write_jsonl(tmp_path / "labels.jsonl", rows)
    assert main(["judge-agreement", str(labels), "--json"]) == 0
    table = json.loads(capsys.readouterr().out)["table"]
    # big overall: T, T, T vs human T, F, T -> 2 of 3; small scored t2 only: text F vs F -> 1/1
    assert table["big"]["overall"]["agree"] == 2 and table["big"]["overall"]["count"] == 3
    assert table["small"]["(no group)"]["accuracy"] is None  # 0/0, JSON null
    assert "all" not in table["big"]
    assert main(["judge-agreement", str(labels)]) == 0
    out = capsys.readouterr().out
    assert "overall" in out and "(no group)" in out and "—" in out


def _dead_server_url() -> str:
    from fakeserver import ScriptedServer

    server = ScriptedServer(answer=lambda prompt: "Score: 1")
    base_url = server.start().base_url
    server.stop()  # nothing listens on its port any more
    return base_url


def test_score_m3exam_unreachable_judge_fails_at_once(
    m3exam_persona: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import time

    monkeypatch.setenv("DEADJUDGE_BASE_URL", _dead_server_url())
    monkeypatch.setenv("DEADJUDGE_API_KEY", "sk-test")
    preds = _write_jsonl(tmp_path / "p.jsonl",
                         [{"id": "Alex_Veterinarian/0", "prediction": "Jugular vein"}])
    start = time.monotonic()
    code = main(["score", "m3exam", "--data", str(m3exam_persona), "--predictions", str(preds),
                 "--judge-model", "openai-api/deadjudge/x", "--no-cache"])  # fmt: skip
    assert code == 2 and time.monotonic() - start < FAST_S  # the preflight, not retries
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("m3kit: error:") and "cannot reach" in err


def test_judge_agreement_duplicate_id_counted_once(tmp_path: Path, capsys) -> None:
    rows = [
        {"id": "t1", "human": True, "judges": {"big": 1.0}},
        {"id": "t2", "human": False, "judges": {"big": 1.0}},
        {"id": "t1", "human": False, "judges": {"big": 0.0}},  # duplicate: reported, not counted
    ]
    labels = _write_jsonl(tmp_path / "labels.jsonl", rows)
    assert main(["judge-agreement", str(labels), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # Counted once (the first t1): big T,T vs human T,F -> agree 1 of 2.
    assert report["table"]["big"]["overall"] == {
        "count": 2, "correct": 2, "incorrect": 0, "agree": 1, "accuracy": 0.5,
    }  # fmt: skip
    assert report["table"]["human"]["overall"]["count"] == 2
    # The broken last line, then the duplicate naming both positions.
    assert len(report["skipped"]) == 2
    assert report["skipped"][1] == "t1: duplicate id (item 3; the first, item 1, is kept)"
    assert main(["judge-agreement", str(labels)]) == 0
    assert "duplicate id" in capsys.readouterr().err


def test_judge_agreement_unreachable_judge_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("DEADJUDGE_BASE_URL", _dead_server_url())
    monkeypatch.setenv("DEADJUDGE_API_KEY", "sk-test")
    labels = _write_jsonl(tmp_path / "labels.jsonl", [{"id": "t1", "human": True}])
    code = main(["judge-agreement", str(labels), "--judge-model", "openai-api/deadjudge/x"])
    assert code == 2
    assert "cannot reach" in capsys.readouterr().err.strip().splitlines()[-1]


def test_score_m3exam_locomo_trap_answer_scores_zero(tmp_path: Path, capsys) -> None:
    # An adversarial (category 5) item: repeating the trap answer "a sunset" scores 0.0 and
    # saying the conversation does not tell scores 1.0, not the other way round.
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([{
        "sample_id": "conv-9",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "May 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I paint."}]},
        "qa": [{"question": "What did B paint?", "adversarial_answer": "a sunset",
                "evidence": ["D1:1"], "category": 5},
               {"question": "What did A paint?", "adversarial_answer": "a sunset",
                "evidence": ["D1:1"], "category": 5}],
    }]), encoding="utf-8")  # fmt: skip
    preds = _write_jsonl(tmp_path / "p.jsonl", [
        {"id": "conv-9/0", "prediction": "a sunset"},
        {"id": "conv-9/1", "prediction": "Not mentioned in the conversation"},
    ])  # fmt: skip
    assert main(["score", "m3exam", "--data", str(locomo), "--predictions", str(preds),
                 "--json"]) == 0  # fmt: skip
    row = json.loads(capsys.readouterr().out)["per_type"]["5"]
    # trap 0, abstention 1 -> mean (0 + 1) / 2 = 0.5 on EM, F1 and BLEU-1 alike
    assert (row["count"], row["em"], row["f1"], row["bleu1"]) == (2, 0.5, 0.5, 0.5)


def test_score_m3exam_lists_loader_skips_and_caps_stderr(tmp_path: Path, capsys) -> None:
    # a persona whose one round names 7 images that are not there, and a question of an
    # unknown type: 8 loader skips, each in the JSON; stderr shows 5 and "... and N more"
    persona = tmp_path / "Pat_Tester"
    (persona / "images").mkdir(parents=True)
    names = [f"img_{n}.jpg" for n in range(1, 8)]
    sessions = [{"session_id": "D1", "date": "2024-01-01", "dialogues": [
        {"round": "D1:1", "user": "My cat Miso has a sore paw.", "assistant": "Rest it.",
         "img_file": names, "img_id": list(range(1, 8))}]}]
    questions = [
        {"question": "What is the cat called?", "answer": ["Miso"], "label": "Miso",
         "supporting_facts": "D1:1", "type": "ss"},
        {"question": "Odd one?", "answer": ["x"], "label": "x", "supporting_facts": "D1:1",
         "type": "zz"},
    ]
    (persona / "sessions.json").write_text(json.dumps(sessions))
    (persona / "question.json").write_text(json.dumps(questions))
    preds = _write_jsonl(tmp_path / "p.jsonl", [{"id": "Pat_Tester/0", "prediction": "Miso"}])
    code = main(["score", "m3exam", "--data", str(persona), "--predictions", str(preds),
                 "--json"])
    assert code == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["total"]["em"] == 1.0
    skipped = result["skipped"]
    # the loader's 7 images and the "zz" question, then the broken predictions line (record 2)
    assert len(skipped) == 7 + 1 + 1 == result["n_skipped_records"]
    assert (skipped[-1]["file"], skipped[-1]["record"]) == (str(preds), "2")
    images = [r for r in skipped if r["file"] == str(persona / "sessions.json")]
    assert len(images) == 7 and all("not found" in r["reason"] for r in images)
    assert any(r["file"] == str(persona / "question.json") and "zz" in r["reason"]
               for r in skipped)
    lines = [ln for ln in captured.err.splitlines() if ln.startswith("m3kit: skipped:")]
    assert len(lines) == 5
    assert "m3kit: ... and 4 more skipped" in captured.err
