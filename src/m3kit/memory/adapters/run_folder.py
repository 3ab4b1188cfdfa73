"""The folder an external system's stores live in for one run.

Each adapter keeps every key's store (a faiss index and SQLite history, a Kuzu file, JSON files,
a cognee dataset) in a folder of its own under one run folder: made on first use under the
memory's ``store_dir`` (the system's temporary folder by default), removed when the memory is
closed, and at exit.
"""

from __future__ import annotations

from pathlib import Path
from tempfile import TemporaryDirectory

__all__ = ["RunFolder"]


class RunFolder:
    """A run's folder under ``parent``, named ``<prefix><random>``, made on first ``path``."""

    def __init__(self, parent: str | None, prefix: str) -> None:
        self.parent = parent
        self.prefix = prefix
        self._made: TemporaryDirectory[str] | None = None

    def path(self) -> Path:
        """The folder, made now if it is not yet (``parent`` too)."""
        if self._made is None:
            parent = None if self.parent is None else Path(self.parent).expanduser()
            if parent is not None:
                parent.mkdir(parents=True, exist_ok=True)
            self._made = TemporaryDirectory(prefix=self.prefix, dir=parent)
        return Path(self._made.name)

    def remove(self) -> None:
        """Remove the folder and everything in it; the next ``path`` makes a new one."""
        if self._made is not None:
            self._made.cleanup()
            self._made = None
