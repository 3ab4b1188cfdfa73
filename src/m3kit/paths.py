"""Where m3kit keeps its caches unless told otherwise (frames, OCR results, suites)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir() -> Path:
    """``$M3KIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/m3kit``, else ``~/.cache/m3kit``."""
    explicit = os.environ.get("M3KIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "m3kit"
