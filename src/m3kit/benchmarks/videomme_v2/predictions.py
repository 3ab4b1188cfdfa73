"""Video-MME-v2 predictions files of any harness: ``read_predictions`` -> ``question_id`` ->
raw reply, and each record left out, named.

Where each harness puts a Video-MME-v2 reply and its question id:
- any script, and VLMEvalKit (``<model>_Video-MME-v2.tsv`` with ``PRED_FORMAT=tsv``, ``.json``
  with ``PRED_FORMAT=json``: its dataset's columns, ``index`` ... ``question_id`` ...,
  plus ``prediction``): top-level ``question_id`` and ``prediction``;
- lmms-eval ``--log_samples`` (``<date>_samples_videomme_v2*.jsonl``): the saved line drops
  the dataset row (``doc``); it keeps ``doc_id`` (a row index), ``target``, the raw reply in
  ``filtered_resps`` (``resps`` too when a filter changed it) and the task's per-sample metric
  entry, ``videomme_v2_score``, which carries ``question_id``;
- lm-eval-harness-style logs that keep ``doc``: ``doc.question_id``.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from m3kit.benchmarks.videomme_v2.load import missing_cell
from m3kit.errors import SchemaError
from m3kit.schema import SkippedRecord, iter_json_records, raw_problem, read_predictions_lenient
from m3kit.schema.io import UndecodableLine

__all__ = ["LMMS_EVAL_METRIC", "PredictionError", "PredictionRow", "read_predictions"]


class PredictionError(SchemaError):
    """A predictions file, or one of its records, is unusable."""


LMMS_EVAL_METRIC = "videomme_v2_score"


def _prediction_text(raw: Mapping[str, Any]) -> Any:
    """The raw reply of one record: ``prediction``, or lmms-eval's ``filtered_resps`` /
    ``resps`` (the first response)."""
    if "prediction" in raw:
        return raw["prediction"]
    for key in ("filtered_resps", "resps"):
        value = raw.get(key)
        while isinstance(value, list) and value:
            value = value[0]
        if value is not None and not isinstance(value, list):
            return value
    return None


def _prediction_id(raw: Mapping[str, Any]) -> Any:
    if "question_id" in raw:
        return raw["question_id"]
    for key in (LMMS_EVAL_METRIC, "doc"):
        entry = raw.get(key)
        if isinstance(entry, Mapping) and "question_id" in entry:
            return entry["question_id"]
    return None


# A record of a predictions file: its raw value, or why it is none (not JSON, not UTF-8).
_RawRecord = Any


def _read_escaped(file: Path) -> str:
    """The file's text, with bytes that are not UTF-8 kept as lone surrogates
    (``surrogateescape``) so that only the records holding them are skipped."""
    try:
        return file.read_bytes().decode("utf-8", "surrogateescape")
    except OSError as exc:
        raise PredictionError(f"cannot read the file: {exc}", path=file) from None


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _undecodable(raw: _RawRecord) -> bool:
    values = raw.values() if isinstance(raw, Mapping) else [raw]
    return any(isinstance(v, str) and _ESCAPED_BYTE.search(v) for v in values)


def _json_records(file: Path) -> list[tuple[str, _RawRecord]]:
    """A JSON list of records (VLMEvalKit's ``.json``, numbered from 0 as its rows), or JSON
    Lines (numbered by line, each line read on its own)."""
    text = _read_escaped(file)
    if not text.lstrip().startswith("["):
        return list(iter_json_records(file, lines=True, id_keys=("question_id",)))
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PredictionError(f"not JSON: {exc.msg} (line {exc.lineno})", path=file) from None
    return [(str(index), raw) for index, raw in enumerate(data)]


def _xlsx_records(file: Path) -> list[tuple[str, _RawRecord]]:
    """The first sheet of a workbook (VLMEvalKit's default ``.xlsx``) as records keyed by the
    header row, numbered by spreadsheet row (the header is row 1)."""
    from zipfile import BadZipFile

    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        book = load_workbook(file, read_only=True, data_only=True)
    except (BadZipFile, InvalidFileException, KeyError, OSError) as exc:
        raise PredictionError(f"not a readable .xlsx workbook: {exc}", path=file) from None
    try:
        rows = book.worksheets[0].iter_rows(values_only=True)
        header = [str(c).strip() if c is not None else "" for c in next(rows, ())]
        missing = {"question_id", "prediction"} - set(header)
        if missing:
            raise PredictionError(f"the sheet lacks the column(s) {sorted(missing)}",
                                  path=file, field=min(missing))
        return [(str(number), dict(zip(header, row, strict=False)))
                for number, row in enumerate(rows, start=2)
                if any(cell is not None for cell in row)]
    finally:
        book.close()


def _tsv_records(file: Path) -> list[tuple[str, _RawRecord]]:
    """The rows of a predictions TSV, numbered by file row (the header is row 1)."""
    import io

    try:
        reader = csv.DictReader(io.StringIO(_read_escaped(file), newline=""), delimiter="\t")
        header = reader.fieldnames or []
        if any(_ESCAPED_BYTE.search(name) for name in header):
            raise PredictionError("the header row is not UTF-8 text: save the file as UTF-8",
                                  path=file)
        missing = {"question_id", "prediction"} - set(header)
        if missing:
            raise PredictionError(f"the TSV lacks the column(s) {sorted(missing)}",
                                  path=file, field=min(missing))
        return [(str(number), row) for number, row in enumerate(reader, start=2)]
    except csv.Error as exc:
        raise PredictionError(f"cannot read the file: {exc}", path=file) from None


class PredictionRow(BaseModel):
    """One record of a predictions file, wherever its harness put the id and the reply: the
    question id, and the raw reply (``""`` when the harness wrote none: a null or NaN cell).
    A reply that is not text or a number (an object, a list, a boolean) is refused."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    prediction: str

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        if missing_cell(value):
            raise ValueError(f"no question_id (looked at question_id, {LMMS_EVAL_METRIC}"
                             ".question_id and doc.question_id)")
        return str(value).strip() if isinstance(value, int | str) and \
            not isinstance(value, bool) else value

    @field_validator("prediction", mode="before")
    @classmethod
    def _reply_text(cls, value: Any) -> Any:
        if missing_cell(value) and not isinstance(value, str):
            return ""
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value


def _prediction_row(raw: _RawRecord) -> _RawRecord:
    """A raw record as ``{"id", "prediction"}``, or the error that makes it none."""
    if raw_problem(raw) is not None or not isinstance(raw, Mapping):
        return raw
    if _undecodable(raw):
        return UndecodableLine("not UTF-8 text", "", 0)
    return {"id": _prediction_id(raw), "prediction": _prediction_text(raw)}


def read_predictions(path: str | Path) -> tuple[dict[str, str], list[SkippedRecord]]:
    """``question_id -> raw reply`` from a JSONL or JSON list (``question_id`` + ``prediction``;
    VLMEvalKit's ``.json``; lmms-eval's ``--log_samples`` file) or a TSV with those two columns
    (VLMEvalKit's ``.tsv``) or an ``.xlsx`` sheet (VLMEvalKit's default), and what was skipped
    (``schema.read_predictions_lenient``): a record without an id, an id given again (the first
    is kept), a reply that is not text, a record that is not UTF-8 text or not JSON, each named.
    An empty or missing reply is ``""``. A file that cannot be read at all, or whose header
    lacks the columns, raises ``PredictionError``."""
    file = Path(path)
    if not file.is_file():
        raise PredictionError("no such predictions file", path=file)
    suffix = file.suffix.lower()
    if suffix in (".tsv", ".txt"):
        records: list[tuple[str, _RawRecord]] = _tsv_records(file)
    elif suffix in (".jsonl", ".json"):
        records = _json_records(file)
    elif suffix == ".xlsx":
        records = _xlsx_records(file)
    else:
        raise PredictionError("unknown predictions format: use .jsonl, .json, .tsv or .xlsx",
                              path=file)
    rows, skipped = read_predictions_lenient(
        file, PredictionRow, [(name, _prediction_row(raw)) for name, raw in records]
    )
    return {r.id: r.prediction for r in rows}, skipped
