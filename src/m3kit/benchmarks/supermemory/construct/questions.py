"""Stage 2 of SuperMemory-VQA's annotation pipeline: QA pairs planned, verified and enhanced
over each person's Super Ledger, the accepted ones written in the released layout.

Per person (``annotations/captions/person_<n>/``): the ledger (``ledger.py``, saved as
``annotations/ledger/person_<n>.json`` / ``.md``); a target count (``QuestionSettings.target``,
else ``per_minute`` of recording, 2 as the release) of pairs, each planned with a skill (the
six in turn), a scope (``global``: the whole ledger; ``local``: one day's, the days in turn;
``global_share`` of them global, all when the person has one day), answerable or not
(``unanswerable_share`` not, 0.4 as the release) and an anchor event (spread over the scope,
so the pairs differ). Each pair: the planner drafts it; it is verified (``verify.py``: code
checks, the causality check, the verifier model); a failing draft the verifier deems
salvageable goes to the enhancer and is verified again, up to ``max_loops`` verifications in
all; then it is accepted or rejected with a reason ("causality: evidence after the question
(...)", "verifier: not salvageable (verifier: factual_correctness 0.3 < 0.6)",
"max_loops_exhausted (...)", "malformed reply: planner: ..."). A reply that stays malformed
rejects its pair; the run goes on.

Every model call goes through the backend (``call_json_async``: JSON validated, retried with
the problem appended); at most ``max_connections`` pairs are worked on at once. A pair's whole
story is kept when it ends (``ResultCache`` under ``annotations/cache``, keyed by the model,
its settings, the planner's prompt and the loop's settings), so a rerun calls the model only
for unfinished pairs and writes the same files.

Outputs: ``data/json/all_qa.json`` (the accepted pairs as ``QARecord``s, ``question_id``
1, 2, ... in person and plan order; the three choices and the abstain option in a seeded
order), ``annotations/qa/person_<n>.json`` (``PersonAnnotations``: every pair, its drafts,
verdicts, outcome), then ``all_qa.json`` read back by the benchmark's loader, its skips
reported.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, Field, TypeAdapter

from m3kit.benchmarks.construction import ConstructionProgress, SilentProgress
from m3kit.benchmarks.supermemory.construct.causality import question_video
from m3kit.benchmarks.supermemory.construct.ledger import (
    LedgerRetriever,
    build_ledger,
    captioned_persons,
    day_ledger,
    event_line,
    ledger_days,
    ledger_text,
    read_person_captions,
    write_ledger,
)
from m3kit.benchmarks.supermemory.construct.prompts import enhancer_prompt, planner_prompt
from m3kit.benchmarks.supermemory.construct.records import (
    ANNOTATION_DIR,
    AnnotatedQA,
    CallCost,
    CausalityCheck,
    CriterionScore,
    LedgerSession,
    PersonAnnotations,
    QADraft,
    SuperLedger,
)
from m3kit.benchmarks.supermemory.construct.verify import (
    DEFAULT_MIN_SCORE,
    Verdict,
    verify_draft,
)
from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text
from m3kit.models.backend import (
    BackendRequest,
    MalformedReplyError,
    TextBackend,
    backend_name,
    call_json_async,
    complete_async,
    gather_or_stop,
    reply_schema,
)
from m3kit.models.call_cache import ResultCache
from m3kit.schema.supermemory import (
    ABSTAIN_TEXT,
    ALL_QA_PATH,
    SKILLS,
    AnswerEvidence,
    AnswerEvidenceItem,
    ChoiceType,
    LocalSpan,
    QAMetadata,
    QARecord,
    QuestionEvidence,
    QuestionSpan,
    Skill,
)

__all__ = [
    "PairPlan",
    "QuestionReport",
    "QuestionSettings",
    "draft_format",
    "annotate_questions",
    "annotate_questions_async",
    "plan_pairs",
    "qa_record",
]

STAGES = ("ledgers", "questions")
# Anchors are drawn from the first part of a scope's events, so a question can come later.
_ANCHOR_SHARE = 0.8


class QuestionSettings(BaseModel):
    """What decides stage 2's pairs (defaults: the release's)."""

    target: int | None = Field(default=None, ge=1, description="pairs per person; None: "
                               "per_minute of the person's recordings")
    per_minute: float = Field(default=2.0, gt=0)
    global_share: float = Field(default=0.5, ge=0, le=1)
    unanswerable_share: float = Field(default=0.4, ge=0, le=1)
    max_loops: int = Field(default=3, ge=1, description="verifications of a pair in all")
    min_score: float = Field(default=DEFAULT_MIN_SCORE, ge=0, le=1)
    retries: int = Field(default=2, ge=0, description="tries of a malformed reply after the "
                         "first")
    context_events: int = Field(default=8, ge=1, description="ledger events the retriever "
                                "gives the verifier")
    max_connections: int = Field(default=8, ge=1, description="pairs worked on at once")
    seed: int = 0  # the choices' order


class PairPlan(BaseModel):
    """What one pair is asked to be."""

    qa_id: str
    subject: int
    skill: Skill
    scope: Literal["local", "global"]
    day: str | None = None  # a local pair's day
    answerable: bool
    anchor: str | None = None  # the ledger event line it is built around


class QuestionReport(BaseModel):
    """What a stage-2 run came to."""

    persons: list[int] = Field(default_factory=list)
    drafted: int = 0
    accepted: int = 0
    accepted_unanswerable: int = 0
    enhanced: int = 0  # pairs rewritten by the enhancer at least once
    rejected: dict[str, int] = Field(default_factory=dict)  # by kind of reason
    rejections: dict[str, str] = Field(default_factory=dict)  # qa_id -> reason
    failures: dict[str, int] = Field(default_factory=dict)  # check/criterion -> failed rounds
    calls: int = 0  # the calls that made the pairs (those of reused pairs included)
    input_tokens: int = 0  # this run's calls' tokens, where the backend reports them
    output_tokens: int = 0
    reused: int = 0  # pairs taken from an earlier run
    all_qa: str = ""
    written: int = 0
    load_skipped_questions: list[str] = Field(default_factory=list)
    load_skips: list[str] = Field(default_factory=list)
    # sessions of a person with questions that the loader left off the person's timeline
    # ("P1_D2 (person 1)"): their events would be hidden from every memory
    unplaced_sessions: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        reasons = ", ".join(f"{n} {kind}" for kind, n in sorted(self.rejected.items())) or "none"
        return (f"{self.drafted} pairs drafted, {self.accepted} accepted "
                f"({self.accepted_unanswerable} unanswerable), "
                f"{sum(self.rejected.values())} rejected ({reasons}); {self.enhanced} enhanced; "
                f"{self.calls} model calls, {self.input_tokens} input / {self.output_tokens} "
                f"output tokens; {self.reused} pairs reused from an earlier run")


# -- planning ------------------------------------------------------------------------------------


def _spread(i: int, share: float, total: int) -> bool:
    """Whether item ``i`` of ``total`` is one of the ``round(share * total)`` spread evenly."""
    n = round(share * total)
    return (i + 1) * n // total > i * n // total


def plan_pairs(ledger: SuperLedger, settings: QuestionSettings) -> list[PairPlan]:
    """The pairs person ``ledger.subject`` gets (see the module doc)."""
    minutes = sum(s.duration for s in ledger.sessions) / 60
    target = settings.target or max(1, int(minutes * settings.per_minute))
    days = ledger_days(ledger)
    share = 1.0 if len(days) <= 1 else settings.global_share
    plans = []
    n_local = 0
    for i in range(target):
        scope: Literal["local", "global"] = "global" if _spread(i, share, target) else "local"
        day = None
        events = ledger.events
        if scope == "local":
            day = days[n_local % len(days)]
            n_local += 1
            events = day_ledger(ledger, day).events
        pool = events[:max(1, int(len(events) * _ANCHOR_SHARE))]
        anchor = event_line(pool[(i * 7) % len(pool)]) if pool else None
        plans.append(PairPlan(
            qa_id=f"p{ledger.subject}_q{i + 1:03d}", subject=ledger.subject,
            skill=cast(Skill, SKILLS[i % len(SKILLS)]), scope=scope, day=day,
            answerable=not _spread(i, settings.unanswerable_share, target), anchor=anchor))
    return plans


# -- the released record -------------------------------------------------------------------------


def qa_record(question_id: int, plan: PairPlan, draft: QADraft,
              sessions: dict[str, LedgerSession], seed: int) -> QARecord:
    """An accepted pair as a record of ``all_qa.json``: its three choices and the abstain
    option in an order seeded by ``seed`` and the pair's id."""
    answer = draft.answer
    options: list[tuple[str, ChoiceType]] = [(c.text, c.choice_type)
                                             for c in answer.answer_choices]
    abstain: ChoiceType = "incorrect" if answer.is_answerable else "correct"
    options.append((ABSTAIN_TEXT, abstain))
    random.Random(f"m3kit-supermemory-choices:{seed}:{plan.qa_id}").shuffle(options)
    gold = next(n for n, (_, kind) in enumerate(options) if kind == "correct")
    primary = question_video(draft, sessions)
    start = sessions[primary].start_unix
    videos = {s.video_id for s in draft.question.time_spans}
    videos |= {e.video_id for e in answer.evidence_list}
    return QARecord(
        question_id=question_id, subject=plan.subject, question=draft.question.text,
        choices=[text for text, _ in options], choice_types=[kind for _, kind in options],
        correct_answer=options[gold][0], correct_option_index=gold,
        is_answerable=answer.is_answerable,
        # ``qa_id`` (a further key, as the release's metadata has) names the pair's story
        metadata=QAMetadata.model_validate({
            "skill": draft.metadata.skill, "primary_video_id": primary,
            "primary_video_start_time": start, "qa_id": plan.qa_id}),
        video_ids=sorted(videos, key=lambda v: (sessions[v].start_unix, v)), start_time=start,
        question_evidence=QuestionEvidence(time_spans=[
            QuestionSpan(start_time=s.start_time, end_time=s.end_time, video_id=s.video_id,
                         video_start_time_unix=sessions[s.video_id].start_unix)
            for s in draft.question.time_spans]),
        answer_evidence=AnswerEvidence(
            evidence_list=[AnswerEvidenceItem(
                video_id=e.video_id, time_span=LocalSpan(start_time=e.time_span.start_time,
                                                         end_time=e.time_span.end_time),
                # every video's start stated: the loader places a session holding only
                # evidence by it, whatever its transcript says
                video_start_time_unix=sessions[e.video_id].start_unix)
                for e in answer.evidence_list],
            text=answer.text),
    )


