"""The vocabulary of the synthetic egocentric world: rooms, labelled places, labelled objects,
notes on screen, chores, things said (meeting places, errands, intentions).

Every fact the questions ask about is *said* in one channel only: where an object lies and
what a note says appear on screen (OCR-readable labels), meeting places, errands, intentions
and bus times are spoken (the aligned transcript). Each entry carries the wording of its
question options — the correct one, a vague one (true but underspecified, seed 003 appendix
D.2) — so the question writers and the renderer agree on every word.
"""

from __future__ import annotations

from dataclasses import dataclass

from m3kit.synth.vocab import RGB

# Rooms are scenes of the M3Eval-style suite (their look comes from ``synth.vocab``).
ROOMS: tuple[str, ...] = ("kitchen", "office", "library", "garden")


@dataclass(frozen=True)
class Place:
    """A labelled piece of furniture in a room; ``name`` is its on-screen label."""

    name: str
    room: str
    preposition: str = "on"

    @property
    def phrase(self) -> str:
        """"on the kitchen shelf", "in the office drawer"."""
        return f"{self.preposition} the {self.name}"


PLACES: tuple[Place, ...] = (
    Place("kitchen shelf", "kitchen"),
    Place("kitchen counter", "kitchen"),
    Place("office desk", "office"),
    Place("office drawer", "office", "in"),
    Place("library sofa", "library"),
    Place("library table", "library"),
    Place("garden bench", "garden"),
    Place("garden shed", "garden", "in"),
)


@dataclass(frozen=True)
class ObjectKind:
    """A labelled object: drawn as a coloured shape, named by its label."""

    name: str
    shape: str
    colour: RGB


OBJECTS: tuple[ObjectKind, ...] = (
    ObjectKind("keys", "star", (250, 220, 0)),
    ObjectKind("wallet", "square", (130, 50, 180)),
    ObjectKind("scissors", "cross", (220, 30, 30)),
    ObjectKind("charger", "triangle", (245, 245, 245)),
    ObjectKind("glasses", "circle", (30, 80, 220)),
    ObjectKind("passport", "diamond", (30, 170, 60)),
    ObjectKind("notebook", "hexagon", (255, 140, 0)),
    ObjectKind("umbrella", "heart", (255, 120, 190)),
)


@dataclass(frozen=True)
class NoteKind:
    """A note read on screen (visual recall): ``text`` and ``answer`` are formats of one value,
    ``values`` the values it may take."""

    kind: str
    text: str
    question: str
    answer: str
    vague: str
    values: tuple[int, ...]


NOTES: tuple[NoteKind, ...] = (
    NoteKind("rice", "RICE: {v} CUPS", "How many cups of rice did the recipe card say?",
             "{v} cups", "A few cups", (2, 3, 4, 5, 6)),
    NoteKind("oven", "OVEN {v} C", "What temperature did the note on the oven say?",
             "{v} degrees", "Quite hot", (160, 170, 180, 200, 220)),
    NoteKind("wifi", "WIFI CODE {v}", "What was the wifi code on the note?",
             "Code {v}", "A four-digit code", (2741, 3958, 4826, 6193, 8305)),
    NoteKind("locker", "LOCKER {v}", "Which locker number was on the sign?",
             "Locker {v}", "One of the lockers", (12, 27, 35, 48, 63)),
)


@dataclass(frozen=True)
class Chore:
    """Something done in a room, said by the caption bar (timeline reconstruction)."""

    caption: str
    words: str  # how an option says it
    room: str


CHORES: tuple[Chore, ...] = (
    Chore("MAKING TEA", "making tea", "kitchen"),
    Chore("WASHING DISHES", "washing dishes", "kitchen"),
    Chore("PRINTING A LETTER", "printing a letter", "office"),
    Chore("SORTING BILLS", "sorting bills", "office"),
    Chore("READING A BOOK", "reading a book", "library"),
    Chore("DUSTING SHELVES", "dusting shelves", "library"),
    Chore("WATERING PLANTS", "watering plants", "garden"),
    Chore("RAKING LEAVES", "raking leaves", "garden"),
)

# Where someone proposes to meet (conversational memory).
VENUES: tuple[str, ...] = (
    "north gate", "blue cafe", "bakery", "train station", "river park", "old bridge",
)
# What someone asks the wearer to bring (conversational memory).
ERRANDS: tuple[str, ...] = ("batteries", "lemons", "bread", "stamps", "milk", "candles")


@dataclass(frozen=True)
class Intent:
    """Something the wearer says they will do (intent recall): ``vague`` is true of it but
    underspecified."""

    task: str
    vague: str


INTENTS: tuple[Intent, ...] = (
    Intent("call the plumber", "Make a call"),
    Intent("water the tomatoes", "Do some gardening"),
    Intent("book the dentist", "Make an appointment"),
    Intent("email the landlord", "Send a message"),
    Intent("charge the camera", "Sort out a gadget"),
    Intent("return the library book", "Run an errand"),
)
TRIGGERS: tuple[str, ...] = ("lunch", "the meeting", "my run", "the laundry", "dinner", "the call")

# Small talk that states nothing a question asks about.
FILLER: tuple[tuple[str, str], ...] = (
    ("User", "Okay, sounds good."),
    ("A", "It is a bit cold in here today."),
    ("B", "Did you sleep well?"),
    ("User", "Give me a second."),
    ("A", "I like this song."),
    ("B", "Let me check my phone."),
)
SOUNDS: tuple[str, ...] = ("[door closes]", "[kettle whistles]", "[phone buzzes]",
                           "[footsteps]", "[water running]")
