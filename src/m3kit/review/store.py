"""A reviewer's decisions, kept beside the data and never in the generated files:
``ROOT/review/decisions.json`` (the latest decision per item, rewritten atomically on every
change) and ``ROOT/review/history.jsonl`` (every decision as taken, with who and when; appended,
never rewritten). The names leave m3eval's builder its ``review/review.csv``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text
from m3kit.schema.review import (
    REVIEW_DIR,
    ExportResult,
    ReviewDecision,
    ReviewItem,
    ReviewSource,
    item_fingerprint,
)

__all__ = ["DECISIONS_FILE", "DEFAULT_EXPORT_DIR", "HISTORY_FILE", "DecisionStore",
           "StoredDecisions", "export_current"]

DECISIONS_FILE = "decisions.json"
HISTORY_FILE = "history.jsonl"
# Where the reviewed set is exported unless the reviewer names a folder (under the root).
DEFAULT_EXPORT_DIR = f"{REVIEW_DIR}/export"


class StoredDecisions(BaseModel):
    """``decisions.json``: which benchmark's items, and the latest decision of each."""

    benchmark: str
    decisions: dict[str, ReviewDecision] = Field(default_factory=dict)


class DecisionStore:
    """The decisions on the items of one source (``root``: the source's root). Safe to call from
    the server's worker threads: each change is written before the next one starts."""

    def __init__(self, root: Path, benchmark: str) -> None:
        self.folder = Path(root) / REVIEW_DIR
        self.path = self.folder / DECISIONS_FILE
        self.history = self.folder / HISTORY_FILE
        self._lock = threading.Lock()
        self._stored = self._read(benchmark)

    def _read(self, benchmark: str) -> StoredDecisions:
        if not self.path.is_file():
            return StoredDecisions(benchmark=benchmark)
        try:
            stored = StoredDecisions.model_validate_json(self.path.read_bytes())
        except (OSError, ValidationError) as exc:
            raise SchemaError(f"the review's decisions cannot be read: {exc}",
                              path=self.path) from None
        if stored.benchmark != benchmark:
            raise SchemaError(f"these decisions are on {stored.benchmark} items, not "
                              f"{benchmark}'s", path=self.path, field="benchmark")
        return stored

    def decisions(self) -> dict[str, ReviewDecision]:
        """The latest decision per item id (a copy)."""
        with self._lock:
            return dict(self._stored.decisions)

    def current(self, items: Sequence[ReviewItem]) -> tuple[dict[str, ReviewDecision],
                                                            list[str]]:
        """The decisions that hold for ``items`` as they are now, and the ids of the items
        whose decision was taken on another version of them (the builder ran again since):
        those count as pending, never as the reviewer's word on what they did not see."""
        decisions = self.decisions()
        current: dict[str, ReviewDecision] = {}
        stale: list[str] = []
        for item in items:
            decision = decisions.get(item.id)
            if decision is None:
                continue
            if decision.item_fingerprint == item_fingerprint(item):
                current[item.id] = decision
            else:
                stale.append(item.id)
        return current, stale

    def get(self, item_id: str) -> ReviewDecision | None:
        with self._lock:
            return self._stored.decisions.get(item_id)

    def record(self, decision: ReviewDecision) -> None:
        """Keep ``decision`` as its item's latest: appended to the history, then the decisions
        file rewritten atomically (a reader sees the old file or the new one, never half)."""
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            with self.history.open("a", encoding="utf-8") as log:
                log.write(decision.model_dump_json() + "\n")
            decisions = {**self._stored.decisions, decision.item_id: decision}
            stored = self._stored.model_copy(update={"decisions": decisions})
            atomic_write_text(self.path, stored.model_dump_json(indent=1))
            self._stored = stored


def export_current(source: ReviewSource, items: Sequence[ReviewItem], store: DecisionStore,
                   out: Path) -> ExportResult:
    """``source``'s export of the decisions that hold for its ``items`` as they are now (the
    caller's list: the app lists them once); the result counts the stale ones it left out."""
    decisions, stale = store.current(items)
    result = source.export(decisions, out)
    return result.model_copy(update={"stale": len(stale)})
