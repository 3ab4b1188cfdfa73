"""The document pool: PDFs the user supplies, matched to timeline events by keyword overlap
with their text, copied to ``pdfs/`` and shown to the backend as bounded text-layer excerpts
(and, for a vision backend, as rendered pages).

M3Exam Appendix E: "When the shared evidence for an event is a document rather than a photo
... the user is shown a batch of freshly rendered PDF pages instead of images and must ask a
question that quotes a concrete number, label, or term from those pages; and the assistant
answers using only the visible pages". A document event therefore carries its document
instead of pool images.

Released form (what :func:`m3kit.benchmarks.m3exam.load.load_m3exam` reads): a round's
``pdf_file`` lists ``"name.pdf"`` when every page was shown, else one ``"name.pdf#<page>"``
(1-based) per page shown.
"""

from __future__ import annotations

import random
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks.m3exam.construct.errors import SynthesisError
from m3kit.benchmarks.m3exam.construct.records import TimelineEvent, content_words
from m3kit.errors import M3kitError

__all__ = [
    "MAX_DOCUMENT_CHARS",
    "NumberedDocument",
    "PoolDocument",
    "assign_documents",
    "document_text",
    "entry_pages",
    "load_document_pool",
    "render_pages",
]

MAX_DOCUMENT_CHARS = 3000
"""Text-layer characters of one document a prompt carries: pages are long, prompts are not."""

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class PoolDocument:
    """A readable PDF of the pool, its page count, and the text its matching uses."""

    path: Path
    page_count: int
    description: str | None = None
    text: str = ""


