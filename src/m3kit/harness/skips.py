"""What a task's loader skipped: recorded once, shown once.

A task records the loader's skips as task metadata ``m3kit_skipped``: a list of one-line reasons
(each naming file, record and field); a bare count is read too (older logs). Under plain
``inspect eval`` the task logs one warning line (``warn_skipped``); ``m3kit eval`` prints the
reasons after the run (``skipped_of``).

What a memory's ingest left out (an attachment damaged or over the pixel bound) is in the
``SampleRecord`` of the sample that built the key's index; ``ingest_skipped_of`` gathers it,
each skip once however many samples (or resumed runs) recorded it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from m3kit.schema.evallog import SKIPPED_KEY, read_record
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["SKIPPED_KEY", "Skipped", "ingest_skipped_of", "skipped_of", "warn_skipped"]



class Skipped(BaseModel):
    """What a task's loader skipped: how many, and the reasons it recorded (may be fewer)."""

    model_config = ConfigDict(frozen=True)

    count: int
    reasons: list[str]


def warn_skipped(logger: logging.Logger, source: str, skipped: Sequence[object]) -> None:
    """One warning for what a loader skipped (the count and the first reason), for runs under
    plain ``inspect eval``; the reasons themselves go into the task metadata ``m3kit_skipped``,
    which ``m3kit eval`` prints after the run, so they are not printed twice."""
    if skipped:
        more = f" (and {len(skipped) - 1} more)" if len(skipped) > 1 else ""
        logger.warning("%s: skipped %d record(s) while loading, e.g. %s%s; all are listed in "
                       "the log metadata %s", source, len(skipped), skipped[0], more,
                       SKIPPED_KEY)


def skipped_of(log: EvalLog) -> Skipped:
    """What the task's loader skipped, from the ``m3kit_skipped`` task metadata."""
    raw = (log.eval.metadata or {}).get(SKIPPED_KEY)
    if isinstance(raw, list):
        return Skipped(count=len(raw), reasons=[str(r) for r in raw])
    if isinstance(raw, int) and not isinstance(raw, bool):
        return Skipped(count=raw, reasons=[])
    return Skipped(count=0, reasons=[])


def ingest_skipped_of(log: EvalLog) -> list[SkippedRecord]:
    """What the memory ingests of a run left out (the log read with its samples), in log
    order, each skip once."""
    seen: dict[SkippedRecord, None] = {}
    for sample in log.samples or []:
        try:
            record = read_record(sample.metadata)
        except ValueError:  # a record this version cannot read: it names no skip
            continue
        for skip in record.skipped if record is not None else []:
            seen.setdefault(skip, None)
    return list(seen)
