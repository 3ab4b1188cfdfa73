"""Question drafts of the six skills (seed 003 appendix A.1), written from a person's facts.

A draft is a question before its options are placed: the question, the correct / vague /
wrong option texts (seed 003 appendix D.2) or, unanswerable, three wrong ones, where it is asked
(a scene of a session: the question time is that scene's end less ``ASK_MARGIN``), the evidence
and, for a fact recorded only *after* the question time, that fact and the option it would
lead a leaking memory to (``Leak``). Evidence always ends before the question starts
(appendix D.2); a post-cut fact always starts after the question time.

``tag`` says what kind of draft it is: ``same_session`` / ``later_session`` (evidence in the
question's session or an earlier one), ``moved_after_cut`` (an object moved after the question
time: the correct answer is where it was then, the later place is the wrong option),
``post_cut_same_session`` / ``post_cut_later_session`` (the fact comes after the question:
unanswerable, the leaked answer among the wrong options), ``never_seen``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from m3kit.schema.supermemory import Skill
from m3kit.synth.ego.vocab import CHORES, ERRANDS, INTENTS, NOTES, PLACES, VENUES, Place
from m3kit.synth.ego.world import (
    Fact,
    PersonWorld,
    Span,
    clock_minutes,
    clock_text,
    day_phrase,
)

__all__ = ["ASK_MARGIN", "AskPoint", "Draft", "Leak", "person_drafts"]

# The question time is this many seconds before the end of the scene it is asked in, so the
# next scene's first frame (and any fact in it) is strictly after the cut.
ASK_MARGIN = 1.0


@dataclass(frozen=True)
class AskPoint:
    """Where a question is asked: ``[start, end]`` local to ``video_id``; ``end`` is the
    question time."""

    video_id: str
    session: int  # 0-based session index of the person
    scene: int
    start: float
    end: float
    start_unix: float

    @property
    def cut_unix(self) -> float:
        return self.start_unix + self.end


@dataclass(frozen=True)
class Leak:
    """A fact recorded after the question time, and the option it supports."""

    video_id: str
    span: Span
    start_unix: float
    option: str


@dataclass
class Draft:
    skill: Skill
    tag: str
    question: str
    ask: AskPoint
    correct: str | None  # None: unanswerable
    vague: str | None
    wrong: list[str]  # one when answerable, three when not
    evidence: list[tuple[str, Span]] = field(default_factory=list)
    evidence_text: str = ""
    leak: Leak | None = None

    @property
    def answerable(self) -> bool:
        return self.correct is not None


def person_drafts(world: PersonWorld, rng: random.Random) -> list[Draft]:
    """Every draft of one person (more than a suite keeps; the suite selects)."""
    writer = _Writer(world, rng)
    drafts: list[Draft] = []
    for fact in world.facts:
        drafts += writer.drafts(fact)
    drafts += writer.never_seen()
    return drafts


class _Writer:
    def __init__(self, world: PersonWorld, rng: random.Random) -> None:
        self.world = world
        self.rng = rng
        self.asks = [
            AskPoint(s.video_id, n, sc.index, sc.start, sc.end - ASK_MARGIN, s.start_unix)
            for n, s in enumerate(world.sessions) for sc in s.scenes
        ]

    # -- ask points -----------------------------------------------------------------------------

    def _abs(self, video_id: str, local: float) -> float:
        return self.world.absolute(video_id, local)

    def _after(self, fact: Fact, until: float | None = None) -> list[tuple[str, AskPoint]]:
        """One ask point in the fact's session and one in a later session, each starting
        after the fact ends (and ending before ``until``, unix, when given)."""
        end = self._abs(fact.video_id, fact.end)
        ok = [a for a in self.asks if a.start_unix + a.start >= end
              and (until is None or a.cut_unix < until)]
        return self._one_each(ok, fact.video_id, ("same_session", "later_session"))

    def _before(self, fact: Fact, *, same_session_only: bool = False
                ) -> list[tuple[str, AskPoint]]:
        start = self._abs(fact.video_id, fact.start)
        ok = [a for a in self.asks if a.cut_unix < start]
        if same_session_only:
            ok = [a for a in ok if a.video_id == fact.video_id]
        return self._one_each(ok, fact.video_id,
                              ("post_cut_same_session", "post_cut_later_session"))

    def _one_each(self, asks: list[AskPoint], video_id: str,
                  tags: tuple[str, str]) -> list[tuple[str, AskPoint]]:
        same = [a for a in asks if a.video_id == video_id]
        other = [a for a in asks if a.video_id != video_id]
        return [(tag, self.rng.choice(group))
                for tag, group in zip(tags, (same, other), strict=True) if group]

    def _day(self, ask: AskPoint, video_id: str) -> str:
        """"today" when asked the same day, else "on Tuesday, March 3"."""
        if ask.video_id == video_id:
            return "today"
        return f"on {day_phrase(self.world.session(video_id).start_unix)}"

    def _leak(self, fact: Fact, option: str) -> Leak:
        span = Span(start=fact.start, end=fact.end)
        return Leak(video_id=fact.video_id, span=span,
                    start_unix=self.world.session(fact.video_id).start_unix, option=option)

    def _others(self, pool: list[str], exclude: set[str], k: int) -> list[str]:
        return self.rng.sample(sorted(set(pool) - exclude), k)

    # -- the skills -----------------------------------------------------------------------------

    def drafts(self, fact: Fact) -> list[Draft]:
        write = {
            "placement": self._placement, "note": self._note, "chores": self._chores,
            "meeting": self._meeting, "errand": self._errand, "intent": self._intent,
            "dryer": self._dryer,
        }.get(fact.kind)
        return write(fact) if write is not None else []

    def _placement(self, fact: Fact) -> list[Draft]:
        obj, place = fact.key, _place(fact.value)
        question = f"Where did I last leave my {obj}?"
        later = [f for f in self.world.facts if f.kind == "placement" and f.key == obj
                 and self._abs(f.video_id, f.start) > self._abs(fact.video_id, fact.start)]
        moved = min(later, key=lambda f: self._abs(f.video_id, f.start), default=None)
        until = self._abs(moved.video_id, moved.start) if moved is not None else None
        out = []
        for tag, ask in self._after(fact, until):
            leak = None
            if moved is not None:  # the later place is what a leak would answer
                wrong, tag = _place(moved.value), "moved_after_cut"
                leak = self._leak(moved, _cap(wrong.phrase))
            elif fact.previous is not None:
                wrong = _place(fact.previous)
            else:
                wrong = self.rng.choice([p for p in PLACES if p.name != fact.value])
            out.append(Draft(
                "object_location_memory", tag, question, ask,
                correct=_cap(place.phrase), vague=f"Somewhere in the {place.room}",
                wrong=[_cap(wrong.phrase)], evidence=_evidence(fact),
                evidence_text=f"The {obj} was put {place.phrase}.", leak=leak))
        if fact.previous is None:  # the object's first appearance: before it, unanswerable
            for tag, ask in self._before(fact):
                others = self.rng.sample([p for p in PLACES if p.name != fact.value], 2)
                leaked = _cap(place.phrase)
                out.append(Draft(
                    "object_location_memory", tag, question, ask, None, None,
                    wrong=[leaked] + [_cap(p.phrase) for p in others],
                    evidence_text=f"The {obj} is first seen after the question.",
                    leak=self._leak(fact, leaked)))
        return out

    def _note(self, fact: Fact) -> list[Draft]:
        note = next(n for n in NOTES if n.kind == fact.key)
        value = int(fact.value)
        others = [note.answer.format(v=v) for v in note.values if v != value]
        correct = note.answer.format(v=value)
        out = []
        for tag, ask in self._after(fact):
            out.append(Draft(
                "visual_recall", tag, note.question, ask, correct, note.vague,
                wrong=self.rng.sample(others, 1), evidence=_evidence(fact),
                evidence_text=f"The note read {note.text.format(v=value)!r}."))
        for tag, ask in self._before(fact):
            out.append(Draft(
                "visual_recall", tag, note.question, ask, None, None,
                wrong=[correct] + self.rng.sample(others, 2),
                evidence_text="The note is shown only after the question.",
                leak=self._leak(fact, correct)))
        return out

    def _chores(self, fact: Fact) -> list[Draft]:
        by_caption = {c.caption: c.words for c in CHORES}
        order = [by_caption[c] for c in fact.value.split("|")]
        if len(order) < 3:
            return []
        shuffled = [order[2], order[0], order[1]] if self.rng.random() < 0.5 else order[::-1]
        out = []
        last = Fact(kind="chores", video_id=fact.video_id, spans=[fact.spans[-1]],
                    key=fact.key, value=fact.value)
        for tag, ask in self._after(last):
            day = self._day(ask, fact.video_id)
            out.append(Draft(
                "timeline_reconstruction", tag, f"In what order did I do my chores {day}?",
                ask, correct=_cap(", then ".join(order)),
                vague=_cap(f"{order[0]} first, then the other chores"),
                wrong=[_cap(", then ".join(shuffled))],
                evidence=_evidence(fact),
                evidence_text="Chores in order: " + "; ".join(order) + "."))
        return out

    def _meeting(self, fact: Fact) -> list[Draft]:
        venue = fact.value
        others = [v for v in VENUES if v != venue]
        out = []
        for tag, ask in self._after(fact):
            day = self._day(ask, fact.video_id)
            question = ("Where did B say we should meet after this?" if day == "today"
                        else f"{_cap(day)}, where did B say we should meet?")
            out.append(Draft(
                "conversational_memory", tag, question, ask, f"At the {venue}",
                "Somewhere in town", wrong=[f"At the {self.rng.choice(others)}"],
                evidence=_evidence(fact),
                evidence_text=f"B proposed meeting at the {venue}."))
        for tag, ask in self._before(fact, same_session_only=True):
            leaked = f"At the {venue}"
            out.append(Draft(
                "conversational_memory", tag, "Where did B say we should meet after this?",
                ask, None, None,
                wrong=[leaked] + [f"At the {v}" for v in self.rng.sample(others, 2)],
                evidence_text="B names the place only after the question.",
                leak=self._leak(fact, leaked)))
        return out

    def _errand(self, fact: Fact) -> list[Draft]:
        item = fact.value
        others = [e for e in ERRANDS if e != item]
        out = []
        for tag, ask in self._after(fact):
            day = self._day(ask, fact.video_id)
            question = ("What did A ask me to pick up on the way home?" if day == "today"
                        else f"What did A ask me to pick up {day}?")
            out.append(Draft(
                "conversational_memory", tag, question, ask, _cap(f"some {item}"),
                "Something from the shop", wrong=[_cap(f"some {self.rng.choice(others)}")],
                evidence=_evidence(fact),
                evidence_text=f"A asked for {item}."))
        return out

    def _intent(self, fact: Fact) -> list[Draft]:
        trigger, task = fact.key, fact.value
        intent = next(i for i in INTENTS if i.task == task)
        others = [_cap(i.task) for i in INTENTS if i.task != task]
        question = f"What did I say I needed to do after {trigger}?"
        out = []
        for tag, ask in self._after(fact):
            out.append(Draft(
                "intent_recall", tag, question, ask, _cap(task), intent.vague,
                wrong=self.rng.sample(others, 1), evidence=_evidence(fact),
                evidence_text=f"The wearer said they would {task} after {trigger}."))
        for tag, ask in self._before(fact):
            out.append(Draft(
                "intent_recall", tag, question, ask, None, None,
                wrong=[_cap(task)] + self.rng.sample(others, 2),
                evidence_text="The intention is stated only after the question.",
                leak=self._leak(fact, _cap(task))))
        return out

    def _dryer(self, fact: Fact) -> list[Draft]:
        bus = next((f for f in self.world.facts if f.kind == "bus"
                    and f.video_id == fact.video_id), None)
        if bus is None:
            return []
        dryer_time, bus_time = fact.value, bus.value
        early = clock_minutes(dryer_time) < clock_minutes(bus_time)
        claim = "Yes" if early else "No"
        relation = "before" if early else "after"
        shifted = clock_text(clock_minutes(dryer_time) + (75 if early else -75))
        opposite_relation = "after" if early else "before"
        wrong = (f"{'No' if early else 'Yes'}, the dryer is done at {shifted}, "
                 f"{opposite_relation} the {bus_time} bus")
        question = "Will today's laundry be dry before my bus leaves?"
        evidence = _evidence(bus) + _evidence(fact)
        out = []
        for tag, ask in self._after(fact):
            if tag != "same_session":  # "today" is the session's day
                continue
            out.append(Draft(
                "in_context_retrieval", tag, question, ask,
                f"{claim}, the dryer is done at {dryer_time}, {relation} the {bus_time} bus",
                "It will be close",
                wrong=[wrong],
                evidence=evidence,
                evidence_text=f"The bus leaves at {bus_time}; the dryer is done at "
                              f"{dryer_time}."))
        return out

    # -- never recorded -------------------------------------------------------------------------

    def never_seen(self) -> list[Draft]:
        out = []
        ask = self.rng.choice(self.asks)
        obj = self.world.never_seen_object
        out.append(Draft(
            "object_location_memory", "never_seen",
            f"Where did I last leave my {obj}?", ask, None, None,
            wrong=[_cap(p.phrase) for p in self.rng.sample(PLACES, 3)],
            evidence_text=f"The {obj} is never seen."))
        if self.world.unused_notes:
            note = next(n for n in NOTES if n.kind == self.world.unused_notes[0])
            ask = self.rng.choice(self.asks)
            out.append(Draft(
                "visual_recall", "never_seen", note.question, ask, None, None,
                wrong=[note.answer.format(v=v) for v in self.rng.sample(note.values, 3)],
                evidence_text="No such note is ever shown."))
        if self.world.unused_triggers:
            trigger = self.world.unused_triggers[0]
            ask = self.rng.choice(self.asks)
            out.append(Draft(
                "intent_recall", "never_seen", f"What did I say I needed to do after {trigger}?",
                ask, None, None,
                wrong=[_cap(i.task) for i in self.rng.sample(INTENTS, 3)],
                evidence_text=f"Nothing is said about {trigger}."))
        return out


def _evidence(fact: Fact) -> list[tuple[str, Span]]:
    return [(fact.video_id, span) for span in fact.spans]


def _place(name: str) -> Place:
    return next(p for p in PLACES if p.name == name)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
