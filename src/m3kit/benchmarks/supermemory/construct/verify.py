"""Verifying one QA draft: checks in code, the deterministic causality check, the verifier model.

The code checks (``code_checks``) come first, as the release's validators do: the option roles
(answerable: one correct, one vague, one incorrect; unanswerable: three incorrect), the answer
text equal to the correct choice, distinct non-empty choices none of which is the abstain
option (it is added in code), evidence for an answerable pair, spans that end after they start.
(The skill is checked when the reply is read: ``DraftMeta.skill`` admits the six only.) A draft
failing one goes to the enhancer without a verifier call.

Otherwise the verifier model scores the four ``CRITERIA`` (0..1, each with its reasoning),
given the ledger events the retriever finds for the question and its answer and those its
spans cite (the release's verifier asks a retriever for clips and captions in a three-step
handshake; m3kit gives the retrieved events in one call). A draft passes as the release's:
every score at least ``min_score``, not guessable, no personal identifiers, and here also the
code checks and the causality check, which no score overrides.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.supermemory.construct.causality import check_causality
from m3kit.benchmarks.supermemory.construct.ledger import LedgerRetriever, event_line
from m3kit.benchmarks.supermemory.construct.prompts import verifier_prompt
from m3kit.benchmarks.supermemory.construct.records import (
    CRITERIA,
    CausalityCheck,
    CriterionScore,
    LedgerEvent,
    LedgerSession,
    QADraft,
)
from m3kit.models.backend import BackendRequest, TextBackend, call_json_async
from m3kit.schema.supermemory import is_abstain_text

__all__ = ["Verdict", "VerifierReply", "code_checks", "verify_draft"]

DEFAULT_MIN_SCORE = 0.6


class VerifierReply(BaseModel):
    """The verifier's reply (the release's verifier schema, reasoning first)."""

    model_config = ConfigDict(extra="ignore")

    factual_correctness_reasoning: str = ""
    objective_correctness_reasoning: str = ""
    causal_answerability_reasoning: str = ""
    naturalness_reasoning: str = ""
    guessability_reasoning: str = ""
    factual_correctness_score: float = Field(ge=0, le=1)
    objective_correctness_score: float = Field(ge=0, le=1)
    causal_answerability_score: float = Field(ge=0, le=1)
    naturalness_score: float = Field(ge=0, le=1)
    is_guessable: bool
    contains_pii: bool
    is_salvageable: bool = True
    suggestions: list[str] = Field(default_factory=list)


class Verdict(BaseModel):
    """One round of verification: every check and score, the causality check, what failed
    (``problems``: "verifier: factual_correctness 0.3 < 0.6", "causality: ..."), the
    verifier's suggestions and whether it deems the draft salvageable."""

    scores: list[CriterionScore]
    causality: CausalityCheck
    problems: list[str]
    suggestions: list[str] = Field(default_factory=list)
    is_salvageable: bool = True
    verifier_called: bool = False

    @property
    def passed(self) -> bool:
        return not self.problems


def _check(name: str, failures: list[str], ok: str) -> CriterionScore:
    return CriterionScore(name=name, score=0.0 if failures else 1.0,
                          rationale="; ".join(failures) or ok, passed=not failures)


def code_checks(draft: QADraft) -> list[CriterionScore]:
    """The checks in code (see the module doc), one ``CriterionScore`` each (1 or 0)."""
    answer = draft.answer
    kinds = sorted(c.choice_type for c in answer.answer_choices)
    want = ["correct", "incorrect", "vague"] if answer.is_answerable else ["incorrect"] * 3
    roles = [] if kinds == want else [
        f"choice types are {kinds}, an {'answerable' if answer.is_answerable else 'unanswerable'}"
        f" pair needs {want}"]
    correct = [c.text for c in answer.answer_choices if c.choice_type == "correct"]
    text = [] if not answer.is_answerable or answer.text in correct else [
        f"answer.text {answer.text!r} is not the correct choice's text"]
    texts = [c.text.strip() for c in answer.answer_choices]
    distinct = []
    if any(not t for t in texts) or not draft.question.text.strip():
        distinct.append("an empty question or choice")
    if len({t.lower() for t in texts}) != len(texts):
        distinct.append("two choices are the same")
    if any(is_abstain_text(t) for t in texts):
        distinct.append("a choice is the abstain option, which is added in code")
    evidence = [] if answer.evidence_list or not answer.is_answerable else [
        "an answerable pair without evidence"]
    spans = [(f"question span {n}", s.start_time, s.end_time)
             for n, s in enumerate(draft.question.time_spans)]
    spans += [(f"evidence {n}", e.time_span.start_time, e.time_span.end_time)
              for n, e in enumerate(answer.evidence_list)]
    order = [f"{name} ends before it starts" for name, start, end in spans if end < start]
    if not draft.question.time_spans:
        order.append("no question span")
    return [
        _check("option_roles", roles, "the choice roles fit"),
        _check("answer_text", text, "the answer is the correct choice"),
        _check("distinct_choices", distinct, "three distinct choices"),
        _check("evidence", evidence, "evidence given"),
        _check("span_order", order, "every span starts before it ends"),
    ]