# -- the loop ------------------------------------------------------------------------------------


class _Outcome(BaseModel):
    """A pair's story as kept for resume, with the model calls it took."""

    pair: AnnotatedQA
    calls: int


class _Counted:
    """A backend that counts the calls made through it (one pair's)."""

    def __init__(self, inner: TextBackend) -> None:
        self.inner = inner
        self.name = backend_name(inner)
        self.calls = 0

    def complete(self, request: BackendRequest) -> str:
        self.calls += 1
        return self.inner.complete(request)

    async def acomplete(self, request: BackendRequest) -> str:
        self.calls += 1
        return await complete_async(self.inner, request)


@dataclass
class _Person:
    """What every pair of one person is worked on with."""

    ledger: SuperLedger
    sessions: dict[str, LedgerSession]
    retriever: LedgerRetriever
    texts: dict[str | None, str]  # ledger text by day (None: the whole ledger)
    # the draft's schema with every ``video_id`` one of the person's recordings: a server that
    # decodes by it cannot name a recording that does not exist (small models copy the
    # format's placeholder "..." or a time there otherwise)
    draft_format: dict[str, Any]


class _Story:
    """A pair's story as it is worked on: its drafts and each round's verdict."""

    def __init__(self, plan: PairPlan) -> None:
        self.plan = plan
        self.drafts: list[QADraft] = []
        self.verdicts: list[list[CriterionScore]] = []
        self.suggestions: list[list[str]] = []
        self.causality: CausalityCheck | None = None

    def heard(self, verdict: Verdict) -> None:
        self.verdicts.append(verdict.scores)
        self.suggestions.append(verdict.suggestions)
        self.causality = verdict.causality

    def ended(self, status: Literal["accepted", "rejected"], reason: str = "") -> AnnotatedQA:
        plan = self.plan
        return AnnotatedQA(
            qa_id=plan.qa_id, subject=plan.subject,
            skill=self.drafts[-1].metadata.skill if self.drafts else plan.skill,
            scope=plan.scope, drafts=self.drafts, verdicts=self.verdicts,
            suggestions=self.suggestions, causality=self.causality, status=status,
            rejection_reason=reason)


