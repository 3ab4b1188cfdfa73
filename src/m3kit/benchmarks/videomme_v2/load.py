"""Video-MME-v2's released files as m3kit ``Question``s, in validated groups of four.

Layout (a folder, or its table file given directly)::

    test.parquet            # or test.jsonl / test.tsv: the same columns
    videos/<video_id>.mp4
    subtitles/<video_id>.jsonl

Columns: ``video_id`` ("001"), ``question_id`` ("001-1" ... "001-4"), ``question``, ``options``
(one string, lines ``A. ...`` to ``H. ...``; a list of such strings is accepted too), ``answer``
(A-H), ``group_type`` (``relevance`` | ``logic``), ``group_structure`` (``"[1, 2, 3, 4]"``,
``"[1, [2, 3], 4]"``, ``"[[1, 2], 3, 4]"``), ``level`` (1-3), ``second_head``, ``third_head``.

A group is the four questions of one ``video_id``, ordered by the question id's suffix (never by
row position, so shuffled rows score the same). ``level`` and the heads may be set on only one
question of the group (the released data sets them on the last): the group takes them from
whichever question carries them. A group with fewer or more than four questions, a duplicate
id, an unknown structure, conflicting labels, a malformed row, or a ``video_id`` that is not a
plain file name (``..``, a ``/``, a NUL byte) or whose video or subtitle file leaves the folder
through a symbolic link, to the file or to ``videos/`` / ``subtitles/`` themselves
(``m3kit.paths.resolve_in_root``: the folder must hold its media) is skipped as a whole and
reported (``VideoMMEv2Set.skipped``), so no question is ever scored in a shifted group. In
``test.jsonl`` a line that is not JSON (or not UTF-8) is one malformed row: reported, its group
skipped, the table read on.

Predictions files are read by ``predictions.py``.
"""

from __future__ import annotations

import csv
import math
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from m3kit.errors import M3kitError, SchemaError, UnsafePathError
from m3kit.metrics.groups import GROUP_SIZE, GroupStructure, GroupType, parse_group_structure
from m3kit.paths import relative_data_path, resolve_in_root
from m3kit.schema import (
    Choice,
    Question,
    QuestionGroup,
    VideoRef,
    iter_json_records,
    raw_problem,
)

__all__ = [
    "BENCHMARK_NAME",
    "TABLE_NAMES",
    "GroupInfo",
    "VideoMMEv2Error",
    "VideoMMEv2Set",
    "data_files",
    "data_media",
    "find_table",
    "load_videomme_v2",
    "media_files",
    "missing_cell",
    "read_table",
    "subtitle_path",
    "video_path",
]

BENCHMARK_NAME = "videomme_v2"
TABLE_NAMES = ("test.parquet", "test.jsonl", "test.tsv")
_OPTION_LINE = re.compile(r"^\s*([A-H])\s*[.)．:]\s*(.*)$", re.DOTALL)
_QUESTION_ID = re.compile(r"^(.+)-(\d+)$")


class VideoMMEv2Error(SchemaError):
    """The Video-MME-v2 table, one of its rows or one of its groups is unusable."""


def missing_cell(value: Any) -> bool:
    """Whether a table cell (or a predictions record's field) holds nothing: ``None``, NaN,
    blank, or the text ``None`` / ``nan`` a spreadsheet writes for an empty cell."""
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    return isinstance(value, str) and value.strip() in ("", "None", "nan", "NaN")


