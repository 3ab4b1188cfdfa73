"""Errors the model providers raise on purpose (typed, naming the thing, like ``m3kit.errors``)."""

from __future__ import annotations

from m3kit.errors import M3kitError


class ModelArgError(M3kitError, ValueError):
    """A model argument (``-M name=value``) is missing, unknown or out of range."""


class ModelLoadError(M3kitError):
    """A model's files cannot be loaded (missing folder, unsupported architecture, no package)."""