async def _work_pair(backend: TextBackend, plan: PairPlan, person: _Person,
                     settings: QuestionSettings) -> AnnotatedQA:
    ledger = person.texts[plan.day if plan.scope == "local" else None]
    story = _Story(plan)
    stage = "planner"
    try:
        draft = await call_json_async(
            backend, BackendRequest("plan", plan.qa_id, planner_prompt(
                ledger, skill=plan.skill, answerable=plan.answerable, scope=plan.scope,
                anchor=plan.anchor)), QADraft, retries=settings.retries,
            reply_format=person.draft_format)
        story.drafts.append(draft)
        for loop in range(1, settings.max_loops + 1):
            stage = "verifier"
            verdict = await verify_draft(
                backend, draft, item=f"{plan.qa_id}.{loop}", sessions=person.sessions,
                retriever=person.retriever, min_score=settings.min_score,
                context_events=settings.context_events, retries=settings.retries)
            story.heard(verdict)
            if verdict.passed:
                return story.ended("accepted")
            last = "; ".join(verdict.problems)
            if not verdict.causality.passed:
                # deterministic and final: no score and no rewrite makes late evidence early
                return story.ended("rejected", verdict.problems[0])
            if verdict.verifier_called and not verdict.is_salvageable:
                return story.ended("rejected", f"verifier: not salvageable ({last})")
            if loop == settings.max_loops:
                return story.ended("rejected", f"max_loops_exhausted ({last})")
            stage = "enhancer"
            draft = await call_json_async(
                backend, BackendRequest("enhance", f"{plan.qa_id}.{loop}", enhancer_prompt(
                    draft, problems=verdict.problems, suggestions=verdict.suggestions,
                    ledger=ledger)), QADraft, retries=settings.retries,
                reply_format=person.draft_format)
            story.drafts.append(draft)
    except MalformedReplyError as exc:
        return story.ended("rejected", f"malformed reply: {stage}: {exc.reason}")
    raise AssertionError("unreachable: the last loop accepts or rejects")


