"""Typed errors of the M3Exam synthesis pipeline: each names the stage and the item."""

from __future__ import annotations

from m3kit.errors import M3kitError


class SynthesisError(M3kitError):
    """A synthesis stage cannot go on. ``field`` is the stage (``timeline.core``,
    ``dialogue.user``...), ``record`` the item (an event index, a round id, a window id)."""
