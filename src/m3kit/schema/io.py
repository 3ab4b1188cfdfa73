"""Reading and writing schema records as JSON Lines or as a JSON list.

Bad input raises ``SchemaError`` naming the file, the record and the field. The ``*_lenient``
readers return the good records together with one ``SchemaError`` per bad record, so a run
can skip what it cannot use and report it.

Records are named as follows: in JSON Lines by their 1-based line number (plus the record's
``id`` when it has one), in a JSON list by their ``id`` or, without one, their 0-based index.

JSON Lines are read line by line, so one line that is not UTF-8 text or not JSON costs that
line only. ``read_predictions_lenient`` is the one reader of external predictions files behind
every ``m3kit score`` verb: a bad line, a record that does not validate and an id given again
are skipped and named, the rest is scored.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from m3kit.errors import SchemaError
from m3kit.files import atomic_file
from m3kit.schema.skipped import SkippedRecord

__all__ = [
    "UndecodableLine",
    "iter_json_records",
    "raw_problem",
    "read_json_lines",
    "read_json_records",
    "read_json_records_lenient",
    "read_jsonl",
    "read_jsonl_lenient",
    "read_predictions_lenient",
    "write_jsonl",
]

M = TypeVar("M", bound=BaseModel)


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Parse every non-blank line of a JSON Lines file as ``model``; raise on the first bad one."""
    return [_validate(path, record, raw, model) for record, raw in _jsonl_lines(path)]


def read_jsonl_lenient(path: str | Path, model: type[M]) -> tuple[list[M], list[SchemaError]]:
    """Like ``read_jsonl`` but collect bad records as errors instead of raising.

    An unreadable file still raises: there is no record to skip.
    """
    return _collect(path, _jsonl_lines(path), model)


def read_json_records(path: str | Path, model: type[M]) -> list[M]:
    """Parse a file holding a JSON list of records as ``model``; raise on the first bad one."""
    return [_validate(path, record, raw, model) for record, raw in _json_list(path)]


def read_json_records_lenient(
    path: str | Path, model: type[M]
) -> tuple[list[M], list[SchemaError]]:
    """Like ``read_json_records`` but collect bad records as errors instead of raising."""
    return _collect(path, _json_list(path), model)


def write_jsonl(path: str | Path, records: Iterable[BaseModel]) -> int:
    """Write one record per line and return how many were written.

    The file is written next to its destination and moved into place, so a reader never sees
    a half-written file; missing parent directories are created.
    """
    count = 0
    with atomic_file(path, "w") as fh:
        for rec in records:
            fh.write(rec.model_dump_json())
            fh.write("\n")
            count += 1
    return count


class UndecodableLine(json.JSONDecodeError):
    """A JSON Lines line that is not UTF-8 text: reported, like a line that is not JSON, by the
    reader that meets it, and the lines after it are still read."""


# A raw record: the value parsed from JSON, or the JSON error that stopped parsing it.
_Raw = Any | json.JSONDecodeError


def read_json_lines(
    path: str | Path, error: type[SchemaError] = SchemaError
) -> list[tuple[int, dict[str, Any]]]:
    """Every non-blank line of a JSON Lines file as ``(line number, object)``, strictly: the
    first line that is not a JSON object raises ``error`` naming the file and the line."""
    out: list[tuple[int, dict[str, Any]]] = []
    try:
        text = _read_text(path)
    except SchemaError as exc:
        raise error(exc.reason, path=path) from None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"not JSON: {exc.msg}", path=path, record=lineno) from None
        if not isinstance(raw, dict):
            raise error("not a JSON object", path=path, record=lineno)
        out.append((lineno, raw))
    return out


def _read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise SchemaError("file not found", path=path) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read file: {exc}", path=path) from exc


