"""The judge's work is visible: ``progress(done, total)`` per verdict, an unusable verdict named
by ``JudgeVerdict.failure``, and ``m3kit score m3exam``'s table counting and naming them (not
only ``--json``)."""

from __future__ import annotations

from pathlib import Path

from m3kit.benchmarks.m3exam.judge import (
    JUDGE_NO_LEVEL,
    JudgeRequest,
    JudgeVerdict,
    judge_answers,
)
from m3kit.benchmarks.m3exam.score import M3ExamScores, score_text
from m3kit.schema.report import Table

from .test_judge import MODEL, judge_model  # noqa: F401 (the scripted judge fixture)


def test_progress_counts_every_verdict(judge_model) -> None:  # noqa: F811
    requests = [JudgeRequest(id=f"q{i}", question="Which vein?", gold="Medial Saphenous Vein",
                             prediction=p)
                for i, p in enumerate(["Medial Saphenous Vein", "banana", "something odd"])]
    seen: list[tuple[int, int]] = []
    verdicts = judge_answers(requests, MODEL, cache=False,
                             progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert [v.failure() for v in verdicts] == ["", "", JUDGE_NO_LEVEL]


def test_failure_names_the_error_first() -> None:
    failed = JudgeVerdict(id="a", score=0.0, parsed=False, reply="", error="APIError: down")
    assert failed.failure() == "APIError: down"


def test_score_table_counts_and_names_unusable_verdicts() -> None:
    row = {"count": 2, "em": 0.5, "f1": 0.5, "bleu1": 0.5, "llm_judge": 0.5}
    failures = [f"q{i}: {JUDGE_NO_LEVEL}" for i in range(5)]
    card = M3ExamScores(per_type={"ss": row}, total={**row, "overall": 0.5}, fj_rule="exact",
                        judge_failures=failures)
    table, text = score_text(card, Path("preds.jsonl"))
    assert isinstance(table, Table) and "judge: 5 unusable replies scored 0" in table.title
    assert text.splitlines() == [
        "LLM-J: 5 judged item(s) got no usable verdict and count 0:",
        f"  q0: {JUDGE_NO_LEVEL}", f"  q1: {JUDGE_NO_LEVEL}", f"  q2: {JUDGE_NO_LEVEL}",
        "  ... and 2 more (--json: judge_failures)"]
    clean = card.model_copy(update={"judge_failures": None})
    (only,) = score_text(clean, Path("preds.jsonl"))
    assert "judge:" not in only.title
