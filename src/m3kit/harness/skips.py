"""What a task's loader skipped: recorded once, shown once.

A task records the loader's skips as task metadata ``m3kit_skipped``: a list of one-line reasons
(each naming file, record and field); a bare count is read too (older logs). Under plain
``inspect eval`` the task logs one warning line (``warn_skipped``); ``m3kit eval`` prints the
reasons after the run (``skipped_of``).

Attachments a run left out are in the samples' ``SampleRecord.skipped``: what a memory's ingest
left out (an attachment damaged or over the pixel bound), recorded by the sample that built the
key's index, or, answering directly, the images the pixel bound kept out of a sample's message
(recorded by each sample that would have sent them). ``attachment_skips_of`` gathers them, each
skip once however many samples (or resumed runs) recorded it, with the stage that left them
out, as ``m3kit eval`` names it ("skipped N attachment(s) at memory ingest" / "not sent to the
model").
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from m3kit.memory.store import is_rebuilt_record, is_unsaved_record
from m3kit.schema.evallog import SKIPPED_KEY, read_record
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = ["SKIPPED_KEY", "AttachmentSkips", "Skipped", "attachment_skips_of", "skipped_of",
           "warn_skipped"]

INGEST_STAGE = "at memory ingest"
SEND_STAGE = "not sent to the model"


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


class AttachmentSkips(BaseModel):
    """Attachments a run left out, each once, in log order, and where: ``stage`` is
    ``"at memory ingest"`` (a memory's ingest) or ``"not sent to the model"`` (a direct
    answer's message, by the pixel bound). ``rebuilt``: the damaged stored indexes a memory's
    ingest found and rebuilt; ``unsaved``: the indexes it could not store (kept in memory for
    the run); neither is an attachment left out, and each is shown apart."""

    model_config = ConfigDict(frozen=True)

    stage: str
    records: list[SkippedRecord]
    rebuilt: list[SkippedRecord] = []
    unsaved: list[SkippedRecord] = []


def attachment_skips_of(log: EvalLog) -> AttachmentSkips:
    """What the samples of a run (the log read with its samples) left out of their memory's
    ingest or their message, each skip once."""
    seen: dict[SkippedRecord, None] = {}
    memory = False
    for sample in log.samples or []:
        try:
            record = read_record(sample.metadata)
        except ValueError:  # a record this version cannot read: it names no skip
            continue
        if record is None:
            continue
        memory = memory or record.memory is not None
        for skip in record.skipped:
            seen.setdefault(skip, None)
    rebuilt = [s for s in seen if is_rebuilt_record(s)]
    unsaved = [s for s in seen if is_unsaved_record(s)]
    return AttachmentSkips(stage=INGEST_STAGE if memory else SEND_STAGE,
                           records=[s for s in seen
                                    if not (is_rebuilt_record(s) or is_unsaved_record(s))],
                           rebuilt=rebuilt, unsaved=unsaved)