def _kind(reason: str) -> str:
    """The kind of a rejection reason, as the report counts it."""
    head = reason.split(":", 1)[0].split(" (", 1)[0]
    return {"malformed reply": "malformed"}.get(head, head)


class _Run:
    def __init__(self, root: Path, backend: TextBackend, settings: QuestionSettings,
                 progress: ConstructionProgress) -> None:
        self.root, self.backend, self.settings, self.progress = root, backend, settings, progress
        self.cache = ResultCache(root / ANNOTATION_DIR / "cache", backend_name(backend))
        settings_of = getattr(backend, "settings", None)
        self.backend_settings = settings_of() if callable(settings_of) else None
        self.limit = asyncio.Semaphore(settings.max_connections)
        self.reused = 0

    async def pair(self, plan: PairPlan, person: _Person) -> _Outcome:
        s = self.settings
        ledger = person.texts[plan.day if plan.scope == "local" else None]
        prompt = planner_prompt(ledger, skill=plan.skill, answerable=plan.answerable,
                                scope=plan.scope, anchor=plan.anchor)
        key = self.cache.key(self.backend_settings, prompt, ledger_text(person.ledger),
                             s.max_loops, s.min_score, s.retries, s.context_events,
                             person.draft_format)
        cached = self.cache.get("qa", plan.qa_id, key, _Outcome)
        if cached is not None:
            self.reused += 1
            self.progress.advance("questions", reused=True)
            return cached
        async with self.limit:
            counted = _Counted(self.backend)
            pair = await _work_pair(counted, plan, person, s)
        outcome = _Outcome(pair=pair, calls=counted.calls)
        self.cache.put("qa", plan.qa_id, key, outcome)
        self.progress.advance("questions")
        if pair.status == "rejected":
            self.progress.message(f"{plan.qa_id} rejected: {pair.rejection_reason}")
        return outcome


def _person(root: Path, subject: int) -> _Person:
    captions = read_person_captions(root, subject)
    ledger = build_ledger(subject, captions)
    write_ledger(root, ledger)
    texts: dict[str | None, str] = {None: ledger_text(ledger)}
    for day in ledger_days(ledger):
        texts[day] = ledger_text(day_ledger(ledger, day))
    return _Person(ledger=ledger, sessions={s.video_id: s for s in ledger.sessions},
                   retriever=LedgerRetriever(ledger), texts=texts,
                   draft_format=draft_format([s.video_id for s in ledger.sessions]))


def draft_format(video_ids: Sequence[str]) -> dict[str, Any]:
    """A QA draft's reply schema with each ``video_id`` one of ``video_ids``."""
    def narrowed(node: Any) -> Any:
        if isinstance(node, dict):
            node = {k: narrowed(v) for k, v in node.items()}
            properties = node.get("properties")
            if isinstance(properties, dict) and "video_id" in properties:
                properties["video_id"] = {"type": "string", "enum": list(video_ids)}
            return node
        if isinstance(node, list):
            return [narrowed(v) for v in node]
        return node

    schema: dict[str, Any] = narrowed(reply_schema(TypeAdapter(QADraft)))
    return schema


