"""The human review file of a built M3Eval-style benchmark: ``<root>/review/review.csv`` (+ HTML).

Generated items pass the deterministic design checker before they reach this file; a person then
reads each one and sets its ``status`` to ``accepted``, ``rejected`` or leaves it ``pending``.
The loader (``load.load_m3eval``) calls :func:`read_review` and honours the statuses, so editing
one CSV column is all a reviewer does. The HTML page is a read-only view of the same rows.

Writing is idempotent: re-writing the file after a new generation run keeps every status a
reviewer has already set (the reviewer's word wins over the generator's default). Rows the
generator itself rejected (``checker`` is not ``ok``) are the generator's, not a reviewer's: they
always show this run's verdict, and an old one the new run no longer produces is dropped, so the
file's rejected rows are exactly what the run reports.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text

__all__ = [
    "REVIEW_COLUMNS",
    "REVIEW_STATUSES",
    "ReviewItem",
    "ReviewStatus",
    "read_review",
    "read_review_items",
    "review_paths",
    "set_status",
    "write_review",
]

ReviewStatus = Literal["accepted", "rejected", "pending"]
REVIEW_STATUSES: tuple[ReviewStatus, ...] = ("accepted", "rejected", "pending")
REVIEW_COLUMNS: tuple[str, ...] = (
    "id",
    "status",
    "paradigm",
    "failure_mode",
    "video",
    "question",
    "options",
    "answer",
    "roles",
    "checker",
    "note",
)


class ReviewItem(BaseModel):
    """One row of the review file: enough of the item to judge it without opening the JSON."""

    id: str
    status: ReviewStatus = "pending"
    paradigm: str = ""
    failure_mode: str = ""
    video: str = ""
    question: str = ""
    options: list[str] = Field(default_factory=list)
    answer: str = ""
    # letter -> role, e.g. {"A": "correct", "B": "intrusion", ...}; empty where no roles apply.
    roles: dict[str, str] = Field(default_factory=dict)
    # what the design checker said: "ok" or its reasons joined by "; ".
    checker: str = "ok"
    note: str = ""


def review_paths(root: str | Path) -> tuple[Path, Path]:
    """Where the review CSV and HTML of a benchmark root live."""
    base = Path(root) / "review"
    return base / "review.csv", base / "review.html"


def read_review(path: str | Path) -> dict[str, str]:
    """Map item id -> ``accepted|rejected|pending`` from a review CSV.

    A missing file means nothing has been reviewed: an empty map. A row whose status is not one
    of the three values raises ``SchemaError`` naming file, row and field, because silently
    treating a typo as "pending" (or "accepted") would change what gets evaluated.
    """
    return {item.id: item.status for item in read_review_items(path)}


def read_review_items(path: str | Path) -> list[ReviewItem]:
    """Every row of a review CSV as a ``ReviewItem`` (empty when the file does not exist)."""
    path = Path(path)
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SchemaError(f"cannot read review file: {exc}", path=path) from exc
    # A file object, not split lines: quoted fields (the options) hold newlines.
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if reader.fieldnames is None or "id" not in reader.fieldnames:
        raise SchemaError("review file has no 'id' column", path=path, field="id")
    if "status" not in reader.fieldnames:
        raise SchemaError("review file has no 'status' column", path=path, field="status")
    items: list[ReviewItem] = []
    for row_no, row in enumerate(reader, start=2):  # row 1 is the header
        item_id = (row.get("id") or "").strip()
        if not item_id:
            continue
        status = (row.get("status") or "").strip().lower() or "pending"
        if status not in REVIEW_STATUSES:
            raise SchemaError(
                f"status {status!r} is not one of {', '.join(REVIEW_STATUSES)}",
                path=path,
                record=f"{item_id} (row {row_no})",
                field="status",
            )
        items.append(
            ReviewItem(
                id=item_id,
                status=status,
                paradigm=row.get("paradigm") or "",
                failure_mode=row.get("failure_mode") or "",
                video=row.get("video") or "",
                question=row.get("question") or "",
                options=_split_lines(row.get("options") or ""),
                answer=row.get("answer") or "",
                roles=_parse_roles(row.get("roles") or ""),
                checker=row.get("checker") or "ok",
                note=row.get("note") or "",
            )
        )
    return items


def write_review(root: str | Path, items: Iterable[ReviewItem]) -> tuple[Path, Path]:
    """Write ``review/review.csv`` and ``review/review.html`` under ``root``; return both paths.

    Statuses (and notes) a reviewer set in an existing CSV are kept for ids that appear again
    and pass the checker; the generator's own rejections follow this run (module doc).
    """
    csv_path, html_path = review_paths(root)
    previous = {item.id: item for item in read_review_items(csv_path)}
    merged: list[ReviewItem] = []
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            continue
        seen.add(item.id)
        old = previous.get(item.id)
        if old is not None:
            # A reviewer's status only applies to an item that passed the checker, now and then.
            keep = _generated_ok(item) and not _generator_rejected(old)
            status = old.status if keep else item.status
            note = (old.note or item.note) if keep else (item.note or old.note)
            item = item.model_copy(update={"status": status, "note": note})
        merged.append(item)
    # Rows a reviewer already judged but the new run did not produce stay in the file; the
    # generator's old rejections do not (this run did not repeat them).
    merged.extend(old for key, old in previous.items()
                  if key not in seen and not _generator_rejected(old))
    _write_csv(csv_path, merged)
    _write_html(html_path, merged)
    return csv_path, html_path


def _generated_ok(item: ReviewItem) -> bool:
    return item.checker.strip() == "ok"


def _generator_rejected(item: ReviewItem) -> bool:
    """A row the generator rejected (checker reasons), not one a reviewer set."""
    return item.status == "rejected" and not _generated_ok(item)


def set_status(root: str | Path, statuses: dict[str, str]) -> int:
    """Set the status of the given ids in the review file; return how many rows changed."""
    csv_path, _ = review_paths(root)
    items = read_review_items(csv_path)
    changed = 0
    for idx, item in enumerate(items):
        new = statuses.get(item.id)
        if new is None:
            continue
        if new not in REVIEW_STATUSES:
            raise SchemaError(
                f"status {new!r} is not one of {', '.join(REVIEW_STATUSES)}",
                path=csv_path,
                record=item.id,
                field="status",
            )
        if new != item.status:
            items[idx] = item.model_copy(update={"status": new})
            changed += 1
    unknown = sorted(set(statuses) - {item.id for item in items})
    if unknown:
        raise SchemaError(f"no such item(s): {', '.join(unknown)}", path=csv_path, field="id")
    _write_csv(csv_path, items)
    _write_html(csv_path.with_suffix(".html"), items)
    return changed


def _split_lines(value: str) -> list[str]:
    return [line for line in value.splitlines() if line.strip()]


def _parse_roles(value: str) -> dict[str, str]:
    roles: dict[str, str] = {}
    for part in value.split(";"):
        if "=" in part:
            letter, role = part.split("=", 1)
            roles[letter.strip()] = role.strip()
    return roles


def _row(item: ReviewItem) -> dict[str, str]:
    return {
        "id": item.id,
        "status": item.status,
        "paradigm": item.paradigm,
        "failure_mode": item.failure_mode,
        "video": item.video,
        "question": item.question,
        "options": "\n".join(item.options),
        "answer": item.answer,
        "roles": ";".join(f"{k}={v}" for k, v in item.roles.items()),
        "checker": item.checker,
        "note": item.note,
    }


def _write_csv(path: Path, items: Sequence[ReviewItem]) -> None:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(REVIEW_COLUMNS), lineterminator="\n")
    writer.writeheader()
    for item in items:
        writer.writerow(_row(item))
    atomic_write_text(path, buf.getvalue())


_STATUS_COLOUR = {"accepted": "#d9f2d9", "rejected": "#f8d7da", "pending": "#fff3cd"}


def _write_html(path: Path, items: Sequence[ReviewItem]) -> None:
    counts = {s: sum(1 for i in items if i.status == s) for s in REVIEW_STATUSES}
    rows = []
    for item in items:
        opts = "<br>".join(html.escape(o) for o in item.options)
        roles = "<br>".join(html.escape(f"{k}: {v}") for k, v in item.roles.items())
        rows.append(
            f'<tr style="background:{_STATUS_COLOUR[item.status]}">'
            f"<td>{html.escape(item.id)}</td><td>{item.status}</td>"
            f"<td>{html.escape(item.paradigm)}<br>{html.escape(item.failure_mode)}</td>"
            f"<td>{html.escape(item.video)}</td><td>{html.escape(item.question)}</td>"
            f"<td>{opts}</td><td>{html.escape(item.answer)}</td><td>{roles}</td>"
            f"<td>{html.escape(item.checker)}</td><td>{html.escape(item.note)}</td></tr>"
        )
    summary = ", ".join(f"{counts[s]} {s}" for s in REVIEW_STATUSES)
    header = "".join(f"<th>{c}</th>" for c in REVIEW_COLUMNS)
    page = (
        "<!doctype html><html><head><meta charset='utf-8'><title>M3Eval review</title>"
        "<style>body{font-family:sans-serif}table{border-collapse:collapse}"
        "td,th{border:1px solid #999;padding:4px;vertical-align:top;font-size:13px}</style>"
        "</head><body><h1>M3Eval review</h1>"
        f"<p>{len(items)} items: {summary}. Edit the <code>status</code> column of "
        "<code>review.csv</code> (accepted / rejected / pending); this page is a view.</p>"
        f"<table><tr>{header}</tr>{''.join(rows)}</table></body></html>\n"
    )
    atomic_write_text(path, page)
