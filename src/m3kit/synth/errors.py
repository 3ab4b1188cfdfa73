"""The synthetic suite's typed error."""

from __future__ import annotations

from m3kit.errors import M3kitError


class SynthError(M3kitError, ValueError):
    """A synthetic script, suite configuration or suite folder cannot be used (names the file,
    the record and the field, like every m3kit error)."""
