"""A synthetic person's days: the exact ground truth of their sessions, and its generation.

A person has one session a day. A session is a row of equal *scenes* (``Scene``): the wearer
does a chore in a room, puts an object down at (or moves it to) a labelled place, reads a note,
or walks through a room. What the frames show is said by labels: the top plate names the room
or the place, the caption bar says the action ("PUT THE KEYS HERE", "WATERING PLANTS"), a
note's text is on a board. What people say is in the aligned transcript: where to meet, what
to bring, what the wearer intends to do after something, when the bus leaves. Every fact a
question asks about is recorded as a ``Fact`` with its session and local time spans.

One session of the first ``transcript_only`` persons (their second day) has no video: nothing
is put down or shown there, only talk (the release has such a session).

Generation is seeded and pure: the same config and subject give the same world.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from m3kit.schema.supermemory import TranscriptLine
from m3kit.synth.ego.config import EgoSuiteConfig
from m3kit.synth.ego.vocab import (
    CHORES,
    ERRANDS,
    FILLER,
    INTENTS,
    NOTES,
    OBJECTS,
    PLACES,
    ROOMS,
    SOUNDS,
    TRIGGERS,
    VENUES,
    Chore,
    Intent,
)

__all__ = [
    "FIRST_DAY_UNIX",
    "Fact",
    "FactKind",
    "PersonWorld",
    "Scene",
    "SceneKind",
    "SessionScript",
    "Span",
    "bus_and_dryer_times",
    "clock_minutes",
    "clock_text",
    "day_phrase",
    "generate_person",
]

# Monday 2 March 2026, 00:00 UTC: person n's first day is (n - 1) weeks later.
FIRST_DAY_UNIX = int(datetime(2026, 3, 2, tzinfo=UTC).timestamp())
_DAY = 86_400
_T = TypeVar("_T")
_RECORD = ConfigDict(extra="forbid", frozen=True)
# The aligned transcript's timing source (the release names the aligner per line).
TIMING_SOURCE = "synthetic"

SceneKind = Literal["chore", "placement", "note", "dryer", "walk"]
FactKind = Literal["placement", "note", "dryer", "chores", "meeting", "errand", "intent", "bus"]


class Scene(BaseModel):
    """One scene of a session's video: ``[start, end)`` seconds local to the session."""

    model_config = _RECORD

    index: int
    kind: SceneKind
    room: str
    start: float
    end: float
    label: str  # the top plate: the room, or the place an object is put at
    caption: str | None = None  # the caption bar
    object: str | None = None  # placement: the object put down
    note: str | None = None  # note / dryer: the board's text


class Span(BaseModel):
    model_config = _RECORD

    start: float
    end: float


class Fact(BaseModel):
    """Something a question can ask about. ``key`` names what (an object, a note kind, a
    speaker, a trigger), ``value`` what it was (a place, a number, a venue, a task), ``spans``
    where it is recorded in ``video_id``; ``previous`` is an object's place before a move."""

    model_config = _RECORD

    kind: FactKind
    video_id: str
    spans: list[Span]
    key: str
    value: str
    previous: str | None = None

    @property
    def end(self) -> float:
        return max(s.end for s in self.spans)

    @property
    def start(self) -> float:
        return min(s.start for s in self.spans)


class SessionScript(BaseModel):
    """One day's recording of a person as the suite scripts it: the scenes its video shows
    and the lines its aligned transcript says (released as files in the released layout by
    ``suite``; the truth behind them stays in ``suite.json``)."""

    model_config = _RECORD

    video_id: str
    subject: int
    day: int  # 1-based
    start_unix: float
    duration: float
    has_video: bool
    scenes: list[Scene]
    transcript: list[TranscriptLine]


class PersonWorld(BaseModel):
    """Everything that happened to one person, in session order."""

    model_config = _RECORD

    subject: int
    sessions: list[SessionScript]
    facts: list[Fact]
    never_seen_object: str  # an object no session shows (unanswerable questions)
    unused_notes: list[str]  # note kinds no session shows
    unused_triggers: list[str]  # triggers the wearer never states an intention for

    def session(self, video_id: str) -> SessionScript:
        for s in self.sessions:
            if s.video_id == video_id:
                return s
        raise KeyError(video_id)

    def absolute(self, video_id: str, local: float) -> float:
        """Unix seconds of ``local`` seconds into session ``video_id``."""
        return self.session(video_id).start_unix + local


def day_phrase(start_unix: float) -> str:
    """"Tuesday, March 3" of a session start (UTC)."""
    moment = datetime.fromtimestamp(start_unix, UTC)
    return f"{moment:%A}, {moment:%B} {moment.day}"


def bus_and_dryer_times(rng: random.Random) -> tuple[str, str]:
    """A bus time and a dryer-done time on the same afternoon, at least 20 minutes apart."""
    bus = rng.randrange(16 * 60, 19 * 60, 5)
    dryer = bus + rng.choice((-1, 1)) * rng.randrange(20, 60, 5)
    return clock_text(bus), clock_text(dryer)