def _causality_score(check: CausalityCheck) -> CriterionScore:
    return CriterionScore(name="causality", score=1.0 if check.passed else 0.0,
                          rationale="; ".join(check.late) or "every evidence span ends before "
                          "the question", passed=check.passed)


def _context(draft: QADraft, retriever: LedgerRetriever, k: int) -> list[LedgerEvent]:
    """The events the verifier reads: the retriever's best for the question and its answer,
    and every event a span of the draft overlaps, in clock order."""
    query = " ".join([draft.question.text, draft.answer.text,
                      *(c.text for c in draft.answer.answer_choices)])
    found = {e.id: e for e in retriever.search(query, k)}
    cited = [(s.video_id, s.start_time, s.end_time) for s in draft.question.time_spans]
    cited += [(e.video_id, e.time_span.start_time, e.time_span.end_time)
              for e in draft.answer.evidence_list]
    for video_id, start, end in cited:
        found.update((e.id, e) for e in retriever.overlapping(video_id, start, end))
    return sorted(found.values(), key=lambda e: (e.start_unix, e.id))


def _spans_on_clock(draft: QADraft, sessions: Mapping[str, LedgerSession],
                    check: CausalityCheck) -> str:
    from datetime import UTC, datetime

    def clock(video_id: str, local: float) -> str:
        session = sessions.get(video_id)
        if session is None:
            return "unknown video"
        return datetime.fromtimestamp(session.start_unix + local, UTC).strftime(
            "%a %Y-%m-%d %H:%M:%S UTC")

    lines = [f"- question span {s.video_id} {s.start_time:g}-{s.end_time:g} s: ends "
             f"{clock(s.video_id, s.end_time)}" for s in draft.question.time_spans]
    lines += [f"- evidence {e.video_id} {e.time_span.start_time:g}-{e.time_span.end_time:g} s: "
              f"ends {clock(e.video_id, e.time_span.end_time)}"
              for e in draft.answer.evidence_list]
    moment = datetime.fromtimestamp(check.question_unix, UTC).strftime("%Y-%m-%d %H:%M:%S")
    return "\n".join([*lines, f"- the question's moment: {moment} UTC"])


def _causal_problems(causality: CausalityCheck) -> list[str]:
    """The causality check's failure as the first problem of a verdict (none when it passed)."""
    if causality.passed:
        return []
    late = any("after the question" in why for why in causality.late)
    what = "evidence after the question" if late else "a span outside the recordings"
    return [f"causality: {what} ({causality.late[0]})"]


async def verify_draft(backend: TextBackend, draft: QADraft, *, item: str,
                       sessions: Mapping[str, LedgerSession], retriever: LedgerRetriever,
                       min_score: float = DEFAULT_MIN_SCORE, context_events: int = 8,
                       retries: int = 2) -> Verdict:
    """One round of verification of ``draft`` (see the module doc). ``MalformedReplyError``
    when the verifier's reply is not its JSON after ``retries`` more tries."""
    checks = code_checks(draft)
    causality = check_causality(draft, sessions)
    causal = _causal_problems(causality)
    failed = [f"code check {c.name}: {c.rationale}" for c in checks if not c.passed]
    if failed:
        return Verdict(scores=[*checks, _causality_score(causality)], causality=causality,
                       problems=[*causal, *failed])
    verdict = "passed" if causality.passed else "FAILED: " + "; ".join(causality.late)
    prompt = verifier_prompt(draft, spans=_spans_on_clock(draft, sessions, causality),
                             context=[event_line(e) for e in _context(draft, retriever,
                                                                      context_events)],
                             causality=verdict)
    reply = await call_json_async(backend, BackendRequest("verify", item, prompt),
                                  VerifierReply, retries=retries)
    scores = []
    problems = []
    for name in CRITERIA:
        score = float(getattr(reply, f"{name}_score"))
        scores.append(CriterionScore(name=name, score=score,
                                     rationale=getattr(reply, f"{name}_reasoning"),
                                     passed=score >= min_score))
        if score < min_score:
            problems.append(f"verifier: {name} {score:g} < {min_score:g}")
    scores.append(CriterionScore(name="not_guessable", score=0.0 if reply.is_guessable else 1.0,
                                 rationale=reply.guessability_reasoning,
                                 passed=not reply.is_guessable))
    scores.append(CriterionScore(name="no_pii", score=0.0 if reply.contains_pii else 1.0,
                                 rationale="" if not reply.contains_pii else
                                 "the verifier found personal identifiers",
                                 passed=not reply.contains_pii))
    if reply.is_guessable:
        problems.append("verifier: guessable without memory")
    if reply.contains_pii:
        problems.append("verifier: contains personal identifiers")
    return Verdict(scores=[*checks, *scores, _causality_score(causality)], causality=causality,
                   problems=[*causal, *problems], suggestions=reply.suggestions,
                   is_salvageable=reply.is_salvageable, verifier_called=True)
