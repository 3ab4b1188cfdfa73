"""How the SuperMemory-VQA loader names what it skips: ``RecordSkip`` (a field and why) for one
record or transcript line, ``SuperMemoryError`` for a file it cannot read at all.

What a value of the released format must be (a unix time on a sane clock, a time local to one
recording, a text...) is said once, by the format's records (``m3kit.schema.supermemory``); a
record they refuse becomes a ``RecordSkip`` here (``record_skip``), which the loader turns into
a ``SkippedRecord`` naming file, record and field. A time past the clock or a day is no
recording's (milliseconds for seconds, a fuzzed number), and a huge one names no date at all
(``datetime`` stops at year 9999), which would fail every question of its person at answer time
instead of skipping the one record at load.
"""

from __future__ import annotations

from pydantic import ValidationError

from m3kit.errors import SchemaError
from m3kit.schema.supermemory import release_problem

__all__ = ["SPAN_SLACK_S", "RecordSkip", "SuperMemoryError", "record_skip"]

# A span or a transcript line may end this far past its video's last frame (the last frame's
# duration, rounding).
SPAN_SLACK_S = 1.0


class SuperMemoryError(SchemaError):
    """A SuperMemory-VQA file or record is unusable (names the file, record and field)."""


class RecordSkip(Exception):
    """A record is unusable: ``field`` (empty: the record itself) and why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field, self.reason = field, reason


def record_skip(error: ValidationError) -> RecordSkip:
    """The skip of a record the format's models refused: its first problem's field and
    reason."""
    return RecordSkip(*release_problem(error))
