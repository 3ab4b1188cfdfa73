"""SuperMemory-VQA predictions files of any harness: ``read_predictions`` -> one
``PredictionRow`` per question id, and each line left out, named.

A line is ``{"question_id", "ranking"}`` (letters A-D or 0-based indices, best first, possibly
partial; or a ranking string) or ``{"question_id", "prediction"}`` (the raw reply).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.metrics.ranking import parse_ranking, ranking_from_values
from m3kit.schema import SkippedRecord
from m3kit.schema.io import iter_json_records, read_predictions_lenient

__all__ = ["PredictionRow", "read_predictions"]


class PredictionRow(BaseModel):
    """One line of a predictions file: ``question_id`` (int or string) and either ``ranking``
    (letters A-D or 0-based indices, best first, possibly partial; or a ranking string) or
    ``prediction`` (the raw reply). A ranking that names no option is kept: it scores as an
    invalid reply."""

    model_config = ConfigDict(frozen=True, populate_by_name=True)

    id: str = Field(alias="question_id")
    ranking: list[Any] | str | int | None = None
    prediction: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | str) or not str(value).strip():
            raise ValueError(f"not a question id: {value!r}")
        return str(value).strip()

    @field_validator("prediction")
    @classmethod
    def _one_answer(cls, value: str | None, info: Any) -> str | None:
        if value is None and info.data.get("ranking") is None:
            raise ValueError("needs 'ranking' or 'prediction'")
        return value

    def parsed(self, n_options: int = 4) -> list[int] | None:
        """The ranking this line gives (``None``: invalid); ``ranking`` wins over
        ``prediction`` when both are there."""
        if isinstance(self.ranking, list):
            return ranking_from_values(self.ranking, n_options)
        if isinstance(self.ranking, int):  # one 0-based index
            return ranking_from_values([self.ranking], n_options)
        if isinstance(self.ranking, str):
            return parse_ranking(self.ranking, n_options)
        return parse_ranking(self.prediction, n_options)


def read_predictions(path: str | Path) -> tuple[dict[str, PredictionRow], list[SkippedRecord]]:
    """The lines of a predictions file (JSON Lines, or a JSON list with ``.json``) by question
    id, and each line left out, named: not UTF-8 or not JSON, no id, neither ranking nor
    prediction, an id given again (the first is kept)."""
    file = Path(path)
    records = iter_json_records(file, lines=file.suffix.lower() != ".json",
                                id_keys=("question_id",))
    rows, skipped = read_predictions_lenient(
        file, PredictionRow,
        [(name, _with_prediction(raw)) for name, raw in records], id_keys=("question_id",))
    return {r.id: r for r in rows}, skipped


def _with_prediction(raw: Any) -> Any:
    # ``prediction`` needs a value for its validator (the "one of them" rule) to run
    if isinstance(raw, dict) and "prediction" not in raw:
        return {**raw, "prediction": None}
    return raw
