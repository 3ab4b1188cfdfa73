"""Query rewriting: time words resolved against the sessions' order, dates and clock."""

from __future__ import annotations

from datetime import date

import pytest

from m3kit.memory.base import MemoryItem
from m3kit.memory.retrieval.query import (
    DATE_SLACK_DAYS,
    SessionSpan,
    parse_calendar_date,
    rewrite_query,
    session_spans,
)

DAY = 86_400.0
# Five sessions: 1 March, 2 March, 10 March, 20 March, 13 October 2023; clock in seconds
# since the first.
DAYS = [date(2023, 3, 1), date(2023, 3, 2), date(2023, 3, 10), date(2023, 3, 20),
        date(2023, 10, 13)]
SESSIONS = [SessionSpan(session_id=f"D{n + 1}", order=n + 1,
                        start=(d - DAYS[0]).days * DAY, day=d) for n, d in enumerate(DAYS)]


def scope(question: str, now: float | None = None) -> tuple[str, ...] | None:
    rewritten = rewrite_query(question, SESSIONS, now=now)
    assert rewritten.text == question  # the bare question is always searched
    return rewritten.scope.sessions if rewritten.scope else None


@pytest.mark.parametrize(("question", "sessions"), [
    ("What did we cover in the second session?", ("D2",)),
    ("In session 4, which drug came up?", ("D4",)),
    ("What did Alex ask in the last session?", ("D5",)),
    ("And in the previous session?", ("D4",)),
    ("What came up in the 3rd session?", ("D3",)),
    ("What did Alex discuss AFTER 2023-03-06?", ("D3", "D4", "D5")),
    ("What did Alex discuss before 2023-03-10?", ("D1", "D2")),
    ("What painting did Melanie show on October 13, 2023?", ("D5",)),
    ("What did Gina find on 2 March, 2023?", ("D2",)),
    ("What did Maria do on 5 March 2023?", None),  # no session that day
    # a month also names the sessions of the next two weeks, when it may be told
    ("What did Maria start doing in February 2023?", ("D1", "D2", "D3")),
    ("What did Maria start doing in March 2023?", ("D1", "D2", "D3", "D4")),
])
def test_ordinals_and_dates(question: str, sessions: tuple[str, ...]) -> None:
    assert scope(question) == sessions


def test_relative_time_against_the_question_clock() -> None:
    now = SESSIONS[3].start  # asked on 20 March
    assert scope("What did I say yesterday?", now) is None  # no session on 18-19 March
    assert scope("What did I mention last week?", now) == ("D3", "D4")
    assert scope("What did we discuss 10 days ago?", now) == ("D3",)  # window 9-11 days
    assert scope("What did we discuss three weeks ago?", now) == ("D1", "D2")
    # without a time, the question is asked after the last session (13 October)
    assert scope("What happened last month?") == ("D5",)


def test_no_scope_when_nothing_or_everything_is_named() -> None:
    assert scope("Which vein is best for venipuncture in cats?") is None
    assert scope("What happened in the twelfth session?") is None  # there is none
    assert scope("What did we discuss in 2023?") is None  # every session


def test_calendar_dates_as_released() -> None:
    assert parse_calendar_date("2023-03-01") == date(2023, 3, 1)
    assert parse_calendar_date("1:56 pm on 8 May, 2023") == date(2023, 5, 8)
    assert parse_calendar_date("May 8, 2023") == date(2023, 5, 8)
    assert parse_calendar_date("2023-02-30") is None
    assert parse_calendar_date("sometime in spring") is None
    assert DATE_SLACK_DAYS == 14


def test_session_spans_from_items() -> None:
    def item(n: str, session: str, t: float | None, raw: str | None) -> MemoryItem:
        return MemoryItem(id=n, key="k", event_id=n, modality="text", text=n, time=t,
                          metadata={"session_id": session, "session_date": raw})

    spans = session_spans([item("b1", "B", 5.0, "1:56 pm on 8 May, 2023"),
                           item("a1", "A", 1.0, "2023-05-01"), item("b2", "B", 6.0, None),
                           item("c1", "C", None, None)])
    assert [(s.session_id, s.order, s.start, s.day) for s in spans] == [
        ("A", 1, 1.0, date(2023, 5, 1)), ("B", 2, 5.0, date(2023, 5, 8)), ("C", 3, None, None)]


def test_expansions_ride_along() -> None:
    rewritten = rewrite_query("Where does she work?", SESSIONS, expansions=["Nina bakery", " "])
    assert rewritten.texts == ("Where does she work?", "Nina bakery")


@pytest.mark.parametrize(("question", "text"), [
    ("When did Alex first discuss gut stasis? Return in the format YYYY-MM-DD.",
     "When did Alex first discuss gut stasis?"),
    ("Which image shows a gray cat? Return the image file name in the format img_N.",
     "Which image shows a gray cat?"),
    ("Return the date only.", "Return the date only."),  # nothing else: kept whole
    ("Why did the rabbit stop eating?", "Why did the rabbit stop eating?"),
])
def test_answer_format_instructions_are_not_searched(question: str, text: str) -> None:
    assert rewrite_query(question, SESSIONS).text == text


def test_compared_parts_are_queries_of_their_own() -> None:
    rewritten = rewrite_query(
        "Which event came FIRST: discussing cat toys or discussing the neuter procedure?",
        SESSIONS)
    assert rewritten.parts == ("discussing cat toys", "discussing the neuter procedure")
    assert rewritten.texts[1:] == rewritten.parts
    assert rewrite_query("Is it a cat or a dog?", SESSIONS).parts == ()  # one-word parts
    assert rewrite_query("Which was it: cats?", SESSIONS).parts == ()


def test_between_two_dates() -> None:
    assert scope("Between 2023-03-02 and 2023-03-15, how often did we talk?") == ("D2", "D3")