def _read_bytes(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise SchemaError("file not found", path=path) from exc
    except OSError as exc:
        raise SchemaError(f"cannot read file: {exc}", path=path) from exc


def _text_lines(path: str | Path) -> Iterator[tuple[int, str | UndecodableLine]]:
    """``(line number, text)`` per line of a file, split at ``\\n`` (JSON Lines' separator;
    a ``\\r`` before it and a UTF-8 byte-order mark are dropped); a line that is not UTF-8
    comes as an ``UndecodableLine``."""
    data = _read_bytes(path).removeprefix(b"\xef\xbb\xbf")
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        try:
            yield lineno, raw.removesuffix(b"\r").decode("utf-8")
        except UnicodeDecodeError as exc:
            yield lineno, UndecodableLine(f"not UTF-8 text (byte {exc.start + 1} of the line)",
                                          "", 0)


def iter_json_records(
    path: str | Path, *, lines: bool | None = None, id_keys: Sequence[str] = ("id",)
) -> Iterator[tuple[str, _Raw]]:
    """``(record name, raw value)`` per record of a JSON list, or of JSON Lines (``lines``;
    by default when the file ends in ``.jsonl``). A line that is not JSON (or not UTF-8 text:
    ``UndecodableLine``) comes as its ``JSONDecodeError`` so a lenient reader can report it and
    go on (``raw_problem`` words it); a JSON list that does not parse, or is not a list, raises
    ``SchemaError``. Records are named by the first of ``id_keys`` they carry (``"3 (id q7)"``
    for a line, ``"q7"`` in a list), else their line number or index."""
    if lines if lines is not None else Path(path).suffix == ".jsonl":
        for lineno, line in _text_lines(path):
            if isinstance(line, UndecodableLine):
                yield str(lineno), line
                continue
            if not line.strip():
                continue  # blank lines (a trailing newline, hand-edited files) are not records
            try:
                raw = json.loads(line)
            except json.JSONDecodeError as exc:
                yield str(lineno), exc
                continue
            rid = _record_id(raw, id_keys)
            yield (f"{lineno} (id {rid})" if rid is not None else str(lineno)), raw
        return
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SchemaError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", path=path
        ) from exc
    if not isinstance(data, list):
        raise SchemaError(f"expected a JSON list of records, got {type(data).__name__}", path=path)
    for index, raw in enumerate(data):
        yield _record_id(raw, id_keys) or str(index), raw


def _jsonl_lines(path: str | Path) -> Iterable[tuple[str, _Raw]]:
    return iter_json_records(path, lines=True)


def _json_list(path: str | Path) -> Iterable[tuple[str, _Raw]]:
    return iter_json_records(path, lines=False)


def _record_id(raw: Any, id_keys: Sequence[str] = ("id",)) -> str | None:
    if not isinstance(raw, dict):
        return None
    for key in id_keys:
        rid = raw.get(key)
        if isinstance(rid, str | int) and str(rid):
            return str(rid)
    return None


def raw_problem(raw: _Raw) -> str | None:
    """Why a raw record from ``iter_json_records`` is no record at all (a line that is not
    UTF-8 text, or not JSON), or ``None`` when it parsed."""
    if isinstance(raw, UndecodableLine):
        return raw.msg
    if isinstance(raw, json.JSONDecodeError):
        return f"invalid JSON: {raw.msg} (column {raw.colno})"
    return None


def _validate(path: str | Path, record: str | int, raw: _Raw, model: type[M]) -> M:
    problem = raw_problem(raw)
    if problem is not None:
        raise SchemaError(problem, path=path, record=record)
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise _schema_error(path, record, exc) from exc


def _schema_error(path: str | Path, record: str | int, exc: ValidationError) -> SchemaError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    # Our validators raise ValueError; show its message without pydantic's "Value error, ".
    ctx_error = first.get("ctx", {}).get("error")
    reason = str(ctx_error) if first["type"] == "value_error" and ctx_error else first["msg"]
    if len(errors) > 1:
        reason += f" (+{len(errors) - 1} more in this record)"
    return SchemaError(reason, path=path, record=record, field=field)


def _collect(
    path: str | Path, raws: Iterable[tuple[str | int, _Raw]], model: type[M]
) -> tuple[list[M], list[SchemaError]]:
    good: list[M] = []
    bad: list[SchemaError] = []
    for record, raw in raws:
        try:
            good.append(_validate(path, record, raw, model))
        except SchemaError as err:
            bad.append(err)
    return good, bad


P = TypeVar("P", bound=BaseModel)


def read_predictions_lenient(
    path: str | Path,
    model: type[P],
    records: Iterable[tuple[str, _Raw]] | None = None,
    *,
    id_keys: Sequence[str] = ("id",),
) -> tuple[list[P], list[SkippedRecord]]:
    """The records of a predictions file as ``model`` (which has an ``id``), and one
    ``SkippedRecord`` per record left out: a line that is not UTF-8 text or not JSON, a record
    that does not validate, an id given again (the first one is kept). ``records`` are the
    file's raw records when they are not JSON Lines (a TSV, a sheet, a JSON list), named as
    ``iter_json_records`` names them. A file that cannot be read at all raises ``SchemaError``.
    """
    raws = records if records is not None else iter_json_records(path, lines=True,
                                                                 id_keys=id_keys)
    good: list[P] = []
    skipped: list[SkippedRecord] = []
    seen: set[str] = set()
    for record, raw in raws:
        try:
            item = _validate(path, record, raw, model)
        except SchemaError as err:
            skipped.append(SkippedRecord.from_error(err))
            continue
        # every prediction model has an ``id``; P's bound (BaseModel) cannot say so
        rid = str(item.id)  # type: ignore[attr-defined]
        if rid in seen:
            skipped.append(SkippedRecord.at(path, record, f"id {rid!r} given again: the first "
                                            "prediction is kept", "id"))
            continue
        seen.add(rid)
        good.append(item)
    return good, skipped
