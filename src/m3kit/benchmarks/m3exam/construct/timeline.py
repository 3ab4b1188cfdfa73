"""Timeline construction: core line, distractor events, merge by date, self-check and repair
(M3Exam §2.2 "Timeline Construction", A.4, Appendix E)."""

from __future__ import annotations

from datetime import date
from typing import Any

from m3kit.benchmarks.m3exam.construct import prompts
from m3kit.benchmarks.m3exam.construct.records import (
    AuditReport,
    EventDraft,
    PersonaSpec,
    QCEdit,
    TimelineEvent,
)
from m3kit.models.backend import BackendRequest, TextBackend, call_json

__all__ = [
    "audit_timeline",
    "generate_timeline",
    "interleave_by_date",
    "released_timeline",
    "timeline_from_released",
]


def _check_core(n: int, start: date):
    def check(events: list[EventDraft]) -> None:
        if len(events) != n:
            raise ValueError(f"expected {n} events, got {len(events)}")
        if events[0].date < start:
            raise ValueError(f"event 1 is dated {events[0].date}, before {start}")
        for i in range(1, len(events)):
            if events[i].date <= events[i - 1].date:
                raise ValueError(
                    f"event {i + 1} ({events[i].date}) is not after event {i} "
                    f"({events[i - 1].date}): dates must strictly increase"
                )
    return check


def _check_distractors(n: int, first: date, last: date):
    def check(events: list[EventDraft]) -> None:
        if len(events) != n:
            raise ValueError(f"expected {n} events, got {len(events)}")
        for i, event in enumerate(events, 1):
            if not first <= event.date <= last:
                raise ValueError(f"event {i} ({event.date}) is outside {first}..{last}")
    return check


def interleave_by_date(core: list[EventDraft],
                       distractors: list[EventDraft]) -> list[TimelineEvent]:
    """Interleave by date (a core event goes before a distractor of the same day) and
    renumber from 1."""
    tagged = [(e.date, 0, i, e) for i, e in enumerate(core)]
    tagged += [(e.date, 1, i, e) for i, e in enumerate(distractors)]
    tagged.sort(key=lambda t: (t[0], t[1], t[2]))
    return [
        TimelineEvent(index=n, description=e.description, query=e.query, date=e.date,
                      keyword=e.keyword, kind="core" if rank == 0 else "distractor")
        for n, (_, rank, _, e) in enumerate(tagged, 1)
    ]


def _event_line(event: TimelineEvent) -> str:
    return (f"[{event.index}] {event.date} ({event.kind}) {event.description} | "
            f"query: {event.query} | keyword: {event.keyword}")


def _deterministic_flags(events: list[TimelineEvent]) -> list[tuple[int, str, str]]:
    # Rules that need no model: a repeated event text is a contradiction an LLM audit may miss.
    flags = []
    seen: dict[str, int] = {}
    for event in events:
        key = " ".join(event.description.lower().split())
        if key in seen:
            flags.append((event.index, "contradiction",
                          f"repeats event {seen[key]} word for word"))
        seen.setdefault(key, event.index)
    return flags


