"""Failed samples: counted by reason, and a run with too many of them is an error.

A sample *failed* when it got no answer: inspect recorded an error for it, or the solver
recorded a failure (the model call failed after its attempts, the memory reported an error,
the media could not be read). A failed sample does not stop the run; but a run in which every
sample failed (a server that went away, a rejected key past preflight) measured nothing, and
``m3kit eval`` exits non-zero for it, as for more failures than ``--max-failed`` allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from m3kit.errors import M3kitError
from m3kit.models.redact import one_line
from m3kit.schema.evallog import read_record
from m3kit.schema.failures import FailureCount, failure_kind

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample

__all__ = ["FailureCount", "RunFailedError", "check_failures", "count_failures",
           "failure_kind", "sample_failure"]


class RunFailedError(M3kitError):
    """Every sample of a run failed, or more than the run allowed."""


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


def count_failures(log: EvalLog) -> FailureCount:
    """The failed samples of ``log`` (whose samples must be loaded), counted by kind."""
    return FailureCount.of([sample_failure(s) for s in log.samples or []])


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
