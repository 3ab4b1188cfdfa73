"""A scorer's metrics computed from one card: ``OncePerScores``.

inspect computes a scorer's metrics one after the other over the same list of sample scores
(``inspect_ai._eval.task.results.scorer_for_metrics`` passes that one list to each metric in
turn). A benchmark whose metrics are numbers of one card builds the card once per list with this,
instead of each metric rebuilding the whole card.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from inspect_ai.scorer import SampleScore

__all__ = ["OncePerScores"]

T = TypeVar("T")


class OncePerScores(Generic[T]):
    """``build(scores)``, computed once for each list of sample scores it is called with.

    It keeps the last list (so that list's identity cannot pass to a new one while it is kept)
    with its length and value; a call with another list, or the same list grown, builds anew.
    The one piece of state a scorer's metrics share: its metrics are module-level objects that
    inspect calls with the scores alone.
    """

    def __init__(self, build: Callable[[list[SampleScore]], T]) -> None:
        self._build = build
        self._last: tuple[list[SampleScore], int, T] | None = None

    def __call__(self, scores: list[SampleScore]) -> T:
        last = self._last
        if last is not None and last[0] is scores and last[1] == len(scores):
            return last[2]
        value = self._build(scores)
        self._last = (scores, len(scores), value)
        return value
