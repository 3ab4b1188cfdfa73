"""A disk cache for OCR: a frame is read once, whichever model, memory or run asks again.

OCR is the slowest step of the offline default (tenths of a second per frame on a CPU) and the
same frames come back for every question on a video, for every memory and on every rerun. Results
are keyed by a hash of the pixels and the reader's name, in one SQLite file that several processes
may share.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from m3kit.forks import ThreadProcessLocal
from m3kit.perception.base import TextLine, TextReader, lines_text


class CachedTextReader:
    """Wrap a ``TextReader`` with a persistent cache (``root/ocr.sqlite``)."""

    def __init__(self, reader: TextReader, root: str | Path) -> None:
        self.reader = reader
        self.name = reader.name
        self.root = Path(root).expanduser()
        self.root.mkdir(parents=True, exist_ok=True)
        self._path = self.root / "ocr.sqlite"
        # a connection per thread and process: SQLite's connections are neither shared between
        # threads here nor carried across fork() (m3kit.forks)
        self._connections = ThreadProcessLocal(self._connect)
        self.hits = 0
        self.misses = 0

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._path, timeout=30.0)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("CREATE TABLE IF NOT EXISTS ocr (key TEXT PRIMARY KEY, lines TEXT NOT NULL)")
        return conn

    def _db(self) -> sqlite3.Connection:
        return self._connections.get()

    def _key(self, image: np.ndarray) -> str:
        digest = hashlib.blake2b(digest_size=16)
        digest.update(self.name.encode())
        digest.update(str(image.shape).encode())
        digest.update(np.ascontiguousarray(image).data)
        return digest.hexdigest()

    def read(self, images: Sequence[np.ndarray]) -> list[list[TextLine]]:
        keys = [self._key(image) for image in images]
        db = self._db()
        found: dict[str, list[TextLine]] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT key, lines FROM ocr WHERE key IN ({marks})"
            for key, lines in db.execute(query, chunk):
                found[key] = [TextLine(**line) for line in json.loads(lines)]
        first_seen = {key: n for n, key in reversed(list(enumerate(keys)))}
        todo = sorted(n for key, n in first_seen.items() if key not in found)  # each image once
        self.hits += len(keys) - len(todo)
        self.misses += len(todo)
        if todo:
            fresh = self.reader.read([images[n] for n in todo])
            rows = []
            for n, lines in zip(todo, fresh, strict=True):
                found[keys[n]] = lines
                rows.append((keys[n], json.dumps([line.model_dump() for line in lines])))
            with db:
                db.executemany("INSERT OR REPLACE INTO ocr (key, lines) VALUES (?, ?)", rows)
        return [found[key] for key in keys]

    def read_text(self, images: Sequence[np.ndarray]) -> list[str]:
        return [lines_text(lines) for lines in self.read(images)]


def default_text_reader(min_score: float = 0.5, *, workers: int | None = None) -> CachedTextReader:
    """RapidOCR behind the user's shared OCR cache (``cache_dir()/ocr``): the reader every
    offline component uses unless given another, so a frame is read once for all of them.
    ``workers``: engines reading at once (None: one per usable CPU)."""
    from m3kit.paths import cache_dir
    from m3kit.perception.ocr import RapidTextReader

    return CachedTextReader(RapidTextReader(min_score=min_score, workers=workers),
                            cache_dir() / "ocr")
