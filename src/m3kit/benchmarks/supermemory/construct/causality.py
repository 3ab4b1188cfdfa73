"""The deterministic causality check of a QA draft: all its evidence lies before its question.

A question's moment is where ``load.py`` places it when the benchmark is read (``question_cut``:
the question video's start plus the largest end of its spans on that video), its video the one
of its earliest span on the person's clock (the release recomputes ``primary_video_id`` so). An
evidence span passes when it ends strictly before that moment on the clock (its session's
start plus its local end). A span (of the evidence or of the question) on a video the person
has no session of, or ending past its video's duration, fails as well: its time is no time in
the recordings. A pair failing this check is rejected whatever the verifier says.
"""

from __future__ import annotations

from collections.abc import Mapping

from m3kit.benchmarks.supermemory.construct.records import (
    CausalityCheck,
    LedgerSession,
    QADraft,
)
from m3kit.benchmarks.supermemory.fields import SPAN_SLACK_S
from m3kit.benchmarks.supermemory.load import EvidenceSpan, question_cut

__all__ = ["check_causality", "question_video"]


def question_video(draft: QADraft, sessions: Mapping[str, LedgerSession]) -> str:
    """The draft's question video: the one of its earliest question span on the clock (a
    span on an unknown video counts as last)."""
    def clock(video_id: str, local: float) -> float:
        session = sessions.get(video_id)
        return session.start_unix + local if session is not None else float("inf")

    first = min(draft.question.time_spans, key=lambda s: clock(s.video_id, s.start_time))
    return first.video_id


def _outside(video_id: str, end: float, sessions: Mapping[str, LedgerSession]) -> str | None:
    session = sessions.get(video_id)
    if session is None:
        return f"no session {video_id}"
    if end > session.duration + SPAN_SLACK_S:
        return f"ends past the end of {video_id} ({session.duration:g} s)"
    return None


def check_causality(draft: QADraft, sessions: Mapping[str, LedgerSession]) -> CausalityCheck:
    """Whether every evidence span of ``draft`` ends before its question's moment (see the
    module doc); ``late`` names each span that does not, and why."""
    spans = draft.question.time_spans
    if not spans:
        return CausalityCheck(question_unix=0.0, latest_evidence_unix=None, passed=False,
                              late=["the question has no span: it has no moment"])
    primary = question_video(draft, sessions)
    late: list[str] = []
    for n, span in enumerate(spans):
        problem = _outside(span.video_id, span.end_time, sessions)
        if problem is not None:
            late.append(f"question span {n} ({span.video_id} {span.start_time:g}-"
                        f"{span.end_time:g} s): {problem}")
    primary_session = sessions.get(primary)
    cut = question_cut(primary, [EvidenceSpan(video_id=s.video_id, start=s.start_time,
                                              end=s.end_time) for s in spans])
    question_unix = (primary_session.start_unix if primary_session else 0.0) + cut
    latest: float | None = None
    for n, evidence in enumerate(draft.answer.evidence_list):
        where = (f"evidence {n} ({evidence.video_id} {evidence.time_span.start_time:g}-"
                 f"{evidence.time_span.end_time:g} s)")
        problem = _outside(evidence.video_id, evidence.time_span.end_time, sessions)
        if problem is not None:
            late.append(f"{where}: {problem}")
            continue
        end_unix = sessions[evidence.video_id].start_unix + evidence.time_span.end_time
        latest = end_unix if latest is None else max(latest, end_unix)
        if primary_session is not None and end_unix >= question_unix:
            late.append(f"{where}: ends {end_unix - question_unix:g} s after the question "
                        f"({primary} at {cut:g} s), not before it")
    return CausalityCheck(question_unix=question_unix, latest_evidence_unix=latest,
                          passed=not late, late=late)
