"""Failed samples counted by kind of reason: the record ``m3kit eval``'s error line and its
summary's failure lines are made from (``m3kit.harness.failures``, ``m3kit.report.failures``).

A reason is one line, ``<step>: <exception type>: <detail>`` where the solver recorded it
(``model: APIConnectionError: Connection error.``); its *kind* is the step and the type, so
one server's hundred 500s count as one kind.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

__all__ = ["SHOW_KINDS", "FailureCount", "failure_kind"]

SHOW_KINDS = 3  # reasons named in the error line; the log keeps every sample's own


class FailureCount(BaseModel):
    """How many of a run's samples failed, and how many for each kind of reason (most common
    first)."""

    model_config = ConfigDict(frozen=True)

    total: int
    failed: int
    kinds: list[tuple[str, int]]

    def describe(self) -> str:
        """``12 of 12 samples failed: 12× model: APIConnectionError``."""
        shown = [f"{n}× {kind}" for kind, n in self.kinds[:SHOW_KINDS]]
        if len(self.kinds) > SHOW_KINDS:
            shown.append(f"{sum(n for _, n in self.kinds[SHOW_KINDS:])}× other reasons")
        reasons = f": {'; '.join(shown)}" if shown else ""
        return f"{self.failed} of {self.total} samples failed{reasons}"

    @classmethod
    def of(cls, reasons: Sequence[str | None]) -> FailureCount:
        """The count of a run whose samples failed for ``reasons`` (``None``: the sample got
        an answer), by ``failure_kind``, most common first."""
        failed = [r for r in reasons if r is not None]
        kinds = Counter(failure_kind(r) for r in failed)
        return cls(total=len(reasons), failed=len(failed),
                   kinds=sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def failure_kind(reason: str) -> str:
    """The kind of a failure reason: its step and exception type (``model: APIConnectionError``
    of ``model: APIConnectionError: Connection error.``), or the reason itself when it has no
    such parts."""
    parts = reason.split(": ", 2)
    return ": ".join(parts[:2]) if len(parts) > 2 else reason