def _tokens(backend: TextBackend) -> tuple[int, int]:
    count = getattr(backend, "call_count", None)
    return (getattr(count, "input_tokens", 0), getattr(count, "output_tokens", 0))


async def annotate_questions_async(root: str | Path, backend: TextBackend, *,
                                   settings: QuestionSettings | None = None,
                                   progress: ConstructionProgress | None = None) -> QuestionReport:
    """``annotate_questions`` on the running event loop."""
    from m3kit.benchmarks.supermemory.load import load_supermemory

    root = Path(root)
    settings = settings or QuestionSettings()
    progress = progress or SilentProgress()
    subjects = captioned_persons(root)
    if not subjects:
        raise SchemaError("no stage-1 captions (annotations/captions/person_<n>/"
                          "*_caption_narrations.json): run `m3kit supermemory annotate "
                          "captions` first", path=root)
    run = _Run(root, backend, settings, progress)
    report = QuestionReport(persons=subjects)
    progress.stage("ledgers", len(subjects))
    people = {}
    for subject in subjects:
        people[subject] = _person(root, subject)
        progress.advance("ledgers")
    plans = {s: plan_pairs(people[s].ledger, settings) for s in subjects}
    progress.stage("questions", sum(len(p) for p in plans.values()))
    records: list[QARecord] = []
    failures: Counter[str] = Counter()
    rejected: Counter[str] = Counter()
    for subject in subjects:
        person = people[subject]
        tokens_before, began = _tokens(backend), time.monotonic()
        outcomes = await gather_or_stop(*(run.pair(p, person) for p in plans[subject]))
        tokens_after, seconds = _tokens(backend), time.monotonic() - began
        pairs = []
        calls = 0
        for plan, outcome in zip(plans[subject], outcomes, strict=True):
            pair = outcome.pair
            calls += outcome.calls
            report.drafted += bool(pair.drafts)
            report.enhanced += len(pair.drafts) > 1
            for round_scores in pair.verdicts:
                failures.update(c.name for c in round_scores if not c.passed)
            if pair.status == "accepted":
                record = qa_record(len(records) + 1, plan, pair.drafts[-1], person.sessions,
                                   settings.seed)
                records.append(record)
                pair = pair.model_copy(update={"question_id": record.question_id})
                report.accepted_unanswerable += not record.is_answerable
            else:
                rejected[_kind(pair.rejection_reason)] += 1
                report.rejections[pair.qa_id] = pair.rejection_reason
            pairs.append(pair)
        # calls: those that made the person's pairs; tokens: this run's (a reused pair's are
        # not kept: the backend counts tokens per run, not per pair)
        cost = CallCost(calls=calls, input_tokens=tokens_after[0] - tokens_before[0],
                        output_tokens=tokens_after[1] - tokens_before[1], seconds=seconds)
        report.calls += calls
        report.input_tokens += cost.input_tokens
        report.output_tokens += cost.output_tokens
        atomic_write_text(root / ANNOTATION_DIR / "qa" / f"person_{subject}.json",
                          PersonAnnotations(subject=subject, model=backend_name(backend),
                                            pairs=pairs, cost=cost).model_dump_json(indent=1))
    report.accepted = len(records)
    report.rejected = dict(rejected)
    report.failures = dict(failures)
    report.reused = run.reused
    qa_file = root / ALL_QA_PATH
    atomic_write_text(qa_file, "[\n" + ",\n".join(
        r.model_dump_json(exclude_none=True) for r in records) + "\n]\n")
    report.all_qa = str(qa_file)
    report.written = len(records)
    loaded = load_supermemory(root)
    report.load_skipped_questions = list(loaded.skipped_question_ids)
    report.load_skips = [str(skip) for skip in loaded.skipped]
    asked = {r.subject for r in records}
    for subject in sorted(asked):
        placed = {t.video_id.lower() for t in loaded.sessions.get(subject, [])}
        report.unplaced_sessions += [
            f"{s.video_id} (person {subject})" for s in people[subject].ledger.sessions
            if s.video_id.lower() not in placed]
    return report


def annotate_questions(root: str | Path, backend: TextBackend, *,
                       settings: QuestionSettings | None = None,
                       progress: ConstructionProgress | None = None) -> QuestionReport:
    """Stage 2 over every captioned person of ``root`` (see the module doc)."""
    return asyncio.run(annotate_questions_async(root, backend, settings=settings,
                                                progress=progress))