class NumberedDocument(BaseModel):
    """A document as the dataset names it: ``file`` in ``pdfs/``, the 0-based ``pages`` shown."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    file: str = Field(min_length=1)
    source: str
    page_count: int = Field(ge=1)
    pages: list[int] = Field(min_length=1)
    description: str

    def entries(self) -> list[str]:
        """The released ``pdf_file`` entries of the round that attaches this document."""
        if len(self.pages) == self.page_count:
            return [self.file]
        return [f"{self.file}#{p + 1}" for p in self.pages]

    def label(self) -> str:
        """How prompts name it: ``labs.pdf (pages 1-2 of 5): description``."""
        first, last = self.pages[0] + 1, self.pages[-1] + 1
        span = f"page {first}" if first == last else f"pages {first}-{last}"
        return f"{self.file} ({span} of {self.page_count}): {self.description}"


def entry_pages(entry: str, pdfs_dir: Path) -> tuple[Path, list[int]]:
    """A released ``pdf_file`` entry → the file and its 0-based pages (as the loader reads
    it: ``name#3`` is page 3, a bare name every page)."""
    from m3kit.media.pdf import pdf_page_count

    name, _, fragment = entry.partition("#")
    path = pdfs_dir / name
    digits = re.sub(r"\D", "", fragment)
    if digits:
        return path, [int(digits) - 1]
    return path, list(range(pdf_page_count(path)))


def document_text(path: Path, pages: list[int], limit: int = MAX_DOCUMENT_CHARS) -> str:
    """The text layer of ``pages``, each under a ``[page n]`` header, cut at ``limit``
    characters in all. A page without a text layer (a scan) says so instead."""
    from m3kit.media.pdf import pdf_page_text

    parts = []
    for page in pages:
        text = pdf_page_text(path, page) or "(no text layer: a scanned page)"
        parts.append(f"[page {page + 1}]\n{text}")
    joined = "\n".join(parts)
    return joined if len(joined) <= limit else joined[:limit].rstrip() + " [...]"


def render_pages(path: Path, pages: list[int], directory: Path) -> tuple[Path, ...]:
    """Render ``pages`` at 144 dpi (Appendix B's resolution) once, for a vision backend."""
    from m3kit.media.pdf import render_pdf_page_file

    return tuple(render_pdf_page_file(path, p, directory) for p in pages)


def load_document_pool(folder: Path, *, max_pages: int) -> tuple[list[PoolDocument], list[str]]:
    """PDFs in ``folder`` (sorted by name) and the reasons for those skipped.

    ``descriptions.json`` beside them (``{file name: description}``) supplies known
    descriptions; otherwise a document is described by the first line of its text layer. A
    file that is not a readable PDF is skipped and reported, the others go on.
    """
    from m3kit.benchmarks.m3exam.construct.images import pool_descriptions
    from m3kit.media.pdf import pdf_page_count

    descriptions = pool_descriptions(folder, "document", "documents")
    pool: list[PoolDocument] = []
    skipped: list[str] = []
    for path in sorted(folder.iterdir()):
        if path.suffix.lower() != ".pdf":
            continue
        try:
            count = pdf_page_count(path)
            if count == 0:
                raise SynthesisError("the PDF has no pages", path=path, field="documents")
            text = document_text(path, list(range(min(count, max_pages))))
        except M3kitError as exc:  # damaged, encrypted, empty: one line, the pool goes on
            skipped.append(str(exc))
            continue
        pool.append(PoolDocument(path, count, descriptions.get(path.name), text))
    return pool, skipped


def _describe(doc: PoolDocument) -> str:
    if doc.description:
        return doc.description
    for line in doc.text.splitlines():
        line = line.strip()
        if line and not line.startswith("[page ") and not line.startswith("(no text"):
            return line[:160]
    return doc.path.stem.replace("_", " ")


def assign_documents(
    events: list[TimelineEvent],
    pool: list[PoolDocument],
    out_pdfs: Path,
    *,
    per_event: int,
    max_pages: int,
    seed: int,
) -> dict[int, list[NumberedDocument]]:
    """Place each pool document on the event its text overlaps most (greedy over all
    document-event pairs, best overlap first, at most ``per_event`` per event); a document
    that overlaps no event goes to a seeded-random event still free. Documents beyond the
    timeline's capacity stay unused. Copies them to ``out_pdfs`` and returns event index →
    documents, each showing its first ``max_pages`` pages."""
    if per_event <= 0 or not pool or not events:
        return {}
    rng = random.Random(seed)
    order = list(range(len(pool)))
    rng.shuffle(order)  # the tie-break order, fixed by the seed
    rank = {d: r for r, d in enumerate(order)}
    doc_words = [
        content_words(f"{d.description or ''} {d.path.stem.replace('_', ' ')} {d.text}")
        for d in pool
    ]
    pairs = []
    for d in range(len(pool)):
        for e, event in enumerate(events):
            overlap = len(doc_words[d] & content_words(
                f"{event.keyword} {event.description} {event.query}"))
            if overlap:
                pairs.append((-overlap, rank[d], e, d))
    placed: dict[int, int] = {}  # document → event position
    load = [0] * len(events)
    for _, _, e, d in sorted(pairs):
        if d not in placed and load[e] < per_event:
            placed[d], load[e] = e, load[e] + 1
    for d in order:
        free = [e for e in range(len(events)) if load[e] == 0]
        if d not in placed and free:
            e = rng.choice(free)
            placed[d], load[e] = e, load[e] + 1
    out_pdfs.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    assigned: dict[int, list[NumberedDocument]] = {}
    for d in sorted(placed, key=lambda d: (placed[d], rank[d])):
        source = pool[d]
        # the loader reads "name#page" entries: a file name must not carry '#' or spaces
        stem = _SAFE.sub("_", source.path.stem).strip("_") or "document"
        name, n = f"{stem}.pdf", 1
        while name in used:
            n += 1
            name = f"{stem}_{n}.pdf"
        used.add(name)
        shutil.copyfile(source.path, out_pdfs / name)
        pages = list(range(min(source.page_count, max_pages)))
        doc = NumberedDocument(file=name, source=str(source.path), page_count=source.page_count,
                               pages=pages, description=_describe(source))
        assigned.setdefault(events[placed[d]].index, []).append(doc)
    return assigned
