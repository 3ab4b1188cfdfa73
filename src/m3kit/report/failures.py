"""A run's failures as the terminal shows them under its table: how many samples got no answer,
counted by kind of reason, the first few reasons in full, and the items a model judge gave no
usable verdict.

A failed sample is counted wrong in every table (its ``failed`` column), but a column is only a
number: a server answering HTTP 500 to some requests leaves a run whose status is ``success``
and whose reasons are in the log alone. These lines put the reasons in front of the user;
the log keeps every sample's own.
"""

from __future__ import annotations

from collections.abc import Sequence

from m3kit.schema.evallog import LoggedSample
from m3kit.schema.failures import FailureCount

__all__ = ["SHOW_REASONS", "failure_lines"]

SHOW_REASONS = 3  # samples whose reason is printed in full; the log keeps them all
REASON_CHARS = 200  # a reason's characters on the terminal (the log keeps it whole)
NO_REASON = "no score recorded"  # a failed sample that carries no reason of its own


def _reason(sample: LoggedSample) -> str:
    reason = sample.reason or NO_REASON
    return reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1] + "…"


def failure_lines(samples: Sequence[LoggedSample]) -> list[str]:
    """The lines printed under a run's table: ``N of M samples failed (counted wrong): K×
    kind; ...`` and the first ``SHOW_REASONS`` samples' reasons (``  <id>: <reason>``), then
    ``judge: N item(s) got no usable verdict from the judge (scored 0)`` and its first reasons;
    nothing for a run without either."""
    lines: list[str] = []
    failed = [s for s in samples if s.failed]
    if failed:
        count = FailureCount.of([_reason(s) if s.failed else None for s in samples])
        counted = ("failures counted wrong, unreadable media excluded"
                   if any(s.excluded for s in failed) else "counted wrong")
        lines.append(f"{count.describe()} ({counted})")
        lines += [f"  {s.id}: {_reason(s)}" for s in failed[:SHOW_REASONS]]
        if len(failed) > SHOW_REASONS:
            lines.append(f"  ... and {len(failed) - SHOW_REASONS} more (each sample's error "
                         "in the log)")
    unjudged = [s for s in samples
                if s.item is not None and s.item.judge_failure is not None]
    if unjudged:
        lines.append(f"judge: {len(unjudged)} item(s) got no usable verdict from the judge "
                     "(scored 0)")
        lines += [f"  {s.id}: {s.item.judge_failure}" for s in unjudged[:SHOW_REASONS]
                  if s.item is not None]
        if len(unjudged) > SHOW_REASONS:
            lines.append(f"  ... and {len(unjudged) - SHOW_REASONS} more (each item's "
                         "judge_reply in the log)")
    return lines