def audit_timeline(
    spec: PersonaSpec, events: list[TimelineEvent], backend: TextBackend, *, retries: int = 2
) -> tuple[list[TimelineEvent], list[QCEdit]]:
    """One self-check round over the merged timeline; flagged events are repaired one by one
    (only those), each repair kept between its neighbours' dates. Returns the audited timeline
    and the documented edits."""
    known = {str(e.index) for e in events}

    def check(report: AuditReport) -> None:
        for flag in report.flags:
            if flag.target not in known:
                raise ValueError(f"flag names event {flag.target!r}, which does not exist")

    report = call_json(
        backend,
        BackendRequest("timeline.self_check", spec.name, prompts.TIMELINE_SELF_CHECK.format(
            persona=spec.persona, core_event=spec.core_event,
            timeline="\n".join(_event_line(e) for e in events))),
        AuditReport, retries=retries, check=check,
    )
    flagged: dict[int, tuple[str, str]] = {}
    for index, category, problem in _deterministic_flags(events):
        flagged.setdefault(index, (category, problem))
    for flag in report.flags:
        flagged.setdefault(int(flag.target), (flag.category, flag.problem))

    events = list(events)
    edits: list[QCEdit] = []
    for index in sorted(flagged):
        category, problem = flagged[index]
        pos = index - 1
        low = events[pos - 1].date if pos > 0 else spec.start_date
        high = events[pos + 1].date if pos + 1 < len(events) else date.max
        neighbours = [events[j] for j in (pos - 1, pos + 1) if 0 <= j < len(events)]

        def in_bounds(draft: EventDraft, low: date = low, high: date = high) -> None:
            if not low <= draft.date <= high:
                raise ValueError(f"date {draft.date} leaves the range {low}..{high}")

        draft = call_json(
            backend,
            BackendRequest("timeline.repair", str(index), prompts.TIMELINE_REPAIR.format(
                index=index, date_low=low, date_high=high if high != date.max else "open",
                category=category, problem=problem, persona=spec.persona,
                core_event=spec.core_event, event=_event_line(events[pos]),
                neighbours="\n".join(_event_line(e) for e in neighbours) or "(none)",
                event_json=prompts.EVENT_JSON)),
            EventDraft, retries=retries, check=in_bounds,
        )
        before = events[pos]
        events[pos] = TimelineEvent(index=index, description=draft.description,
                                    query=draft.query, date=draft.date, keyword=draft.keyword,
                                    kind=before.kind)
        edits.append(QCEdit(stage="timeline.self_check", target=str(index), category=category,
                            problem=problem, before=_event_line(before),
                            after=_event_line(events[pos])))
    return events, edits


def generate_timeline(
    spec: PersonaSpec, backend: TextBackend, *, retries: int = 2
) -> tuple[list[TimelineEvent], list[QCEdit]]:
    """Core line → distractors → merge → self-check with repair."""
    core = call_json(
        backend,
        BackendRequest("timeline.core", spec.name, prompts.TIMELINE_CORE.format(
            persona=spec.persona, core_event=spec.core_event, n=spec.n_core_events,
            start_date=spec.start_date, event_json=prompts.EVENT_JSON)),
        list[EventDraft], retries=retries,
        check=_check_core(spec.n_core_events, spec.start_date),
    )
    distractors: list[EventDraft] = []
    if spec.n_distractor_events:
        distractors = call_json(
            backend,
            BackendRequest("timeline.distractors", spec.name, prompts.TIMELINE_DISTRACTORS.format(
                persona=spec.persona, core_event=spec.core_event, n=spec.n_distractor_events,
                first_date=core[0].date, last_date=core[-1].date,
                event_json=prompts.EVENT_JSON)),
            list[EventDraft], retries=retries,
            check=_check_distractors(spec.n_distractor_events, core[0].date, core[-1].date),
        )
    return audit_timeline(spec, interleave_by_date(core, distractors), backend, retries=retries)


def released_timeline(spec: PersonaSpec, events: list[TimelineEvent]) -> list[dict[str, object]]:
    """The ``timeline_<name>.json`` list: the persona record (index 0) then the events."""
    head = {"Event_Index": 0, "Event_Type": "Persona", "Event_Description": spec.persona,
            "core_event": spec.core_event, "Event_Time": spec.start_date.isoformat()}
    return [head, *(e.released() for e in events)]


def timeline_from_released(records: list[dict[str, Any]]) -> list[TimelineEvent]:
    """Read back a written timeline (resume): its records as parsed JSON."""
    return [
        TimelineEvent(index=int(r["Event_Index"]), description=str(r["Event_Description"]),
                      query=str(r["Query_Description"]),
                      date=date.fromisoformat(str(r["Event_Time"])), keyword=str(r["Keyword"]),
                      kind="distractor" if r.get("Event_Type") == "Distractor" else "core")
        for r in records if r.get("Event_Type") != "Persona"
    ]