def clock_text(minutes: int) -> str:
    """An afternoon time of day, minutes after midnight, as said: 1020 -> "5:00 pm"."""
    hour, minute = divmod(minutes, 60)
    return f"{(hour - 1) % 12 + 1}:{minute:02d} pm"


def clock_minutes(text: str) -> int:
    """The inverse of ``clock_text``."""
    hour, minute = text.split()[0].split(":")
    return (int(hour) % 12 + 12) * 60 + int(minute)


def generate_person(config: EgoSuiteConfig, subject: int) -> PersonWorld:
    """The seeded world of person ``subject`` (1-based)."""
    rng = random.Random(f"m3kit-ego:{config.seed}:{subject}")
    objects = [o.name for o in OBJECTS]
    rng.shuffle(objects)
    never_seen = objects.pop()
    pools = _Pools(
        objects=objects, notes=_shuffled(rng, [n.kind for n in NOTES]),
        chores=list(CHORES), venues=_shuffled(rng, list(VENUES)),
        errands=_shuffled(rng, list(ERRANDS)), intents=_shuffled(rng, list(INTENTS)),
        triggers=_shuffled(rng, list(TRIGGERS)),
    )
    first_day = FIRST_DAY_UNIX + (subject - 1) * 7 * _DAY
    sessions: list[SessionScript] = []
    facts: list[Fact] = []
    where: dict[str, str] = {}  # object -> place, as the days go by
    for day in range(1, config.sessions + 1):
        video_id = f"P{subject}_D{day}"
        # Mornings to early afternoons, on the minute.
        start = first_day + (day - 1) * _DAY + 8 * 3600 + rng.randrange(0, 6 * 60) * 60
        has_video = not (day == 2 and subject <= config.transcript_only)
        builder = _SessionBuilder(config, rng, video_id, has_video)
        builder.build(pools, where)
        sessions.append(SessionScript(
            video_id=video_id, subject=subject, day=day, start_unix=float(start),
            duration=config.session_seconds, has_video=has_video, scenes=builder.scenes,
            transcript=sorted(builder.lines, key=lambda line: line.start)))
        facts += builder.facts
    return PersonWorld(subject=subject, sessions=sessions, facts=facts,
                       never_seen_object=never_seen, unused_notes=pools.notes,
                       unused_triggers=pools.triggers)


@dataclass
class _Pools:
    """What is still unused for a person: each fact's key is said once, so every question
    has one answer."""

    objects: list[str]
    notes: list[str]
    chores: list[Chore]
    venues: list[str]
    errands: list[str]
    intents: list[Intent]
    triggers: list[str]


def _shuffled(rng: random.Random, items: list[_T]) -> list[_T]:
    rng.shuffle(items)
    return items


