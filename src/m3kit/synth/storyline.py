"""M3Eval's 2×2 storyline design: four paragraphs from one scaffold and two manipulated slots.

A storyline is the ordered clauses of one video. Two *slots* are chosen; each has a correct and
an incorrect version, and the four options realise the grid (Appendix C.1.3)::

    A: slot 1 correct,   slot 2 correct     ("cc", the answer)
    B: slot 1 incorrect, slot 2 correct     ("ic")
    C: slot 1 correct,   slot 2 incorrect   ("ci")
    D: slot 1 incorrect, slot 2 incorrect   ("ii")

Source confusion and content forgetting substitute one clause per slot (the other video's
clause at that position; a fabricated clause found in neither video) at two non-adjacent
positions; order disruption reverses two disjoint pairs of adjacent clauses in place. Options are
lettered A–D in this order here; questions shuffle them and record each letter's cell.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from m3kit.synth.phrases import paragraph

__all__ = ["GRID_CELLS", "StorylineDesign", "order_grid", "substitution_grid"]

GRID_CELLS = ("cc", "ic", "ci", "ii")
Family = Literal["source_confusion", "order_disruption", "content_forgetting"]


class StorylineDesign(BaseModel):
    """One storyline question's design: the true clauses, the two slots and the four options.

    ``slots[k]`` lists the clause positions of slot ``k`` (one position for a substitution, two
    adjacent ones for an order reversal); ``correct[k]`` / ``incorrect[k]`` the clause texts
    there in each version; ``options[cell]`` the paragraph of each grid cell.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    family: Family
    clauses: list[str]
    slots: list[list[int]]
    correct: list[list[str]]
    incorrect: list[list[str]]
    options: dict[str, str]


def substitution_grid(
    clauses: Sequence[str],
    alternatives: Sequence[str | None],
    family: Family,
    rng: random.Random,
) -> StorylineDesign | None:
    """Substitute ``alternatives[i]`` for clause ``i`` at two non-adjacent positions chosen by
    ``rng`` among those with an alternative; None when no such two positions exist."""
    if len(alternatives) != len(clauses):
        raise ValueError("one alternative (or None) per clause")
    usable = {i: alt for i, alt in enumerate(alternatives) if alt is not None and alt != clauses[i]}
    pairs = [(i, j) for i in usable for j in usable if j - i >= 2]
    if not pairs:
        return None
    first, second = rng.choice(pairs)
    options = {}
    for cell in GRID_CELLS:
        text = list(clauses)
        if cell[0] == "i":
            text[first] = usable[first]
        if cell[1] == "i":
            text[second] = usable[second]
        options[cell] = paragraph(text)
    return StorylineDesign(
        family=family, clauses=list(clauses), slots=[[first], [second]],
        correct=[[clauses[first]], [clauses[second]]],
        incorrect=[[usable[first]], [usable[second]]],
        options=options,
    )


def order_grid(clauses: Sequence[str], rng: random.Random) -> StorylineDesign | None:
    """Reverse two disjoint pairs of adjacent clauses in place; None with fewer than 4 clauses
    (or repeated clauses, whose reversal would change nothing)."""
    n = len(clauses)
    if n < 4 or len(set(clauses)) != n:
        return None
    pairs = [(i, j) for i in range(n - 1) for j in range(i + 2, n - 1)]
    first, second = rng.choice(pairs)
    options = {}
    for cell in GRID_CELLS:
        text = list(clauses)
        for flag, at in zip(cell, (first, second), strict=True):  # a cell names both pairs
            if flag == "i":
                text[at], text[at + 1] = text[at + 1], text[at]
        options[cell] = paragraph(text)
    return StorylineDesign(
        family="order_disruption", clauses=list(clauses),
        slots=[[first, first + 1], [second, second + 1]],
        correct=[[clauses[first], clauses[first + 1]], [clauses[second], clauses[second + 1]]],
        incorrect=[[clauses[first + 1], clauses[first]], [clauses[second + 1], clauses[second]]],
        options=options,
    )