class _Row(BaseModel):
    """One released row, types checked (labels that may be absent are ``None``)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    video_id: str = Field(min_length=1)
    question_id: str = Field(min_length=1)
    question: str
    options: list[str]
    answer: str = Field(pattern=r"^[A-H]$")
    group_type: GroupType
    group_structure: str | None = None
    level: int | None = Field(default=None, ge=1, le=3)
    second_head: str | None = None
    third_head: str | None = None

    @field_validator("video_id", "question_id", mode="before")
    @classmethod
    def _ids_as_text(cls, value: Any) -> Any:
        return str(value).strip() if isinstance(value, int | str) else value

    @field_validator("answer", "group_type", mode="before")
    @classmethod
    def _strip(cls, value: Any) -> Any:
        return value.strip() if isinstance(value, str) else value

    @field_validator("options", mode="before")
    @classmethod
    def _option_lines(cls, value: Any) -> Any:
        if hasattr(value, "tolist"):
            value = value.tolist()
        if isinstance(value, str):
            return [line for line in value.splitlines() if line.strip()]
        return value

    @field_validator("group_structure", "second_head", "third_head", mode="before")
    @classmethod
    def _optional_text(cls, value: Any) -> Any:
        if hasattr(value, "tolist"):
            value = str(value.tolist())
        return None if missing_cell(value) else str(value).strip()

    @field_validator("level", mode="before")
    @classmethod
    def _optional_level(cls, value: Any) -> Any:
        if missing_cell(value):
            return None
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            return int(float(text)) if re.fullmatch(r"\d+(\.0+)?", text) else text
        return value


class GroupInfo(BaseModel):
    """One validated group: its questions in order and the labels it is scored under."""

    model_config = ConfigDict(frozen=True)

    id: str
    type: GroupType
    structure: GroupStructure | None  # None for relevance groups, whose layout does not matter
    level: int | None
    second_head: str | None
    third_head: str | None
    question_ids: tuple[str, ...]


class VideoMMEv2Set(BaseModel):
    """A loaded Video-MME-v2 table: questions (group by group, Q1-Q4), their groups, where the
    media are, and what was skipped and why."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    table: Path
    root: Path
    questions: list[Question]
    groups: list[GroupInfo]
    skipped: list[M3kitError] = Field(default_factory=list)
    skipped_question_ids: list[str] = Field(default_factory=list)


def find_table(data: str | Path) -> Path:
    """The table file of ``data``: the file itself, or ``test.parquet`` / ``test.jsonl`` /
    ``test.tsv`` inside a folder."""
    path = Path(data)
    if path.is_file():
        return path
    if path.is_dir():
        for name in TABLE_NAMES:
            if (path / name).is_file():
                return path / name
        raise VideoMMEv2Error(f"no {' / '.join(TABLE_NAMES)} in this folder", path=path)
    raise VideoMMEv2Error("no such file or folder", path=path)


def data_files(data: str | Path) -> list[Path]:
    """The file the questions are read from (the table ``find_table`` finds): the data set's
    fingerprint (``m3kit.harness.card.data_fingerprint``) is taken over it and ``media_files``."""
    return [find_table(data)]


def media_files(data: VideoMMEv2Set) -> list[Path]:
    """The files the samples of ``data`` read besides the table, group by group: its video,
    then its subtitle file (named even where it is not there: subtitles added later change
    the fingerprint)."""
    return [made(data.root, group.id) for group in data.groups
            for made in (video_path, subtitle_path)]


def data_media(data: str | Path) -> list[Path]:
    """``media_files`` of the data at ``data`` (``m3kit score``'s card)."""
    return media_files(load_videomme_v2(data))


def read_table(path: str | Path) -> list[dict[str, Any] | VideoMMEv2Error]:
    """The rows of a ``.parquet``, ``.jsonl`` or ``.tsv`` table as plain dicts; a JSON Lines line
    that is not a JSON object (or not UTF-8) comes as the ``VideoMMEv2Error`` naming it, so the
    loader reports that row and reads on."""
    file = Path(path)
    suffix = file.suffix.lower()
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq

            return pq.read_table(file).to_pylist()
        if suffix in (".jsonl", ".json"):
            return [_table_line(file, record, raw) for record, raw in
                    iter_json_records(file, lines=True, id_keys=("question_id",))]
        if suffix in (".tsv", ".txt"):
            with file.open(encoding="utf-8", newline="") as handle:
                return list(csv.DictReader(handle, delimiter="\t"))
    except M3kitError:
        raise
    except (OSError, ValueError) as exc:  # pyarrow's errors are ValueError / OSError
        raise VideoMMEv2Error(f"cannot read the table: {exc}", path=file) from None
    raise VideoMMEv2Error("unknown table format: use .parquet, .jsonl or .tsv", path=file)


def _table_line(file: Path, record: str, raw: Any) -> dict[str, Any] | VideoMMEv2Error:
    problem = raw_problem(raw)
    if problem is None and not isinstance(raw, dict):
        problem = "not a JSON object"
    if problem is not None:
        return VideoMMEv2Error(f"row skipped: {problem}", path=file, record=record)
    return raw


def video_path(root: str | Path, video_id: str) -> Path:
    return Path(root) / "videos" / f"{video_id}.mp4"


def subtitle_path(root: str | Path, video_id: str) -> Path:
    return Path(root) / "subtitles" / f"{video_id}.jsonl"


