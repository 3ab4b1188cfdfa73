"""The Super Ledger (stage 2's input): a person's stage-1 captions as one table of events on the
person's clock, its text for prompts, and a BM25 retriever over its events for the verifier.

An event is one caption segment: its times local to its recording and on the clock (the
recording's ``start_time`` plus the local time), in clock order. The text (``ledger_text``) is
one compact line per event, ``[P1_D1 12-18 s | Mon 2026-03-02 09:00:12-09:00:18 UTC]`` then
what the segment says; a planner cites the local times, the clock times let it reason about
gaps between days. ``day_ledger`` keeps one day's sessions (a "local" question's context).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from m3kit.benchmarks.supermemory.construct.records import (
    ANNOTATION_DIR,
    CAPTIONS_DIR,
    CAPTIONS_SUFFIX,
    LedgerEvent,
    LedgerSession,
    SessionCaptions,
    SuperLedger,
    person_captions_dir,
)
from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text
from m3kit.memory.retrieval.lexical import LexicalIndex

__all__ = [
    "LedgerRetriever",
    "build_ledger",
    "captioned_persons",
    "day_ledger",
    "event_line",
    "ledger_days",
    "ledger_paths",
    "ledger_text",
    "read_person_captions",
    "write_ledger",
]

def captioned_persons(root: Path) -> list[int]:
    """The persons stage 1 captioned under ``root`` (``annotations/captions/person_<n>/``)."""
    folder = root / CAPTIONS_DIR
    if not folder.is_dir():
        return []
    out = []
    for child in folder.iterdir():
        number = child.name.removeprefix("person_")
        if child.is_dir() and child.name.startswith("person_") and number.isdigit() \
                and any(child.glob(f"*{CAPTIONS_SUFFIX}")):
            out.append(int(number))
    return sorted(out)


def read_person_captions(root: Path, subject: int) -> list[SessionCaptions]:
    """Every ``SessionCaptions`` file of person ``subject``; ``SchemaError`` names a file that
    does not read as one."""
    out = []
    for file in sorted((root / person_captions_dir(subject)).glob(f"*{CAPTIONS_SUFFIX}")):
        try:
            out.append(SessionCaptions.model_validate_json(file.read_bytes()))
        except (OSError, ValueError) as exc:
            raise SchemaError(f"not a stage-1 captions file: {str(exc).splitlines()[0]}",
                              path=file) from None
    return out


def build_ledger(subject: int, captions: Sequence[SessionCaptions]) -> SuperLedger:
    """Person ``subject``'s Super Ledger: its sessions in clock order, every caption segment an
    event placed on the clock, events in clock order (ties by id)."""
    sessions = sorted(
        (LedgerSession(video_id=c.video_id, start_unix=c.start_time, duration=c.duration,
                       has_video=c.video_path is not None) for c in captions),
        key=lambda s: (s.start_unix, s.video_id))
    events = []
    for session in captions:
        for chunk in session.chunks:
            for n, segment in enumerate(chunk.caption.segments):
                span, said = segment.time_span, segment.description
                events.append(LedgerEvent(
                    id=f"{session.video_id}#{chunk.chunk_index}.{n}",
                    video_id=session.video_id, start=span.start_time, end=span.end_time,
                    start_unix=session.start_time + span.start_time,
                    end_unix=session.start_time + span.end_time,
                    summary=chunk.caption.overall_summary, activities=said.activities,
                    environment=said.environment, objects=list(said.objects),
                    people=[f"{p.person}: {p.description}" for p in said.people],
                    audio=[f"{a.speaker or 'unknown'}: {a.transcript}"
                           for a in said.audio_transcript],
                    visible_text=said.visible_text, importance=segment.importance))
    events.sort(key=lambda e: (e.start_unix, e.id))
    return SuperLedger(subject=subject, sessions=sessions, events=events)


def _day(unix: float) -> str:
    return datetime.fromtimestamp(unix, UTC).strftime("%Y-%m-%d")


def ledger_days(ledger: SuperLedger) -> list[str]:
    """The days (UTC dates) the person's sessions start on, in order."""
    return list(dict.fromkeys(_day(s.start_unix) for s in ledger.sessions))


def day_ledger(ledger: SuperLedger, day: str) -> SuperLedger:
    """The ledger of the sessions that start on ``day`` (a ``ledger_days`` date)."""
    videos = {s.video_id for s in ledger.sessions if _day(s.start_unix) == day}
    return SuperLedger(subject=ledger.subject,
                       sessions=[s for s in ledger.sessions if s.video_id in videos],
                       events=[e for e in ledger.events if e.video_id in videos])


