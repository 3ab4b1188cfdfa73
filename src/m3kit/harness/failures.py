"""Failed samples: counted by reason, and a run with too many of them is an error.

A sample *failed* when it got no answer: inspect recorded an error for it, or the solver
recorded a failure (the model call failed after its attempts, the memory reported an error,
the media could not be read). A failed sample does not stop the run; but a run in which every
sample failed (a server that went away, a rejected key past preflight) measured nothing, and
``m3kit eval`` exits non-zero for it, as for more failures than ``--max-failed`` allows.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from m3kit.errors import M3kitError
from m3kit.models.redact import one_line
from m3kit.schema.evallog import read_record

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

__all__ = ["FailureCount", "RunFailedError", "check_failures", "count_failures",
           "failure_kind", "sample_failure"]

SHOW_KINDS = 3  # reasons named in the error line; the log keeps every sample's own


class RunFailedError(M3kitError):
    """Every sample of a run failed, or more than the run allowed."""


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


def sample_failure(sample: EvalSample) -> str | None:
    """Why ``sample`` got no answer (inspect's error, else the solver's failure); ``None`` when
    it got one."""
    if sample.error is not None:
        return one_line(sample.error.message or "error")
    try:
        record = read_record(sample.metadata)
    except ValueError:  # a record this version cannot read: not evidence of a failure
        return None
    return record.failure if record is not None else None


def failure_kind(reason: str) -> str:
    """The kind of a failure reason: its step and exception type (``model: APIConnectionError``
    of ``model: APIConnectionError: Connection error.``), or the reason itself when it has no
    such parts."""
    parts = reason.split(": ", 2)
    return ": ".join(parts[:2]) if len(parts) > 2 else reason


def count_failures(log: EvalLog) -> FailureCount:
    """The failed samples of ``log`` (whose samples must be loaded), counted by kind."""
    samples = log.samples or []
    reasons = [r for r in (sample_failure(s) for s in samples) if r is not None]
    kinds = Counter(failure_kind(r) for r in reasons)
    return FailureCount(total=len(samples), failed=len(reasons),
                        kinds=sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])))


def check_failures(log: EvalLog, max_failed: int | None = None) -> FailureCount:
    """The failure count of ``log``; ``RunFailedError`` when every sample failed or, with
    ``max_failed``, when more than that many did."""
    if max_failed is not None and max_failed < 0:
        raise M3kitError(f"max_failed must be 0 or more, got {max_failed}", field="max_failed")
    count = count_failures(log)
    every = count.total > 0 and count.failed == count.total
    too_many = max_failed is not None and count.failed > max_failed
    if every or too_many:
        limit = f" (more than --max-failed {max_failed})" if too_many and not every else ""
        raise RunFailedError(f"{count.describe()}{limit}", path=log.location or None)
    return count