def _check_media_paths(root: Path, video_id: str, table: Path) -> None:
    """Refuse a ``video_id`` that is no plain file name, or whose video or subtitle file
    leaves the data folder through a symbolic link (to the file or to a folder on the way)."""
    where = f"group {video_id}"
    relative_data_path(video_id, path=table, record=where, field="video_id")
    if "/" in video_id or "\\" in video_id:
        raise UnsafePathError(f"video_id {video_id!r} is not a plain file name", path=table,
                              record=where, field="video_id")
    for made in (video_path, subtitle_path):
        resolve_in_root(root, made(".", video_id).as_posix(), path=table, record=where,
                        field="video_id")


def _choices(row: _Row, table: Path) -> list[Choice]:
    choices = []
    for n, line in enumerate(row.options):
        match = _OPTION_LINE.match(line)
        expected = chr(ord("A") + n)
        if match is None or match.group(1) != expected:
            raise VideoMMEv2Error(
                f"option line {n + 1} should start with {expected!r}: {line[:40]!r}",
                path=table, record=row.question_id, field="options",
            )
        choices.append(Choice(letter=expected, text=match.group(2).strip()))
    if len(choices) < 2:
        raise VideoMMEv2Error("fewer than two options", path=table, record=row.question_id,
                              field="options")
    return choices


def _position(row: _Row, table: Path) -> int:
    match = _QUESTION_ID.match(row.question_id)
    if match is None:
        raise VideoMMEv2Error("question_id is not <video_id>-<n>", path=table,
                              record=row.question_id, field="question_id")
    prefix, number = match.groups()
    same = prefix == row.video_id or (
        prefix.isdigit() and row.video_id.isdigit() and int(prefix) == int(row.video_id)
    )
    if not same:
        raise VideoMMEv2Error(f"question_id does not belong to video_id {row.video_id!r}",
                              path=table, record=row.question_id, field="question_id")
    position = int(number)
    if not 1 <= position <= GROUP_SIZE:
        raise VideoMMEv2Error(f"question number {position} is outside 1-{GROUP_SIZE}",
                              path=table, record=row.question_id, field="question_id")
    return position


def _one_label(rows: list[_Row], name: str, table: Path, group: str) -> Any:
    """The value of ``name`` that the group's questions carry (at most one distinct value)."""
    values = {getattr(r, name) for r in rows} - {None}
    if len(values) > 1:
        shown = ", ".join(sorted(map(str, values)))
        raise VideoMMEv2Error(f"the group's questions disagree on {name}: {shown}", path=table,
                              record=f"group {group}", field=name)
    return next(iter(values), None)


def _group(video_id: str, rows: list[_Row], table: Path, root: Path) -> tuple[
    GroupInfo, list[Question]
]:
    where = f"group {video_id}"
    positions: dict[int, _Row] = {}
    for row in rows:
        position = _position(row, table)
        if position in positions:
            raise VideoMMEv2Error(f"question {row.question_id} appears twice", path=table,
                                  record=where, field="question_id")
        positions[position] = row
    if sorted(positions) != list(range(1, GROUP_SIZE + 1)):
        have = ", ".join(r.question_id for r in rows)
        raise VideoMMEv2Error(
            f"a group has questions 1-{GROUP_SIZE}, this one has {len(rows)}: {have}",
            path=table, record=where, field="question_id",
        )
    ordered = [positions[p] for p in range(1, GROUP_SIZE + 1)]
    group_type = _one_label(ordered, "group_type", table, video_id)
    raw_structure = _one_label(ordered, "group_structure", table, video_id)
    structure: GroupStructure | None = None
    if group_type is GroupType.LOGIC:
        if raw_structure is None:
            raise VideoMMEv2Error("a logic group needs a group_structure", path=table,
                                  record=where, field="group_structure")
        try:
            structure = parse_group_structure(raw_structure)
        except ValueError as exc:
            raise VideoMMEv2Error(str(exc), path=table, record=where,
                                  field="group_structure") from None
    info = GroupInfo(
        id=video_id, type=group_type, structure=structure,
        level=_one_label(ordered, "level", table, video_id),
        second_head=_one_label(ordered, "second_head", table, video_id),
        third_head=_one_label(ordered, "third_head", table, video_id),
        question_ids=tuple(r.question_id for r in ordered),
    )
    questions = [_question(row, n, info, table, root) for n, row in enumerate(ordered, start=1)]
    return info, questions


