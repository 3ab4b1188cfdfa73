"""Turns for the questions of one memory key, earliest question time first.

A streaming memory (``m3kit.memory.stream``) answers a question from the state it has reached,
and a question earlier than that state costs a replay of the key. inspect runs samples
concurrently in whatever order they reach the solver; ``QuestionTurns`` makes the questions of
one key that are in flight answer one at a time, earliest time first (an undated question may
use the whole stream: it goes last). Keys do not wait for each other.

A question waits only for questions that are in flight and earlier: each one leaves the line
when its solve ends, however it ends (answered, failed, cancelled), so no question waits for a
sample that never runs; one that starts after a later question already answered costs a replay,
never a wrong answer.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

__all__ = ["QuestionTurns"]


def _order(time: float | None) -> float:
    # an undated question may use the whole stream: it goes after every dated one
    return math.inf if time is None else time


class QuestionTurns:
    """One line per memory key; ``turn(key, time)`` holds a place from the moment a sample
    enters it and returns once every earlier question of the key in line has left."""

    def __init__(self) -> None:
        self._lines: dict[str, set[tuple[float, int]]] = {}
        self._changed: dict[str, anyio.Event] = {}
        self._tickets = itertools.count()

    def enter(self, key: str, time: float | None) -> tuple[float, int]:
        """Take a place in ``key``'s line (before the sample's slow work, so that questions
        that start together are ordered by time, not by who finished preparing first)."""
        ticket = (_order(time), next(self._tickets))
        self._lines.setdefault(key, set()).add(ticket)
        return ticket

    async def wait(self, key: str, ticket: tuple[float, int]) -> None:
        """Return once ``ticket`` is the earliest place in ``key``'s line."""
        while min(self._lines[key]) != ticket:
            changed = self._changed.setdefault(key, anyio.Event())
            await changed.wait()

    def leave(self, key: str, ticket: tuple[float, int]) -> None:
        """Give the place up (always: in a ``finally``) and wake the others of the line."""
        line = self._lines.get(key)
        if line is not None:
            line.discard(ticket)
            if not line:
                del self._lines[key]
        changed = self._changed.pop(key, None)
        if changed is not None:
            changed.set()

    @asynccontextmanager
    async def place(self, key: str, time: float | None) -> AsyncIterator[tuple[float, int]]:
        """A place in ``key``'s line for the block's duration (``enter`` … ``leave``)."""
        ticket = self.enter(key, time)
        try:
            yield ticket
        finally:
            self.leave(key, ticket)
