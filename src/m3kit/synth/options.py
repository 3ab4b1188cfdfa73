"""Answer options: seeded shuffling into letters, with each option's role recorded.

Every question draws its own random stream from its *item key* (the suite seed and what the
question is about, not where it sits in the suite), so a question keeps its letters when other
questions are added, and the same item asked under two conditions (no swap / swaps, proactive /
retroactive) has the very same options in the same order.

Where the correct option lands is not left to the shuffle: the items of one kind (a question
type in one evidence variant) are numbered, and item ``i`` puts its answer at
``gold_position(i, ...)``, which cycles through every letter in a seeded order. A suite's gold
letters are then uniform by construction (exactly, for every whole cycle of items), so a model
that always answers "A", or that breaks ties towards A, scores exactly chance and cannot pass for
one that remembers.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

from m3kit.schema.question import Choice, ChoiceRole

__all__ = ["LetteredOptions", "Option", "gold_position", "item_rng", "letter_options"]


@dataclass(frozen=True)
class Option:
    """An answer option before lettering: its text, its role and a design tag (the 2×2 grid
    cell ``"cc"``/``"ic"``/``"ci"``/``"ii"``, or what the option was drawn from)."""

    text: str
    role: ChoiceRole
    tag: str


@dataclass(frozen=True)
class LetteredOptions:
    choices: list[Choice]
    answer: str
    role_by_letter: dict[str, str]
    tag_by_letter: dict[str, str]


def item_rng(seed: int, *key: object) -> random.Random:
    """A random stream for one item: independent of every other item, reproducible."""
    digest = hashlib.sha256(repr((seed, *key)).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def gold_position(slot: int, n_options: int, seed: int, *kind: object) -> int:
    """The position (0 = A) of the correct option of the ``slot``-th item of a ``kind``: slots
    ``0 .. n_options - 1`` take every position once, in an order drawn from ``seed`` and
    ``kind``, and so on cyclically, so every position is the answer equally often over each
    ``n_options`` consecutive slots."""
    if n_options < 1 or slot < 0:
        raise ValueError(f"need n_options >= 1 and slot >= 0, got {n_options}, {slot}")
    order = list(range(n_options))
    item_rng(seed, "gold-position", *kind).shuffle(order)
    return order[slot % n_options]


def letter_options(options: Sequence[Option], rng: random.Random | None,
                   gold: int | None = None) -> LetteredOptions:
    """Letter ``options`` A, B, ... — shuffled by ``rng``, or in the given order when ``rng`` is
    None (fixed label sets such as Yes/No or Video 1/Video 2/Both/Neither). Exactly one option
    must be correct; ``gold`` (0 = A) moves it to that position, the others keeping their
    (shuffled) order around it."""
    correct = [o for o in options if o.role == ChoiceRole.CORRECT]
    if len(correct) != 1:
        raise ValueError(f"exactly one option must be correct, got {len(correct)}")
    texts = [o.text for o in options]
    if len(set(texts)) != len(texts):
        raise ValueError(f"option texts must be distinct, got {texts}")
    order = list(options)
    if rng is not None:
        rng.shuffle(order)
    if gold is not None:
        if not 0 <= gold < len(order):
            raise ValueError(f"gold position {gold} outside 0..{len(order) - 1}")
        right = next(o for o in order if o.role == ChoiceRole.CORRECT)
        order.remove(right)
        order.insert(gold, right)
    letters = string.ascii_uppercase[: len(order)]
    lettered = list(zip(letters, order, strict=True))
    choices = [Choice(letter=ltr, text=o.text, role=o.role) for ltr, o in lettered]
    answer = next(ltr for ltr, o in lettered if o.role == ChoiceRole.CORRECT)
    return LetteredOptions(
        choices=choices,
        answer=answer,
        role_by_letter={ltr: o.role.value for ltr, o in lettered},
        tag_by_letter={ltr: o.tag for ltr, o in lettered},
    )