def _question(row: _Row, position: int, info: GroupInfo, table: Path, root: Path) -> Question:
    choices = _choices(row, table)
    if row.answer not in {c.letter for c in choices}:
        raise VideoMMEv2Error(f"answer {row.answer!r} is not an option letter", path=table,
                              record=row.question_id, field="answer")
    return Question(
        id=row.question_id,
        benchmark=BENCHMARK_NAME,
        text=row.question.strip(),
        choices=choices,
        answer=row.answer,
        question_type=info.type.value,
        media=[VideoRef(path=str(video_path(root, info.id).relative_to(root)))],
        group=QuestionGroup(
            id=info.id, position=position, size=GROUP_SIZE, type=info.type.value,
            structure=info.structure.value if info.structure else row.group_structure,
        ),
        metadata={
            "video_id": info.id,
            "level": info.level,
            "second_head": info.second_head,
            "third_head": info.third_head,
            "options_text": "\n".join(row.options),
            "memory_key": info.id,
        },
    )


def _group_skipped(video_id: str, question_ids: list[str], error: M3kitError) -> VideoMMEv2Error:
    """``error`` restated as what it cost: the whole group, named with its question ids."""
    ids = sorted(question_ids, key=_id_order)
    span = f"{ids[0]}…{ids[-1]}" if len(ids) > 1 else (ids[0] if ids else "none readable")
    return VideoMMEv2Error(
        f"group {video_id} skipped: {len(ids)} question(s) ({span}): {error.reason}",
        path=error.path, record=error.record, field=error.field,
    )


def _id_order(question_id: str) -> tuple[str, int, str]:
    match = _QUESTION_ID.match(question_id)
    return (match.group(1), int(match.group(2)), "") if match else (question_id, 0, question_id)


def _validation_error(table: Path, record: str, exc: ValidationError) -> VideoMMEv2Error:
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    return VideoMMEv2Error(first["msg"], path=table, record=record, field=field)


def load_videomme_v2(data: str | Path) -> VideoMMEv2Set:
    """Load a Video-MME-v2 folder or table. Bad rows and bad groups are skipped, each with a
    typed error in ``skipped``; an unreadable table raises."""
    table = find_table(data)
    root = table.parent
    raw_rows = read_table(table)
    skipped: list[M3kitError] = []
    skipped_ids: list[str] = []
    by_video: dict[str, list[_Row]] = defaultdict(list)
    bad_videos: dict[str, list[str]] = defaultdict(list)  # video -> its malformed rows
    for number, raw in enumerate(raw_rows, start=1):
        if isinstance(raw, VideoMMEv2Error):  # a line that is no row at all; its group is
            skipped.append(raw)               # found incomplete below and skipped whole
            continue
        record = str(raw.get("question_id") or f"row {number}")
        try:
            row = _Row.model_validate(raw)
        except ValidationError as exc:
            skipped.append(_validation_error(table, record, exc))
            if not missing_cell(raw.get("question_id")):
                skipped_ids.append(str(raw["question_id"]).strip())
            video = raw.get("video_id")
            if not missing_cell(video):  # its group is incomplete now: skip it whole
                bad_videos[str(video).strip()].append(record)
            continue
        by_video[row.video_id].append(row)
    groups: list[GroupInfo] = []
    questions: list[Question] = []
    for video_id in sorted(by_video):
        rows = by_video[video_id]
        ids = [r.question_id for r in rows]
        if video_id in bad_videos:
            skipped_ids += ids
            bad = bad_videos[video_id]
            skipped.append(_group_skipped(video_id, ids + bad, VideoMMEv2Error(
                f"row(s) {', '.join(bad)} malformed (reported above)", path=table,
                record=f"group {video_id}",
            )))
            continue
        try:
            _check_media_paths(root, video_id, table)
            info, members = _group(video_id, rows, table, root)
        except VideoMMEv2Error as exc:
            skipped.append(_group_skipped(video_id, ids, exc))
            skipped_ids += ids
            continue
        except ValidationError as exc:
            error = _validation_error(table, f"group {video_id}", exc)
            skipped.append(_group_skipped(video_id, ids, error))
            skipped_ids += ids
            continue
        except UnsafePathError as exc:
            skipped.append(_group_skipped(video_id, ids, exc))
            skipped_ids += ids
            continue
        groups.append(info)
        questions += members
    return VideoMMEv2Set(table=table, root=root, questions=questions, groups=groups,
                         skipped=skipped, skipped_question_ids=skipped_ids)
