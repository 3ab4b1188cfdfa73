"""What a lenient loader did not load (or loaded only in part), and why.

Every benchmark loader reads released files leniently: a record it cannot use is left out and
reported as a ``SkippedRecord`` naming the file, the record and the field, so a run goes on
with the other samples and says what it skipped.

Scoring another harness's predictions file follows the same policy: ``PredictionsCard`` is the
part of a benchmark's score card that says what the data and the predictions file lost on the
way (each skip named), and which predictions match no question; ``match_predictions`` refuses
only a file of which nothing can be scored (``NothingToScoreError``).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from m3kit.errors import M3kitError, SchemaError

__all__ = ["NothingToScoreError", "PredictionsCard", "SkippedRecord", "match_predictions"]


class SkippedRecord(BaseModel):
    """A record (or a whole file: ``record`` None) that was skipped or repaired, and why."""

    model_config = ConfigDict(frozen=True)

    file: str
    record: str | None = None
    field: str | None = None
    reason: str

    @classmethod
    def at(
        cls, file: str | Path, record: str | int | None, reason: str, field: str | None = None
    ) -> SkippedRecord:
        """A skip in ``file`` (a path is stored as its string; a record index as text)."""
        return cls(
            file=str(file), record=None if record is None else str(record), field=field,
            reason=reason,
        )  # fmt: skip

    @classmethod
    def from_error(cls, error: M3kitError) -> SkippedRecord:
        return cls(file=error.path or "", record=error.record, field=error.field,
                   reason=error.reason)  # fmt: skip

    def to_error(self) -> SchemaError:
        return SchemaError(self.reason, path=self.file, record=self.record, field=self.field)

    def __str__(self) -> str:
        return str(self.to_error())


class NothingToScoreError(SchemaError):
    """Nothing can be scored: no question was loaded, or no prediction matches one.
    ``skipped`` holds what was left out on the way, so a caller can still name it."""

    def __init__(self, reason: str, *, path: str | Path | None = None,
                 record: str | int | None = None, field: str | None = None,
                 skipped: Sequence[SkippedRecord] = ()) -> None:
        super().__init__(reason, path=path, record=record, field=field)
        self.skipped = list(skipped)


_SKIP_KEYS = ("n_skipped_records", "n_unmatched_predictions", "skipped")


class PredictionsCard(BaseModel):
    """What a score card of an external predictions file adds to a benchmark's numbers: every
    record left out of the data or of the predictions file (``skipped``, data first, each
    naming file, record, field and reason; ``n_skipped_records`` counts them) and the
    predictions whose id matches no question (``n_unmatched_predictions``; the ids in
    ``unmatched_ids``). Cards read from eval logs leave these ``None``; ``notes`` are lines the
    score verb prints on stderr (neither is part of the JSON)."""

    n_skipped_records: int | None = None
    n_unmatched_predictions: int | None = None
    skipped: list[SkippedRecord] | None = None
    unmatched_ids: list[str] = Field(default_factory=list, exclude=True)
    notes: list[str] = Field(default_factory=list, exclude=True)

    # Keys of the card that its JSON leaves out when they are None (a log's card has no skips).
    optional_keys: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _absent_keys_dropped(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for key in self.optional_keys:
            if data.get(key) is None:
                data.pop(key, None)
        # the benchmark's numbers first, then what was skipped (when there is a record of it)
        for key in _SKIP_KEYS:
            value = data.pop(key, None)
            if value is not None:
                data[key] = value
        return data

    def with_skips(self, skipped: Iterable[SkippedRecord], unmatched: Sequence[str],
                   notes: Sequence[str] = ()) -> Any:
        """A copy carrying ``skipped``, the unmatched prediction ids and ``notes``."""
        records = list(skipped)
        return self.model_copy(update={
            "n_skipped_records": len(records), "n_unmatched_predictions": len(unmatched),
            "skipped": records, "unmatched_ids": list(unmatched), "notes": list(notes),
        })

    def score_json(self) -> dict[str, Any]:
        """What ``m3kit score <verb> --json`` prints."""
        return self.model_dump(mode="json")


def match_predictions(
    known: Collection[str],
    predicted: Collection[str],
    *,
    data: str | Path,
    predictions: str | Path,
    skipped: Sequence[SkippedRecord],
    ignored: Collection[str] = (),
    hint: str = "",
) -> list[str]:
    """The predicted ids that match no question of ``known`` (sorted; ``ignored``: ids of
    questions the loader skipped, not counted). Raises ``NothingToScoreError`` when no question
    was loaded or when no prediction matches one: a table of dashes is never a result."""
    if not known:
        raise NothingToScoreError(
            f"no question could be loaded ({len(skipped)} records skipped, see above): nothing "
            "to score", path=data, skipped=skipped)
    matched = set(predicted) & set(known)
    if not matched:
        raise NothingToScoreError(
            f"none of the {len(predicted)} predictions matches a question id of {data} "
            f"({len(known)} questions{hint})", path=predictions, skipped=skipped)
    return sorted(set(predicted) - set(known) - set(ignored))
