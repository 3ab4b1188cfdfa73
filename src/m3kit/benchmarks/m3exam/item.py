"""M3Exam's per-item record, ``M3ExamItem``, and how one answer becomes one (``score_item``).

``m3exam_answer`` (``scorer.py``) writes one ``M3ExamItem`` into each score's metadata; the
report and ``m3kit eval``'s table read it back. ``score_item`` scores one answer under its type's
rule (``m3kit.metrics.text_match``, the per-item function ``m3kit score m3exam`` uses too).
"""

from __future__ import annotations

from typing import Any

from m3kit.benchmarks.m3exam.load import evidence_session
from m3kit.metrics.text_match import AnswerScores, FjRule, score_text_answer
from m3kit.schema import Question, ScoreItem, ScoreStatus

__all__ = ["M3ExamItem", "score_item"]


class M3ExamItem(ScoreItem, AnswerScores):
    """One scored M3Exam (or LoCoMo) answer: the lexical scores (``AnswerScores``), the
    question type, the judge's score and reply where a judge ran, and why the item failed."""

    question_type: str | None = None
    llm_judge: float | None = None
    judge_reply: str | None = None
    reason: str | None = None
    # the session of the question's evidence (``load.evidence_session``): the unit confidence
    # intervals resample; None where no round is named (the question is its own unit)
    session: str | None = None

    def to_metadata(self) -> dict[str, Any]:
        """The record as a score's metadata; the judge's entries only where a judge ran."""
        data = super().to_metadata()
        for key in ("llm_judge", "judge_reply", "session"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


def score_item(question: Question, prediction: str, failure: str | None = None,
               fj_rule: FjRule = "exact") -> M3ExamItem:
    """EM, F1, BLEU-1 of one item as ``m3kit.metrics.text_match`` scores it (failed: all 0,
    counted wrong; fj by ``fj_rule``); ``in_total`` says whether F1/BLEU-1 enter the TOTAL (not
    fm, not fj); ``status`` is ``correct`` (EM 1), ``incorrect`` or ``failed``."""
    answers = [question.answer, *question.alternatives]
    label = question.metadata.get("label")
    scores = score_text_answer(prediction if failure is None else "", answers,
                               str(label) if label is not None else None, question.question_type,
                               fj_rule)
    values = scores.model_dump(mode="json")
    if failure is not None:
        values.update(em=0.0, f1=0.0 if scores.f1 is not None else None,
                      bleu1=0.0 if scores.bleu1 is not None else None)
    # ``status`` speaks the harness's vocabulary (``m3kit eval`` prints its share correct):
    # correct = full EM credit.
    status: ScoreStatus = ("failed" if failure else
                           "correct" if values["em"] >= 1.0 else "incorrect")
    return M3ExamItem(**values, status=status, reason=failure,
                      question_type=question.question_type,
                      session=evidence_session(question),
                      groups={"question_type": question.question_type})
