"""Query rewriting for retrieval: the bare question, plus the part of the conversation its time
words point at.

A question such as "What did Alex discuss AFTER 2023-03-06?", "What did we cover in the second
session?" or "What painting did Melanie show on October 13, 2023?" names *when* as well as
*what*; embeddings and BM25 read the date as a few tokens at best. ``rewrite_query`` resolves
those words against the sessions of the memory key (their order, their dates, and the clock of
the question) into a ``TimeScope``: the sessions the question points at. A memory then ranks
once over everything visible and once inside the scope, and fuses the two (``fusion``), so the
scope lifts its items without hiding a strong match outside it (a time word can be loose:
"in July" may be told in an August session).

Resolved, deterministically (no model):

- session ordinals: "the first / second / ... / tenth session", "session 3", "the last / latest
  / most recent / previous session";
- calendar dates, with ``after``/``since``/``before``/``until`` or on their own: ISO
  ``2023-03-06``, ``6 March 2023``, ``March 6, 2023``, ``March 2023``, ``in 2023``, ``between
  X and Y``; against the sessions' dates (a day names the sessions of that day; a month or a
  year the sessions dated within it or up to ``DATE_SLACK_DAYS`` later, when the conversation
  may report it);
- relative time: "yesterday", "today", "last week / month / year", "N days / weeks / months
  ago", "recently" — against the question's time on the stream's clock.

Optional entity / keyword expansion by a model (``QueryExpander``) adds query texts; the
offline default has none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from m3kit.memory.retrieval.items import MemoryItem

DAY = 86_400.0
# A dated event may be told in a later session ("last week I went camping"): a month or a year
# also names the sessions of the following two weeks.
DATE_SLACK_DAYS = 14

_MONTHS = {m: n for n, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}
_MONTHS.update({m[:3]: n for m, n in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORDINALS = {w: n for n, w in enumerate(
    ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
     "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth"], start=1)}
_NUMBERS = {w: n for n, w in enumerate(
    ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"], start=1)}

_ISO = re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})\b")
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b{_DAY}\s+{_MONTH},?\s+(?P<year>\d{{4}})\b", re.IGNORECASE)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+(?P<year>\d{{4}})\b", re.IGNORECASE)
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(?:of\s+)?(?P<year>\d{{4}})\b", re.IGNORECASE)
_YEAR = re.compile(r"\b(?:in|during|of)\s+(?P<year>(?:19|20)\d{2})\b", re.IGNORECASE)
_DIRECTION = re.compile(r"\b(after|since|before|until|prior to|by)\s*$", re.IGNORECASE)
_BETWEEN = re.compile(r"\bbetween\s+(?P<first>.+?)\s+and\s+(?P<second>.+?)(?:[,?.]|$)",
                      re.IGNORECASE)

_SENTENCE = re.compile(r"(?<=[.?!])\s+")
_INSTRUCTION = re.compile(
    r"(?:please\s+)?(?:return|answer|respond|reply|give|provide|output|format|write|state|use)\b"
    r".*\b(?:format|letter|only|file name|filename|number|word|words|sentence|option|yyyy)",
    re.IGNORECASE)
_COMPARE_CUE = re.compile(r"\b(?:first|earlier|later|sooner|more recently|last),?\s+",
                          re.IGNORECASE)

_ORDINAL_SESSION = re.compile(
    r"\b(?:the\s+)?(?P<word>" + "|".join(_ORDINALS) + r"|last|latest|most recent|final|"
    r"previous|earliest|\d+(?:st|nd|rd|th))\s+(?:chat\s+|conversation\s+)?session\b",
    re.IGNORECASE)
_SESSION_NUMBER = re.compile(r"\bsession\s+(?:#\s*)?(?P<n>\d+)\b", re.IGNORECASE)
_AGO = re.compile(r"\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|"
                  r"few|couple of|a couple of)\s+(?P<unit>day|week|month|year)s?\s+ago\b",
                  re.IGNORECASE)
_LAST_UNIT = re.compile(r"\b(?:last|past|previous)\s+(?P<unit>night|week|weekend|month|year)\b",
                        re.IGNORECASE)
# Relative words as (nearest, farthest) days before the question.
_RELATIVE_WORDS = {"yesterday": (1.0, 2.0), "today": (0.0, 1.0), "tonight": (0.0, 1.0),
                   "recently": (0.0, 14.0), "the other day": (1.0, 7.0),
                   "earlier this week": (0.0, 7.0), "this week": (0.0, 7.0),
                   "this month": (0.0, 31.0)}
_UNIT_DAYS = {"night": 1.0, "day": 1.0, "week": 7.0, "weekend": 7.0, "month": 31.0,
              "year": 366.0}


class SessionSpan(BaseModel):
    """One session of a memory key as the rewriting sees it: its id, its place (1-based, in
    time order), its first item's time on the key's clock and its calendar day if known."""

    model_config = ConfigDict(frozen=True)

    session_id: str
    order: int = Field(ge=1)
    start: float | None = None
    day: date | None = None


class TimeScope(BaseModel):
    """The sessions a question's time words point at, and the words that did it."""

    model_config = ConfigDict(frozen=True)

    sessions: tuple[str, ...]
    reason: str