def _clock(unix: float, with_day: bool) -> str:
    moment = datetime.fromtimestamp(unix, UTC)
    return moment.strftime("%a %Y-%m-%d %H:%M:%S" if with_day else "%H:%M:%S")


def event_line(event: LedgerEvent) -> str:
    """One event as one line: where it is (local seconds, clock time), then what it says."""
    parts = [f"[{event.video_id} {event.start:g}-{event.end:g} s | "
             f"{_clock(event.start_unix, True)}-{_clock(event.end_unix, False)} UTC]"]
    if event.activities:
        parts.append(event.activities)
    if event.environment:
        parts.append(f"place: {event.environment}")
    if event.objects:
        parts.append(f"objects: {', '.join(event.objects)}")
    if event.people:
        parts.append(f"people: {'; '.join(event.people)}")
    if event.audio:
        parts.append("heard: " + " / ".join(f'"{a}"' for a in event.audio))
    if event.visible_text:
        parts.append(f'text: "{event.visible_text}"')
    return " ".join(parts[:1]) + " " + "; ".join(parts[1:])


def ledger_text(ledger: SuperLedger) -> str:
    """The ledger as prompt text: the sessions (start on the clock, duration), then one line
    per event in clock order."""
    lines = [f"SUPER LEDGER of person {ledger.subject} (times: seconds local to a video_id, "
             "then the clock time, UTC)", "", "Sessions:"]
    for s in ledger.sessions:
        media = "video" if s.has_video else "transcript only"
        lines.append(f"- {s.video_id}: starts {_clock(s.start_unix, True)} UTC, "
                     f"{s.duration:g} s, {media}")
    lines += ["", "Events:"]
    lines += [event_line(e) for e in ledger.events]
    return "\n".join(lines) + "\n"


def _ledger_markdown(ledger: SuperLedger) -> str:
    lines = [f"# Super Ledger, person {ledger.subject}", "",
             "| # | Video ID | Starts (UTC) | Duration (s) | Media |", "|---|---|---|---|---|"]
    for n, s in enumerate(ledger.sessions, start=1):
        media = "video" if s.has_video else "transcript only"
        lines.append(f"| {n} | {s.video_id} | {_clock(s.start_unix, True)} | "
                     f"{s.duration:g} | {media} |")
    video = None
    for event in ledger.events:
        if event.video_id != video:
            video = event.video_id
            lines += ["", f"## {video}", ""]
        lines.append(f"- {event_line(event)}")
    return "\n".join(lines) + "\n"


def ledger_paths(root: Path, subject: int) -> tuple[Path, Path]:
    """``annotations/ledger/person_<n>.json`` and ``.md``."""
    base = root / ANNOTATION_DIR / "ledger" / f"person_{subject}"
    return base.with_suffix(".json"), base.with_suffix(".md")


def write_ledger(root: Path, ledger: SuperLedger) -> None:
    """The ledger as JSON (``SuperLedger``) and as markdown for people, atomically."""
    json_path, md_path = ledger_paths(root, ledger.subject)
    atomic_write_text(json_path, ledger.model_dump_json(indent=1))
    atomic_write_text(md_path, _ledger_markdown(ledger))


def _event_text(event: LedgerEvent) -> str:
    return " ".join([event.activities, event.environment, " ".join(event.objects),
                     " ".join(event.people), " ".join(event.audio), event.visible_text,
                     event.summary])


class LedgerRetriever:
    """BM25 over a ledger's events (m3kit's full-text index, ``LexicalIndex``): the events a
    question and its answer are about, for the verifier's factual check."""

    def __init__(self, ledger: SuperLedger) -> None:
        self._events = {e.id: e for e in ledger.events}
        self._index = LexicalIndex()
        self._index.add([e.id for e in ledger.events], [_event_text(e) for e in ledger.events])

    def search(self, query: str, k: int) -> list[LedgerEvent]:
        """Up to ``k`` events sharing words with ``query``, best first."""
        return [self._events[i] for i, _ in self._index.search(query, k)]

    def overlapping(self, video_id: str, start: float, end: float) -> list[LedgerEvent]:
        """The events of ``video_id`` that overlap ``[start, end]`` (local seconds)."""
        return [e for e in self._events.values()
                if e.video_id == video_id and e.start <= end and e.end >= start]
