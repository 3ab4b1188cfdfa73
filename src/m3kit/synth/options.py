"""Answer options: seeded shuffling into letters, with each option's role recorded.

Every question draws its own random stream from its *item key* (the suite seed and what the
question is about, not where it sits in the suite), so a question keeps its letters when other
questions are added, and the same item asked under two conditions (no swap / swaps, proactive /
retroactive) has the very same options in the same order.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Sequence
from dataclasses import dataclass

from m3kit.schema.question import Choice, ChoiceRole

__all__ = ["LetteredOptions", "Option", "item_rng", "letter_options"]


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


def letter_options(options: Sequence[Option], rng: random.Random | None) -> LetteredOptions:
    """Letter ``options`` A, B, ... — shuffled by ``rng``, or in the given order when ``rng`` is
    None (fixed label sets such as Yes/No or Video 1/Video 2/Both/Neither). Exactly one option
    must be correct."""
    correct = [o for o in options if o.role == ChoiceRole.CORRECT]
    if len(correct) != 1:
        raise ValueError(f"exactly one option must be correct, got {len(correct)}")
    texts = [o.text for o in options]
    if len(set(texts)) != len(texts):
        raise ValueError(f"option texts must be distinct, got {texts}")
    order = list(options)
    if rng is not None:
        rng.shuffle(order)
    letters = string.ascii_uppercase[: len(order)]
    choices = [Choice(letter=ltr, text=o.text, role=o.role) for ltr, o in zip(letters, order)]
    answer = next(ltr for ltr, o in zip(letters, order) if o.role == ChoiceRole.CORRECT)
    return LetteredOptions(
        choices=choices,
        answer=answer,
        role_by_letter={ltr: o.role.value for ltr, o in zip(letters, order)},
        tag_by_letter={ltr: o.tag for ltr, o in zip(letters, order)},
    )
