"""The deterministic causality check, on times computed by hand."""

from __future__ import annotations

from typing import Any

from m3kit.benchmarks.supermemory.construct.causality import check_causality, question_video
from m3kit.benchmarks.supermemory.construct.records import LedgerSession, QADraft

T0 = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC
# D1 starts on the 14th and runs past midnight; D2 starts at midnight, on the 15th.
D2_START = T0 + 6_400.0
SESSIONS = {
    "D1": LedgerSession(video_id="D1", start_unix=T0, duration=7_200.0, has_video=True),
    "D2": LedgerSession(video_id="D2", start_unix=D2_START, duration=600.0, has_video=True),
}


def _draft(evidence: list[tuple[str, float, float]],
           question: list[tuple[str, float, float]]) -> QADraft:
    raw: dict[str, Any] = {
        "answer": {"evidence_list": [{"video_id": v, "time_span": {"start_time": s,
                                                                   "end_time": e}}
                                     for v, s, e in evidence],
                   "is_answerable": True, "text": "a",
                   "answer_choices": [{"choice_type": "correct", "text": "a"},
                                      {"choice_type": "vague", "text": "b"},
                                      {"choice_type": "incorrect", "text": "c"}]},
        "question": {"text": "q?", "time_spans": [{"video_id": v, "start_time": s,
                                                    "end_time": e} for v, s, e in question]},
        "metadata": {"skill": "visual_recall"},
    }
    return QADraft.model_validate(raw)


def test_evidence_ending_one_second_after_the_question_fails() -> None:
    # the question at D2 90-100 s: T0 + 6400 + 100 = T0 + 6500; the evidence on D1 (the day
    # before, its recording past midnight) ends at T0 + 6501
    check = check_causality(_draft([("D1", 6_400.0, 6_501.0)], [("D2", 90.0, 100.0)]),
                            SESSIONS)
    assert check.question_unix == T0 + 6_500.0
    assert check.latest_evidence_unix == T0 + 6_501.0
    assert not check.passed
    assert "1 s after the question" in check.late[0]


def test_evidence_ending_before_the_question_passes() -> None:
    check = check_causality(_draft([("D1", 10.0, 6_499.0)], [("D2", 90.0, 100.0)]), SESSIONS)
    assert check.passed and check.late == []
    assert check.latest_evidence_unix == T0 + 6_499.0


def test_evidence_ending_at_the_question_moment_fails() -> None:
    assert not check_causality(_draft([("D1", 10.0, 6_500.0)], [("D2", 90.0, 100.0)]),
                               SESSIONS).passed


def test_the_moment_is_the_last_end_on_the_question_video() -> None:
    # two spans on D2 (a recurring trigger): the moment is the later end, 300 s
    draft = _draft([("D2", 200.0, 250.0)], [("D2", 50.0, 60.0), ("D2", 290.0, 300.0)])
    assert question_video(draft, SESSIONS) == "D2"
    check = check_causality(draft, SESSIONS)
    assert check.question_unix == D2_START + 300.0 and check.passed


def test_the_question_video_is_the_earliest_spans() -> None:
    # a span on D1 comes first on the clock: D1 is the question's video, its moment D1's 40 s
    draft = _draft([("D1", 0.0, 30.0)], [("D2", 10.0, 20.0), ("D1", 30.0, 40.0)])
    assert question_video(draft, SESSIONS) == "D1"
    assert check_causality(draft, SESSIONS).question_unix == T0 + 40.0


def test_unknown_videos_and_spans_past_the_end_fail() -> None:
    unknown = check_causality(_draft([("D9", 0.0, 1.0)], [("D2", 90.0, 100.0)]), SESSIONS)
    assert not unknown.passed and "no session D9" in unknown.late[0]
    past = check_causality(_draft([("D1", 0.0, 1.0)], [("D2", 90.0, 700.0)]), SESSIONS)
    assert not past.passed and "past the end of D2" in past.late[0]
