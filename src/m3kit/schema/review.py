"""Human review of what m3kit's builders produce, as records: the item a reviewer reads, the
decision they take, and the protocol each builder's output implements to be reviewed and
exported (``m3kit review DIR``; seed 003 §3.4 and appendix F: "human review" of every generated
QA pair; seed 000 appendix C and seed 002 §2.2 describe the same step for their builders).

A builder's output folder becomes a ``ReviewSource`` (``m3kit.review.sources`` finds which one):
it lists ``ReviewItem``\\ s (the question, its options with their roles, the media to look at,
at the time the evidence lies, the generator's own checks with their rationales) and exports the
items a reviewer kept, with their edits, in the benchmark's released layout. The app stores a
``ReviewDecision`` per item beside the data (``REVIEW_DIR``), never in the generated files.

Paths in ``ReviewMedia`` are relative to the source's root: the app serves them from there
and from nowhere else.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from m3kit.schema.skipped import SkippedRecord

__all__ = [
    "EXPORT_RECORD",
    "REVIEW_DIR",
    "REVIEW_VERDICTS",
    "ExportResult",
    "ItemEdit",
    "ReviewCheck",
    "ReviewDecision",
    "ReviewItem",
    "ReviewMedia",
    "ReviewOption",
    "ReviewSource",
    "ReviewVerdict",
    "item_fingerprint",
    "verdict_of",
]

# The folder beside a builder's data where reviews are kept (decisions, their history, the
# default export): one name for every builder.
REVIEW_DIR = "review"
# The file an export writes last, holding its ``ExportResult``: a folder that has it is an
# earlier export, which the next one may replace (``m3kit.files.folder_replaced``).
EXPORT_RECORD = "review_export.json"

ReviewVerdict = Literal["accepted", "rejected", "pending"]
REVIEW_VERDICTS: tuple[ReviewVerdict, ...] = ("accepted", "rejected", "pending")
MediaKind = Literal["video", "image", "pdf_page"]

_RECORD = ConfigDict(extra="forbid", frozen=True)


class ReviewMedia(BaseModel):
    """One thing to look at: a video from ``start`` to ``end`` seconds of its file (the player
    jumps there), an image, or a page of a PDF (0-based). ``label`` says what it is evidence
    of ("evidence 1: P1_D2 00:31-00:45", "the question's moment", "round 3's image")."""

    model_config = _RECORD

    kind: MediaKind
    path: str  # relative to the source's root
    label: str
    start: float | None = None
    end: float | None = None
    page: int | None = None


class ReviewOption(BaseModel):
    """A choice as the reviewer sees it: its letter, text and role (``correct``, ``vague``,
    ``incorrect``, ``abstain``, or a builder's own role name such as ``swap_b``)."""

    model_config = _RECORD

    letter: str
    text: str
    role: str


class ReviewCheck(BaseModel):
    """One of the generator's checks on the item: its name, whether it passed (``None``: not
    a pass/fail check), its score where it has one, and the checker's rationale."""

    model_config = _RECORD

    name: str
    passed: bool | None = None
    score: float | None = None
    rationale: str = ""


class ReviewItem(BaseModel):
    """What a reviewer reads to judge one generated item. ``group`` is what the item belongs
    to (a person, a video pair, a persona); ``answer`` the gold option's letter, or the gold
    free-text answer where there are no options; ``evidence`` the text the item rests on
    (ledger rows, supporting rounds, captions); ``facts`` short labelled values (skill, question
    time, answerable) shown as they are."""

    model_config = _RECORD

    id: str
    group: str
    question: str
    options: tuple[ReviewOption, ...] = ()
    answer: str
    media: tuple[ReviewMedia, ...] = ()
    evidence: tuple[str, ...] = ()
    checks: tuple[ReviewCheck, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()


class ItemEdit(BaseModel):
    """A reviewer's changes to an item: a new question text, new texts for options by letter,
    a new gold (a letter, or the free-text answer). Empty: nothing changed."""

    model_config = _RECORD

    question: str | None = None
    options: dict[str, str] = Field(default_factory=dict)
    answer: str | None = None

    @property
    def empty(self) -> bool:
        return self.question is None and not self.options and self.answer is None


class ReviewDecision(BaseModel):
    """A reviewer's word on one item: the verdict, the reason (required to reject), the edits,
    who took it and when (UTC), and the fingerprint of the item as it was shown
    (``item_fingerprint``): a builder run again may give the same id to another item, and a
    decision is never carried over to an item the reviewer did not see."""

    model_config = _RECORD

    item_id: str
    item_fingerprint: str = ""
    verdict: ReviewVerdict
    reason: str = ""
    edit: ItemEdit = Field(default_factory=ItemEdit)
    reviewer: str
    at: datetime


class ExportResult(BaseModel):
    """What an export wrote: the folder, how many items it holds, and what the benchmark's own
    loader said reading it back (``loaded`` questions, ``skipped`` records)."""

    model_config = ConfigDict(extra="forbid")

    out: str
    benchmark: str
    exported: int
    rejected: int
    pending: int
    loaded: int
    skipped: list[SkippedRecord] = Field(default_factory=list)
    # decisions left out because their item changed since (``ReviewDecision.item_fingerprint``)
    stale: int = 0


@runtime_checkable
class ReviewSource(Protocol):
    """A builder's output, reviewable: its ``benchmark`` name, its ``root`` (media paths are
    relative to it), its items, and the export of the accepted ones with their edits in the
    released layout (then read back with the benchmark's loader)."""

    benchmark: str
    root: Path

    def items(self) -> list[ReviewItem]: ...

    def check_edit(self, item_id: str, edit: ItemEdit) -> str | None:
        """Why ``edit`` cannot be applied to the item (the released format would refuse the
        result), or ``None``: checked when the reviewer saves it, not first at export."""
        ...

    def export(self, decisions: dict[str, ReviewDecision], out: Path) -> ExportResult: ...


def verdict_of(decisions: dict[str, ReviewDecision], item_id: str) -> ReviewVerdict:
    """The verdict on ``item_id``: ``pending`` until a reviewer decided."""
    decision = decisions.get(item_id)
    return decision.verdict if decision is not None else "pending"


def item_fingerprint(item: ReviewItem) -> str:
    """The hash of everything a reviewer is shown of ``item``."""
    return hashlib.sha256(item.model_dump_json().encode("utf-8")).hexdigest()[:16]