class _SessionBuilder:
    """Lays out one session's scenes, transcript lines and facts."""

    def __init__(self, config: EgoSuiteConfig, rng: random.Random, video_id: str,
                 has_video: bool) -> None:
        self.config = config
        self.rng = rng
        self.video_id = video_id
        self.has_video = has_video
        self.seg = config.segment_seconds
        self.scenes: list[Scene] = []
        self.lines: list[TranscriptLine] = []
        self.facts: list[Fact] = []
        self._dryer_times: tuple[str, str] | None = None  # (bus, dryer), set by the dryer scene
        # Two line slots per scene (first and second half), filled at most once each.
        self._free = [(i, half) for i in range(config.segments) for half in (0, 1)]

    def build(self, pools: _Pools, where: dict[str, str]) -> None:
        kinds = self._scene_kinds()
        for index, kind in enumerate(kinds):
            self._scene(index, kind, pools, where)
        dryer = next((s for s in self.scenes if s.kind == "dryer"), None)
        if dryer is not None and self._dryer_times is not None:
            # the bus time is said before the dryer's note is read
            bus, _ = self._dryer_times
            self._say("bus", "A", f"Your bus leaves at {bus} today.", "bus", bus,
                      before=dryer.index)
        if pools.venues:
            venue = pools.venues.pop()
            self._say("meeting", "B", f"Let's meet at the {venue} after this.", "B", venue)
        if pools.errands:
            item = pools.errands.pop()
            self._say("errand", "A", f"Could you pick up some {item} on the way home?",
                      "A", item)
        if pools.intents and pools.triggers:
            intent, trigger = pools.intents.pop(), pools.triggers.pop()
            self._say("intent", "User", f"After {trigger}, I need to {intent.task}.",
                      trigger, intent.task)
        for person, text in self.rng.sample(FILLER, 3):
            self._line(person, text, "speech", self._slot())
        for sound in self.rng.sample(SOUNDS, 2):
            self._line(None, sound, "sound", self._slot())
        chores = [s for s in self.scenes if s.kind == "chore"]
        if chores:
            self.facts.append(Fact(
                kind="chores", video_id=self.video_id,
                spans=[Span(start=s.start, end=s.end) for s in chores], key="chores",
                value="|".join(s.caption or "" for s in chores)))

    def _scene_kinds(self) -> list[SceneKind]:
        n = self.config.segments
        if not self.has_video:
            return ["walk"] * n
        kinds: list[SceneKind] = ["chore", "chore", "chore", "placement", "placement", "note",
                                  "dryer"]
        kinds += ["walk"] * (n - len(kinds))
        self.rng.shuffle(kinds)
        # The dryer's note is read after the bus time is said: never in the first scene.
        if kinds[0] == "dryer":
            swap = next(i for i, k in enumerate(kinds) if k == "walk" or k == "chore")
            kinds[0], kinds[swap] = kinds[swap], kinds[0]
        return kinds

    def _scene(self, index: int, kind: SceneKind, pools: _Pools, where: dict[str, str]) -> None:
        start, end = index * self.seg, (index + 1) * self.seg
        room = self.rng.choice(ROOMS)
        if kind == "chore" and pools.chores:
            done = {s.caption for s in self.scenes}
            chore = self.rng.choice([c for c in pools.chores if c.caption not in done])
            self._add(index, kind, chore.room, start, end, chore.room.upper(), chore.caption)
            return
        if kind == "placement":
            if self._place(index, start, end, pools, where):
                return
            kind = "walk"
        if kind == "note" and pools.notes:
            note_kind = pools.notes.pop()
            note = next(n for n in NOTES if n.kind == note_kind)
            value = self.rng.choice(note.values)
            self._add(index, kind, room, start, end, room.upper(), "READING A NOTE",
                      note=note.text.format(v=value))
            self.facts.append(Fact(kind="note", video_id=self.video_id,
                                   spans=[Span(start=start, end=end)], key=note_kind,
                                   value=str(value)))
            return
        if kind == "dryer":
            self._dryer_times = bus_and_dryer_times(self.rng)
            _, dryer = self._dryer_times
            self._add(index, kind, "kitchen", start, end, "KITCHEN", "CHECKING THE DRYER",
                      note=f"DRYER DONE {dryer.upper()}")
            self.facts.append(Fact(kind="dryer", video_id=self.video_id,
                                   spans=[Span(start=start, end=end)], key="dryer",
                                   value=dryer))
            return
        self._add(index, "walk", room, start, end, room.upper())

    def _place(self, index: int, start: float, end: float, pools: _Pools,
               where: dict[str, str]) -> bool:
        """Put a new object down, or (every other placement) move one already put down."""
        placed_here = [s for s in self.scenes if s.kind == "placement"]
        move = bool(placed_here) or not pools.objects
        movable = [o for o in where if o not in {s.object for s in placed_here}]
        if move and movable:
            obj = self.rng.choice(sorted(movable))
        elif pools.objects:
            obj, move = pools.objects.pop(), False
        else:
            return False
        previous = where.get(obj)
        place = self.rng.choice([p for p in PLACES if p.name != previous])
        where[obj] = place.name
        verb = "MOVED" if move else "PUT"
        self._add(index, "placement", place.room, start, end, place.name.upper(),
                  f"{verb} THE {obj.upper()} HERE", obj=obj)
        self.facts.append(Fact(kind="placement", video_id=self.video_id,
                               spans=[Span(start=start, end=end)], key=obj, value=place.name,
                               previous=previous))
        return True

    def _add(self, index: int, kind: SceneKind, room: str, start: float, end: float,
             label: str, caption: str | None = None, *, obj: str | None = None,
             note: str | None = None) -> None:
        self.scenes.append(Scene(index=index, kind=kind, room=room, start=start, end=end,
                                 label=label, caption=caption, object=obj, note=note))

    def _slot(self, before: int | None = None) -> tuple[float, float]:
        """A free half-scene (before scene ``before`` when given), taken."""
        free = [s for s in self._free if before is None or s[0] < before]
        index, half = self.rng.choice(free)
        self._free.remove((index, half))
        start = index * self.seg + half * self.seg / 2
        return round(start + 0.2, 3), round(start + self.seg / 2 - 0.2, 3)

    def _line(self, person: str | None, text: str, kind: Literal["speech", "sound"],
              slot: tuple[float, float]) -> None:
        confidence = "high" if kind == "speech" else "medium"
        self.lines.append(TranscriptLine(
            start=slot[0], end=slot[1], person=person, text=text, kind=kind,
            timing_source=TIMING_SOURCE, alignment_confidence=confidence))

    def _say(self, kind: FactKind, person: str, text: str, key: str, value: str,
             *, before: int | None = None) -> None:
        slot = self._slot(before)
        self._line(person, text, "speech", slot)
        self.facts.append(Fact(kind=kind, video_id=self.video_id,
                               spans=[Span(start=slot[0], end=slot[1])], key=key, value=value))
