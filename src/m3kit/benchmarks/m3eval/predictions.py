"""M3Eval predictions files of any harness: JSON Lines of ``{"id", "prediction"}`` (N-Back ids
may be named ``question_id``), read into ``{id: prediction}``, each line left out named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from m3kit.benchmarks.m3eval.load import ID_KEYS
from m3kit.schema import SkippedRecord, read_predictions_lenient

__all__ = ["PredictionLine", "read_predictions"]


class PredictionLine(BaseModel):
    """One line of an M3Eval predictions file: the question's ``id`` (N-Back lines may name it
    ``question_id``) and the raw model text. A prediction that is not text is refused, never
    turned into text."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1, validation_alias=AliasChoices("id", "question_id"))
    prediction: str

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


def read_predictions(path: str | Path) -> tuple[dict[str, str], list[SkippedRecord]]:
    """``{id: prediction}`` from a JSON Lines file of ``{"id", "prediction"}`` (N-Back ids may be
    named ``question_id``), and one skip per record left out (``schema.read_predictions_lenient``:
    a line that is not UTF-8 or not JSON, no id, no prediction text, a repeated id: the first one
    is kept)."""
    records, skipped = read_predictions_lenient(path, PredictionLine, id_keys=ID_KEYS)
    return {r.id: r.prediction for r in records}, skipped
