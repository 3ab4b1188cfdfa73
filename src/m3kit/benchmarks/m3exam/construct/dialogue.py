"""Dialogue synthesis by a sliding event window, and its two-stage audit with repair
(M3Exam §2.2 "Multi-Turn Conversation Synthesis", A.4, Appendix E).

Round ``r`` sees a two-event window: the current event drives the user's query over its
freshly attached images, the previous one lets the user simulator follow up; every exchange is
condensed into a one-sentence summary appended to the running memory that conditions the next
round. An event whose evidence is a document attaches the document instead (its page text,
bounded, in the prompts). Sessions are planned before any text is generated (one date per
session, at most ``max_rounds_per_session`` rounds), so round ids are known up front and a
killed run resumes at the first round it had not finished.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from pydantic import BaseModel, Field

from m3kit.benchmarks.m3exam.construct import prompts
from m3kit.benchmarks.m3exam.construct.documents import (
    MAX_DOCUMENT_CHARS,
    NumberedDocument,
    document_text,
    render_pages,
)
from m3kit.benchmarks.m3exam.construct.errors import SynthesisError
from m3kit.benchmarks.m3exam.construct.images import NumberedImage
from m3kit.benchmarks.m3exam.construct.records import (
    AuditReport,
    PersonaSpec,
    QCEdit,
    RoundRecord,
    SessionRecord,
    TimelineEvent,
)
from m3kit.models.backend import BackendRequest, TextBackend, call_json, call_text

__all__ = [
    "DialogueConfig",
    "RoundPlan",
    "audit_dialogue",
    "generate_round",
    "plan_rounds",
    "to_sessions",
]


@dataclass(frozen=True)
class DialogueConfig:
    rounds_per_event: int = 2
    max_rounds_per_session: int = 10
    memory_window: int = 12  # summaries the simulator sees: the recent part of the memory
    audit_chunk: int = 6
    retries: int = 2


@dataclass(frozen=True)
class RoundPlan:
    round_id: str
    session_id: str
    date: date
    event_index: int
    step: int  # 0: the round that opens the event; >0: follow-ups on it


class _UserTurn(BaseModel):
    user: str = Field(min_length=1)
    is_followup: bool = False


class _Summary(BaseModel):
    summary: str = Field(min_length=1)


class _Repair(BaseModel):
    user: str = Field(min_length=1)
    assistant: str = Field(min_length=1)


def plan_rounds(events: list[TimelineEvent], config: DialogueConfig) -> list[RoundPlan]:
    """Partition the round stream into sessions: a new session on a new date or when the
    current one is full."""
    plans: list[RoundPlan] = []
    session, in_session, session_date = 0, 0, None
    for event in events:
        for step in range(config.rounds_per_event):
            if event.date != session_date or in_session >= config.max_rounds_per_session:
                session, in_session, session_date = session + 1, 0, event.date
            in_session += 1
            plans.append(RoundPlan(f"D{session}:{in_session}", f"D{session}", event.date,
                                   event.index, step))
    return plans


def _attachments(images: list[NumberedImage],
                 documents: list[NumberedDocument] | None = None) -> str:
    names = [f"img_{im.id} ({im.description})" for im in images]
    names += [f"document {d.label()}" for d in documents or []]
    return "; ".join(names) or "(no files)"


def generate_round(
    spec: PersonaSpec,
    plan: RoundPlan,
    events: dict[int, TimelineEvent],
    images: dict[int, list[NumberedImage]],
    done: list[RoundRecord],
    backend: TextBackend,
    images_dir: str,
    config: DialogueConfig,
    documents: dict[int, list[NumberedDocument]] | None = None,
    pdfs_dir: Path | None = None,
    pages_dir: Path | None = None,
) -> RoundRecord:
    """One round: user simulator → assistant → round summary.

    The round that opens an event attaches its images, or its documents: their text layer
    (bounded) goes into both prompts and, when ``pages_dir`` is given, their rendered pages go
    to the backend as images (Appendix E: the user sees freshly rendered pages)."""
    event = events[plan.event_index]
    previous = events.get(plan.event_index - 1)
    attached = images.get(event.index, []) if plan.step == 0 else []
    docs = (documents or {}).get(event.index, []) if plan.step == 0 else []
    doc_block = ""
    page_images: tuple[Path, ...] = ()
    if docs:
        if pdfs_dir is None:
            raise SynthesisError("documents are assigned but no pdfs folder was given",
                                 record=plan.round_id, field="dialogue.user")
        budget = MAX_DOCUMENT_CHARS // len(docs)  # several documents share one bound
        doc_block = "".join(
            prompts.DOCUMENT_PAGES.format(
                file=d.file, text=document_text(pdfs_dir / d.file, d.pages, budget))
            for d in docs)
        if pages_dir is not None:
            page_images = tuple(p for d in docs
                                for p in render_pages(pdfs_dir / d.file, d.pages, pages_dir))
    memory = [f"[{r.round}] {r.summary}" for r in done[-config.memory_window:]]
    if not done:
        mode = prompts.USER_OPENING
    elif plan.step == 0:
        mode = prompts.USER_NEXT
    else:
        mode = prompts.USER_FOLLOWUP.format(last_reply=done[-1].assistant[:600])
    if docs:
        mode = f"{mode}\n{prompts.USER_DOCUMENT}"
    paths = tuple(Path(images_dir) / im.file for im in attached) + page_images
    turn = call_json(
        backend,
        BackendRequest("dialogue.user", plan.round_id, prompts.USER_SIMULATOR.format(
            name=spec.name.split("_")[0], persona=spec.persona,
            memory="\n".join(memory) or "(nothing yet)",
            previous_event=previous.description if previous else "(none)",
            date=event.date, event=event.description, query=event.query,
            attachments=_attachments(attached, docs), documents=doc_block, mode=mode), paths),
        _UserTurn, retries=config.retries,
    )
    # A follow-up needs something to follow: the first round never is one; a later step of
    # the same event always is, and follows the round just before it.
    is_followup = bool(done) and (plan.step > 0 or turn.is_followup)
    followup_of = done[-1].round if is_followup else None
    assistant = call_text(
        backend,
        BackendRequest("dialogue.assistant", plan.round_id, prompts.ASSISTANT.format(
            memory="\n".join(memory) or "(nothing yet)",
            attachments=_attachments(attached, docs),
            documents=f"{doc_block}\n{prompts.ASSISTANT_DOCUMENT}" if docs else "",
            user=turn.user), paths),
        retries=config.retries,
    )
    summary = call_json(
        backend,
        BackendRequest("dialogue.summary", plan.round_id, prompts.ROUND_SUMMARY.format(
            user=turn.user, assistant=assistant)),
        _Summary, retries=config.retries,
    ).summary
    return RoundRecord(
        round=plan.round_id, user=turn.user, assistant=assistant,
        img_file=[im.file for im in attached], img_id=[im.id for im in attached],
        img_description=[im.description for im in attached],
        pdf_file=[entry for d in docs for entry in d.entries()], is_followup=is_followup,
        followup_of=followup_of, event_index=event.index, summary=summary,
    )


def _round_text(r: RoundRecord) -> str:
    files = f" [files: {', '.join(r.img_file + r.pdf_file)}]" if r.img_file or r.pdf_file else ""
    return f"[{r.round}] User: {r.user}{files}\nAssistant: {r.assistant}"


def _deterministic_flags(rounds: list[RoundRecord]) -> list[tuple[str, str, str]]:
    # What needs no model: a user turn repeated word for word, or an assistant that only
    # echoes the user. Both are generation failures an LLM audit can overlook.
    flags = []
    seen: dict[str, str] = {}
    for r in rounds:
        key = " ".join(r.user.lower().split())
        if key in seen:
            flags.append((r.round, "contradiction", f"repeats the user turn of {seen[key]}"))
        seen.setdefault(key, r.round)
        if " ".join(r.assistant.lower().split()) == key:
            flags.append((r.round, "hallucination", "the assistant only echoes the user"))
    return flags


def audit_dialogue(
    spec: PersonaSpec,
    rounds: list[RoundRecord],
    backend: TextBackend,
    config: DialogueConfig,
    on_step: Callable[[], None] | None = None,
) -> tuple[list[RoundRecord], list[QCEdit]]:
    """Per-chunk audits over slices of ``audit_chunk`` rounds, one cross-chunk audit over the
    round summaries, then a repair pass over every flagged round conditioned on its
    neighbours. Flags that name rounds outside what was shown are malformed (retried)."""
    flagged: dict[str, tuple[str, str]] = {}
    for round_id, category, problem in _deterministic_flags(rounds):
        flagged.setdefault(round_id, (category, problem))
    for start in range(0, len(rounds), config.audit_chunk):
        chunk = rounds[start:start + config.audit_chunk]
        ids = {r.round for r in chunk}
        report = call_json(
            backend,
            BackendRequest("dialogue.chunk_audit", f"{chunk[0].round}-{chunk[-1].round}",
                           prompts.DIALOGUE_CHUNK_AUDIT.format(
                               persona=spec.persona, core_event=spec.core_event,
                               rounds="\n\n".join(_round_text(r) for r in chunk))),
            AuditReport, retries=config.retries, check=_flags_within(ids),
        )
        for flag in report.flags:
            flagged.setdefault(flag.target, (flag.category, flag.problem))
        if on_step:
            on_step()
    report = call_json(
        backend,
        BackendRequest("dialogue.cross_audit", spec.name, prompts.DIALOGUE_CROSS_AUDIT.format(
            persona=spec.persona,
            overview="\n".join(f"[{r.round}] {r.summary}" for r in rounds))),
        AuditReport, retries=config.retries, check=_flags_within({r.round for r in rounds}),
    )
    for flag in report.flags:
        flagged.setdefault(flag.target, (flag.category, flag.problem))
    if on_step:
        on_step()

    rounds = list(rounds)
    position = {r.round: i for i, r in enumerate(rounds)}
    edits = []
    for round_id in sorted(flagged, key=position.__getitem__):
        category, problem = flagged[round_id]
        i = position[round_id]
        before = rounds[i]
        repair = call_json(
            backend,
            BackendRequest("dialogue.repair", round_id, prompts.DIALOGUE_REPAIR.format(
                round_id=round_id, category=category, problem=problem, persona=spec.persona,
                previous=_round_text(rounds[i - 1]) if i > 0 else "(none)",
                user=before.user, assistant=before.assistant,
                next=_round_text(rounds[i + 1]) if i + 1 < len(rounds) else "(none)")),
            _Repair, retries=config.retries,
        )
        summary = call_json(
            backend,
            BackendRequest("dialogue.summary", f"{round_id}.repaired",
                           prompts.ROUND_SUMMARY.format(user=repair.user,
                                                        assistant=repair.assistant)),
            _Summary, retries=config.retries,
        ).summary
        rounds[i] = before.model_copy(update={"user": repair.user,
                                              "assistant": repair.assistant,
                                              "summary": summary})
        edits.append(QCEdit(stage="dialogue.audit", target=round_id, category=category,
                            problem=problem, before=_round_text(before),
                            after=_round_text(rounds[i])))
    return rounds, edits


def _flags_within(ids: set[str]):
    def check(report: AuditReport) -> None:
        for flag in report.flags:
            if flag.target not in ids:
                raise ValueError(f"flag names round {flag.target!r}, which was not shown")
    return check


def to_sessions(plans: list[RoundPlan], rounds: list[RoundRecord]) -> list[SessionRecord]:
    """Group rounds into their planned sessions, in order."""
    by_id = {r.round: r for r in rounds}
    sessions: dict[str, SessionRecord] = {}
    for plan in plans:
        if plan.session_id not in sessions:
            sessions[plan.session_id] = SessionRecord(session_id=plan.session_id,
                                                      date=plan.date, dialogues=[])
        sessions[plan.session_id].dialogues.append(by_id[plan.round_id])
    return list(sessions.values())
