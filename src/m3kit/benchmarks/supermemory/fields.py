"""Reading one field of a SuperMemory-VQA record (a question of ``all_qa.json``, a transcript
line): a number, a unix time, a time local to a recording, a text. A value that is none of
these raises ``RecordSkip`` naming the field; the reader skips the record by name.

Times are bounded here, once for every reader: a unix time must lie on a sane clock
(``CLOCK_RANGE_UNIX``) and a local time within one recording (``MAX_SESSION_S``). A time past
either is no recording's (milliseconds for seconds, a fuzzed number), and a huge one names no
date at all (``datetime`` stops at year 9999), which would fail every question of its person at
answer time instead of skipping the one record at load.
"""

from __future__ import annotations

import math
import re
from typing import Any

from m3kit.errors import SchemaError
from m3kit.schema.supermemory import CLOCK_RANGE_UNIX, MAX_SESSION_S

__all__ = [
    "SPAN_SLACK_S",
    "RecordSkip",
    "SuperMemoryError",
    "as_local_seconds",
    "as_number",
    "as_text",
    "as_unix_time",
]

_MMSS = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")
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


def as_number(value: Any, field: str) -> float:
    """A finite number (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise RecordSkip(field, f"not a number: {value!r}")
    return float(value)


def as_unix_time(value: Any, field: str) -> float:
    """A recording's start in unix seconds, on the clock ``CLOCK_RANGE_UNIX`` bounds."""
    seconds = as_number(value, field)
    low, high = CLOCK_RANGE_UNIX
    if not low <= seconds <= high:
        raise RecordSkip(field, f"{value!r} is not a unix time of a recording (seconds from "
                                f"1970 to 2100: {low:.0f} to {high:.0f})")
    return seconds


def as_local_seconds(value: Any, field: str) -> float:
    """Seconds local to a recording, from 0 to ``MAX_SESSION_S``: a number, or a legacy
    ``MM:SS`` / ``HH:MM:SS`` string."""
    if isinstance(value, str):
        match = _MMSS.match(value)
        if not match:
            raise RecordSkip(field, f"not a time (seconds or MM:SS): {value!r}")
        hours, minutes, secs = match.groups()
        seconds = int(hours or 0) * 3600 + int(minutes) * 60 + float(secs)
    else:
        seconds = as_number(value, field)
    if seconds < 0:
        raise RecordSkip(field, f"a negative time: {value!r}")
    if seconds > MAX_SESSION_S:
        raise RecordSkip(field, f"{value!r} s is past the longest recording a session may be "
                                f"({MAX_SESSION_S:.0f} s, a day)")
    return seconds


def as_text(value: Any, field: str) -> str:
    """Text that is not blank."""
    if not isinstance(value, str) or not value.strip():
        raise RecordSkip(field, "missing or not text")
    return value
