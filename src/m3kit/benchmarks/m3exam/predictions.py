"""M3Exam predictions files of any harness: JSON Lines of ``{"id", "prediction", "judge"?}``,
read into ``PredictionRecord``s, each line left out named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.schema import SkippedRecord, read_predictions_lenient

__all__ = ["PredictionRecord", "read_predictions"]


class PredictionRecord(BaseModel):
    """One line of a predictions file. ``judge`` is an LLM-judge score already computed
    elsewhere (0-1); it is used as given. A ``judge`` that is not a number (``true``,
    ``"yes"``) and a ``prediction`` that is not text or a number (an object, a list) make the
    line a named skip, never a guessed value."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    prediction: str
    judge: float | None = Field(default=None, ge=0, le=1)

    @field_validator("prediction", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        # Numeric answers ("63", 2023) arrive as JSON numbers from some harnesses.
        return (
            str(value) if isinstance(value, int | float) and not isinstance(value, bool) else value
        )

    @field_validator("judge", mode="before")
    @classmethod
    def _judge_number(cls, value: Any) -> Any:
        # pydantic reads ``true`` as 1.0 and ``"1"`` as 1.0: a verdict is a number or nothing.
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            raise ValueError(f"judge must be a number from 0 to 1, got {value!r}")
        return value


def read_predictions(path: str | Path) -> tuple[list[PredictionRecord], list[SkippedRecord]]:
    """Read a predictions JSONL (``schema.read_predictions_lenient``): a line that is not
    UTF-8 or not JSON, a bad record and a repeated id (the first is kept) come back as skipped
    records, not raised."""
    return read_predictions_lenient(path, PredictionRecord)