class RetrievalQuery(BaseModel):
    """What a memory searches with: the question without its answer-format instructions, the
    parts of a question that names two things to compare ("Which came first: X or Y?" -> X,
    Y), extra query texts (a model's entity or keyword expansion; none offline) and the time
    scope, when the question has one."""

    model_config = ConfigDict(frozen=True)

    text: str
    parts: tuple[str, ...] = ()
    expansions: tuple[str, ...] = ()
    scope: TimeScope | None = None

    @property
    def texts(self) -> tuple[str, ...]:
        """The question, then each part, then each expansion."""
        return (self.text, *self.parts, *self.expansions)


@runtime_checkable
class QueryExpander(Protocol):
    """Extra query texts for a question (entities, synonyms, the thing a pronoun stands for)."""

    name: str

    async def expand(self, question: str) -> list[str]: ...


def parse_calendar_date(text: str) -> date | None:
    """A session date as released: ISO (``2023-03-01``, with or without a time) or LoCoMo's
    ``"1:56 pm on 8 May, 2023"`` / ``"May 8, 2023"``; ``None`` when no full date is found."""
    for pattern in (_ISO, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        match = pattern.search(text)
        if match is not None:
            found = _date_of(match)
            if found is not None:
                return found
    return None


def session_spans(items: Sequence[MemoryItem]) -> list[SessionSpan]:
    """The sessions of ``items`` (metadata ``session_id``; ``session_date`` when the stream
    gives it), in order of their first item's time (stream order for undated items)."""
    first: dict[str, tuple[float | None, int, str | None]] = {}
    for n, item in enumerate(items):
        session = item.metadata.get("session_id")
        if session is None or str(session) in first:
            continue
        raw = item.metadata.get("session_date")
        first[str(session)] = (item.time, n, str(raw) if raw else None)
    ordered = sorted(first.items(), key=lambda kv: (
        kv[1][0] is None, kv[1][0] if kv[1][0] is not None else 0.0, kv[1][1]))
    return [SessionSpan(session_id=sid, order=n, start=t,
                        day=parse_calendar_date(raw) if raw else None)
            for n, (sid, (t, _, raw)) in enumerate(ordered, start=1)]


def rewrite_query(question: str, sessions: Sequence[SessionSpan], *, now: float | None = None,
                  expansions: Sequence[str] = ()) -> RetrievalQuery:
    """``question`` without its answer-format instructions (``strip_instructions``), split
    into its compared parts (``compared_parts``), with its time scope resolved against
    ``sessions`` (see the module doc); ``now`` is the question's time on the sessions' clock
    (``None``: after the last session). A scope that names no session, or every session, is
    no scope."""
    text = strip_instructions(question)
    scope = (_ordinal_scope(text, sessions) or _date_scope(text, sessions)
             or _relative_scope(text, sessions, now))
    if scope is not None and (not scope.sessions or len(scope.sessions) == len(sessions)):
        scope = None
    return RetrievalQuery(text=text, parts=tuple(compared_parts(text)),
                          expansions=tuple(e for e in expansions if e.strip()), scope=scope)


def strip_instructions(question: str) -> str:
    """``question`` without the sentences that say how to answer ("Return in the format
    YYYY-MM-DD.", "Answer with the letter only."): their words are in no conversation turn,
    and BM25 and the embedding would match them all the same. A question that is nothing but
    instructions is kept whole."""
    kept = [s for s in _SENTENCE.split(question.strip()) if s and not _INSTRUCTION.match(s)]
    return " ".join(kept).strip() or question


def compared_parts(question: str) -> list[str]:
    """The things a question compares, each a query of its own: "Which event came first:
    discussing X or discussing Y?" -> ["discussing X", "discussing Y"]; "Did A happen before
    or after B?" -> no parts (one thing's time). Each part must hold two words or more."""
    head, colon, tail = question.partition(":")
    clause = tail if colon else head
    if not colon and not _COMPARE_CUE.search(head):
        return []
    pieces = [p.strip(" ?.!,;") for p in re.split(r"\s+or\s+|\s+vs\.?\s+|\s+versus\s+", clause,
                                                  flags=re.IGNORECASE)]
    if len(pieces) < 2:
        return []
    if not colon:
        pieces[0] = _COMPARE_CUE.split(pieces[0])[-1].strip(" ,?")
    if any(len(p.split()) < 2 for p in pieces):
        return []
    return pieces


# -- resolvers ------------------------------------------------------------------------------------


def _ordinal_scope(question: str, sessions: Sequence[SessionSpan]) -> TimeScope | None:
    if not sessions:
        return None
    match = _ORDINAL_SESSION.search(question)
    if match is not None:
        word = match.group("word").lower()
        if word in ("last", "latest", "most recent", "final"):
            chosen = [sessions[-1]]
        elif word == "previous":
            chosen = [sessions[-2]] if len(sessions) > 1 else []
        elif word == "earliest":
            chosen = [sessions[0]]
        else:
            n = _ORDINALS.get(word) or int(re.sub(r"\D", "", word))
            chosen = [s for s in sessions if s.order == n]
        return TimeScope(sessions=tuple(s.session_id for s in chosen), reason=match.group(0))
    match = _SESSION_NUMBER.search(question)
    if match is not None:
        n = int(match.group("n"))
        return TimeScope(sessions=tuple(s.session_id for s in sessions if s.order == n),
                         reason=match.group(0))
    return None


def _date_scope(question: str, sessions: Sequence[SessionSpan]) -> TimeScope | None:
    dated = [s for s in sessions if s.day is not None]
    if not dated:
        return None
    between = _BETWEEN.search(question)
    if between is not None:
        first, second = _named_period(between.group("first")), _named_period(
            between.group("second"))
        if first is not None and second is not None:
            low, high = first[0][0], second[0][1]
            chosen = [s for s in dated if s.day is not None and low <= s.day <= high]
            return TimeScope(sessions=tuple(s.session_id for s in chosen),
                             reason=between.group(0).strip(" ,?."))
    span = _named_period(question)
    if span is None:
        return None
    (start, end), where, words = span
    direction = _DIRECTION.search(question[:where])
    slack = timedelta(days=DATE_SLACK_DAYS)
    if direction is not None and direction.group(1).lower() in ("after", "since"):
        chosen = [s for s in dated if s.day is not None and s.day > end]
        words = f"{direction.group(1)} {words}"
    elif direction is not None:
        chosen = [s for s in dated if s.day is not None and s.day < start]
        words = f"{direction.group(1)} {words}"
    else:
        # A day names its own sessions (LoCoMo's questions date an event by the session that
        # tells it); a month or a year also the sessions just after it.
        after = slack if end > start else timedelta(0)
        chosen = [s for s in dated if s.day is not None and start <= s.day <= end + after]
    return TimeScope(sessions=tuple(s.session_id for s in chosen), reason=words)


def _relative_scope(question: str, sessions: Sequence[SessionSpan], now: float | None
                    ) -> TimeScope | None:
    timed = [s for s in sessions if s.start is not None]
    if not timed:
        return None
    lowered = question.lower()
    window: tuple[float, float] | None = None
    reason = ""
    match = _AGO.search(question)
    if match is not None:
        count = match.group("n").lower()
        n = (float(count) if count.isdigit() else 3.0 if "few" in count
             else 2.0 if "couple" in count else float(_NUMBERS.get(count, 1)))
        unit = _UNIT_DAYS[match.group("unit").lower()]
        window, reason = ((n - 1) * unit, (n + 1) * unit), match.group(0)
    elif (last := _LAST_UNIT.search(question)) is not None:
        unit = _UNIT_DAYS[last.group("unit").lower()]
        window, reason = (0.0, 2 * unit), last.group(0)
    else:
        for words, days in _RELATIVE_WORDS.items():
            if re.search(rf"\b{words}\b", lowered):
                window, reason = days, words
                break
    if window is None:
        return None
    clock = now if now is not None else max(s.start for s in timed if s.start is not None)
    low, high = clock - window[1] * DAY, clock - window[0] * DAY
    chosen = [s for s in timed if s.start is not None and low <= s.start <= high]
    return TimeScope(sessions=tuple(s.session_id for s in chosen), reason=reason)


def _named_period(question: str) -> tuple[tuple[date, date], int, str] | None:
    """The first calendar period ``question`` names: (first day, last day), where it starts,
    its words."""
    for pattern in (_ISO, _DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        match = pattern.search(question)
        if match is not None and (day := _date_of(match)) is not None:
            return (day, day), match.start(), match.group(0)
    match = _MONTH_YEAR.search(question)
    if match is not None:
        year, month = int(match.group("year")), _MONTHS[match.group("month").lower()]
        last = (date(year + (month == 12), month % 12 + 1, 1) - timedelta(days=1))
        return (date(year, month, 1), last), match.start(), match.group(0)
    match = _YEAR.search(question)
    if match is not None:
        year = int(match.group("year"))
        return (date(year, 1, 1), date(year, 12, 31)), match.start("year"), match.group(0)
    return None


def _date_of(match: re.Match[str]) -> date | None:
    month = match.group("month")
    number = int(month) if month.isdigit() else _MONTHS.get(month.lower().rstrip("."))
    try:
        return datetime(int(match.group("year")), number or 0, int(match.group("day"))).date()
    except ValueError:
        return None
