"""M3Proctor's index (paper §3.1): one text chunk per round, tagged with modalities, plus one
summary chunk per session, and one chunk per PDF page.

A round chunk is the round's text with a *text surrogate* for each file attached to it:

- an image: its caption — the description shipped with the data, else a ``captioner``
  backend's caption, else what OCR reads in it (no captioner ships offline: m3kit has no VLM);
- a chart or table (an image whose caption names one, or whose OCR is number-rich): also a
  number-rich transcription, the OCR text of the pixels;
- a PDF page: its text layer plus a one-sentence digest (the layer's first sentence).

**PDF pages are chunks of their own** (``pdf_pages="items"``, the default): the round's chunk
names each PDF once (its page count, the first page's description and digest), and each page
is a chunk (``chunk`` = ``page``, id ``<round>/<page>``, counted as its round) indexed by its
whole text layer and shown to the model as at most ``page_words`` words of it, its rendered
image one escalation away: an escalation sends the pages kept, not every page of the PDF. With every
page's text inside its round's chunk (``pdf_pages="in_round"``, m3kit's chunking before), a
round that attaches a long PDF became one chunk of several thousand words, about the size of
the whole conversation's text, retrieved for most questions: M3Proctor then cost more than the
full context it is meant to save (docs/benchmarks.md, "M3Proctor on sessions with PDFs").

Each chunk carries ``tags`` ⊆ {image, document, chart}, read from the surrogates (never from
pixels at answer time), and ``raw``: the ``MediaRef``s of its raw sources, in order, each with
its modality, so the cascade can go back to them. Summary chunks are extractive (the first
sentence of each user turn, with the files it attached): a miniature timeline of the session
that costs no model call. Items are ``MemoryItem``s of modality ``text``; what makes them chunks
lives in their ``metadata`` (``chunk`` = ``round`` | ``session_summary``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from m3kit.errors import M3kitError
from m3kit.media.image import check_image, image_available, read_image_rgb
from m3kit.media.pdf import pdf_page_text
from m3kit.memory.base import MemoryEvent, MemoryItem
from m3kit.memory.events import merge_events
from m3kit.schema.media import ImageRef, MediaRef, PdfPageRef, VideoRef
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from m3kit.perception.base import TextReader

logger = logging.getLogger(__name__)

BiasModality = Literal["image", "document", "chart"]
BIAS_MODALITIES: tuple[BiasModality, ...] = ("image", "document", "chart")
SUMMARY_PREFIX = "session:"

# A caption naming one of these shows an informative visual whose values matter.
_CHART_WORDS = re.compile(
    # "table" alone is furniture as often as data ("a cat on an exam table"): only a table
    # of something counts.
    r"\b(chart|charts|graph|graphs|plots?|diagram|histogram|axis|axes|spreadsheet|dashboard|"
    r"infographic|pie\s+chart|curve|trend|readout|monitor\s+display|lab\s+results?|"
    r"(data\s+)?tables?\s+(of|with|showing|listing|comparing)|data\s+table)\b",
    re.IGNORECASE,
)
NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
"""A number as text states it (``12``, ``12.5``, ``1,604``)."""
# OCR with at least this many numbers reads as a table or chart, whatever the caption says.
NUMBER_RICH = 6
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
DIGEST_WORDS = 30
SUMMARY_WORDS = 25
PAGE_WORDS = 200
"""The budget of one page chunk in the prompt: about two M3Exam rounds (median 113 words).
Set from the round lengths, not tuned on any measurement; the page's whole text layer is what
the index reads, and its rendered image is what an escalation sends."""
PdfPages = Literal["items", "in_round"]

Captioner = Callable[[ImageRef], str]
"""A captioning backend: an image in, one caption out (a VLM, a hosted API...)."""


def first_sentence(text: str, max_words: int = DIGEST_WORDS) -> str:
    """The first sentence of ``text``, cut at ``max_words`` words."""
    flat = " ".join(text.split())
    if not flat:
        return ""
    sentence = _SENTENCE.split(flat, maxsplit=1)[0]
    words = sentence.split()
    return " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")


def is_chart(caption: str, ocr: str) -> bool:
    """Whether a visual is a chart or table: its caption names one, or its OCR is
    number-rich."""
    return bool(_CHART_WORDS.search(caption)) or len(NUMBER.findall(ocr)) >= NUMBER_RICH


def pdf_text(ref: PdfPageRef) -> str:
    """The text layer of a PDF page."""
    return pdf_page_text(ref.path, ref.page)


def build_chunks(
    key: str,
    events: Sequence[MemoryEvent],
    *,
    reader: TextReader | None = None,
    captioner: Captioner | None = None,
    summaries: bool = True,
    pdf_pages: PdfPages = "items",
    page_words: int = PAGE_WORDS,
) -> tuple[list[MemoryItem], list[SkippedRecord]]:
    """The chunks of ``key`` in time order (each session's summary right after its last
    round), and the attachments skipped, each naming its file, its event and why: a file
    missing, damaged or over the pixel bound (``m3kit.media.image``) keeps no raw reference, so
    Stage 2 never sends it; its round keeps its text and the file's released description. Each
    skip is also logged as a warning.

    ``reader`` (OCR) transcribes images that have no caption or whose caption names a chart;
    ``captioner`` captions images that have no description. ``pdf_pages``, ``page_words``:
    PDF pages as chunks of their own, shown within a budget (the module doc). Runs models: call
    it from a worker thread.
    """
    if page_words < 1:
        raise ValueError(f"page_words must be positive, got {page_words}")
    ordered = merge_events(events)
    rounds: dict[str, MemoryEvent] = {}
    attached: dict[str, list[MemoryEvent]] = {}
    loose: list[MemoryEvent] = []
    for event in ordered:
        round_id = event.metadata.get("round_id")
        if event.kind == "round":
            rounds[event.id] = event
            attached.setdefault(event.id, [])
        elif round_id is not None and round_id in rounds:
            attached[round_id].append(event)
        else:
            loose.append(event)
    skipped: list[SkippedRecord] = []
    chunks: list[MemoryItem] = []
    pages = page_words if pdf_pages == "items" else None
    for event in ordered:
        if event.kind == "round":
            chunks += _round_chunk(key, event, attached[event.id], reader, captioner, skipped,
                                   pages)
        elif event in loose:
            chunks += _round_chunk(key, event, [], reader, captioner, skipped, pages)
    if summaries:
        chunks = _with_summaries(key, chunks)
    return chunks, skipped


def chunk_tags(item: MemoryItem) -> frozenset[str]:
    """The modality tags of a chunk (empty for anything that is not one)."""
    return frozenset(item.metadata.get("tags", ()))


def visual_text(item: MemoryItem) -> str:
    """What a chunk's images and charts say as text (captions, OCR), without the round's own
    words; empty for a chunk without visuals."""
    return str(item.metadata.get("visual_text", ""))


def chunk_raw(item: MemoryItem) -> list[tuple[str, MediaRef, str]]:
    """A chunk's raw sources as ``(modality, ref, name)``, in attachment order."""
    return list(item.metadata.get("raw", ()))


def is_summary(item: MemoryItem) -> bool:
    return item.metadata.get("chunk") == "session_summary"


def is_page(item: MemoryItem) -> bool:
    """Whether ``item`` is a PDF page's own chunk."""
    return item.metadata.get("chunk") == "page"


def index_text(item: MemoryItem) -> str:
    """What the index reads for a chunk: a page chunk's whole text layer, else its text."""
    return str(item.metadata.get("index_text", item.text))


# -- helpers ---------------------------------------------------------------------------------------


def _round_chunk(
    key: str,
    event: MemoryEvent,
    files: list[MemoryEvent],
    reader: TextReader | None,
    captioner: Captioner | None,
    skipped: list[SkippedRecord],
    page_words: int | None,
) -> list[MemoryItem]:
    """The round's chunk, then (``page_words`` set) a chunk per PDF page it attached."""
    tags: set[str] = set()
    raw: list[tuple[str, MediaRef, str]] = []
    lines: list[str] = []
    visual: list[str] = []  # the surrogates of the round's images and charts
    pages: list[MemoryItem] = []
    files_named: list[str] = []
    documents: dict[str, list[str]] = {}  # a PDF's pages kept as chunks, by file
    own = [event] if event.kind != "round" and event.media is not None else []
    for file in [*own, *files]:
        name = file.metadata.get("attachment_id") or file.id.rsplit("/", 1)[-1]
        media = file.media
        # A file, or an inline image; a web image is never fetched (m3kit runs offline, the
        # loader reports it once): it keeps its caption and has nothing raw to escalate to.
        present = media is None or isinstance(media, VideoRef) or (
            image_available(media.path) if isinstance(media, ImageRef)
            else Path(media.path).is_file())
        caption_only = isinstance(media, ImageRef) and media.remote
        try:
            # a file without media is present, so ``media is not None`` only narrows the type
            if media is not None and not present and not caption_only:
                raise M3kitError("file not found", path=media.path)
            surrogate, modalities = _surrogate(file, reader, captioner)
        except M3kitError as exc:
            # The round keeps its text and the file's released description; nothing raw.
            skipped.append(SkippedRecord(file=exc.path or "", record=exc.record or file.id,
                                          field=exc.field, reason=exc.reason))
            logger.warning("memory %s: attachment skipped: %s", key, exc)
            surrogate = file.text.strip()
            modalities = ["document"] if isinstance(file.media, PdfPageRef) else ["image"]
            present = False
        tags.update(modalities)
        if surrogate and {"image", "chart"} & set(modalities):
            visual.append(surrogate)
        if file.media is not None and present:
            files_named.append(name)
        if (page_words is not None and isinstance(file.media, PdfPageRef) and present
                and file is not event):
            # The page is a chunk of its own, with its raw page: an escalation sends the pages
            # that were kept, not every page of a long PDF. The round names its PDFs once.
            pages.append(_page_chunk(key, event, file, name, surrogate, modalities, page_words))
            documents.setdefault(name.split("#", 1)[0], []).append(surrogate)
            continue
        if file.media is not None and present:
            raw.append((modalities[0], file.media, name))
        if surrogate and file is not event:
            lines.append(f"[{name} ({', '.join(modalities)})] {surrogate}")
        elif surrogate:
            lines.append(surrogate)
    for document, texts in documents.items():
        lines.append(f"[{document} (document), {len(texts)} page(s), each a chunk of its "
                     f"own] {_without_page_text(texts[0])}")
    # A round's text is its own; a loose event with a file has only the file's surrogate, one
    # without (a transcript, a note) is its text.
    text = event.text.strip() if event.kind == "round" or not own else ""
    # The surrogates go between the user's turn and the assistant's reply: an embedder reads
    # the first few hundred tokens only, and long replies would push the files out of view.
    user, sep, assistant = text.partition("\nassistant: ")
    body = "\n".join(part for part in (user, *lines) if part)
    if sep:
        body = f"{body}\nassistant: {assistant}"
    metadata: dict[str, Any] = {
        **event.metadata,
        "chunk": "round",
        "tags": sorted(tags),
        "raw": raw,
        "visual_text": "\n".join(visual),
        "round_id": event.metadata.get("round_id", event.id),
        "files": files_named,
    }
    return [MemoryItem(id=event.id, key=key, event_id=event.id, modality="text", text=body,
                       source=event.media, time=event.time, metadata=metadata), *pages]


_PAGE_TEXT = "Page text: "


def _without_page_text(surrogate: str) -> str:
    """A page's surrogate without its text layer (its description and digest)."""
    return " ".join(line for line in surrogate.split("\n") if not line.startswith(_PAGE_TEXT))


def _page_chunk(key: str, event: MemoryEvent, file: MemoryEvent, name: str, surrogate: str,
                modalities: list[str], page_words: int) -> MemoryItem:
    """A PDF page's own chunk: indexed by its whole surrogate, shown as its description, digest
    and the first ``page_words`` words of its text layer."""
    head = _without_page_text(surrogate)
    layer = next((line[len(_PAGE_TEXT):] for line in surrogate.split("\n")
                  if line.startswith(_PAGE_TEXT)), "")
    words = layer.split()
    shown = " ".join(words[:page_words]) + (" …" if len(words) > page_words else "")
    round_id = event.metadata.get("round_id", event.id)
    text = "\n".join(part for part in (f"[{name} ({', '.join(modalities)}) of {round_id}] "
                                        f"{head}", f"{_PAGE_TEXT}{shown}" if shown else "")
                     if part)
    assert file.media is not None  # a page chunk is made for a page that is present
    metadata: dict[str, Any] = {
        **event.metadata,
        "chunk": "page",
        "tags": sorted(modalities),
        "raw": [(modalities[0], file.media, name)],
        "visual_text": "",
        "round_id": round_id,
        "attachment_id": name,
        "index_text": f"{name} {surrogate}",
        "page_words": len(words),
    }
    return MemoryItem(id=file.id, key=key, event_id=file.id, modality="text", text=text,
                      source=file.media, time=file.time if file.time is not None else event.time,
                      metadata=metadata)


def _surrogate(
    event: MemoryEvent, reader: TextReader | None, captioner: Captioner | None
) -> tuple[str, list[str]]:
    """A file's text surrogate and its modality tags (the first is its own modality)."""
    media = event.media
    description = event.text.strip()
    if isinstance(media, PdfPageRef):
        layer = " ".join(pdf_text(media).split())
        digest = first_sentence(layer)
        parts = [p for p in (description, f"Digest: {digest}" if digest else "",
                             f"Page text: {layer}" if layer else "") if p]
        modalities = ["document"] + (["chart"] if is_chart(description, layer) else [])
        return "\n".join(parts), modalities
    if isinstance(media, ImageRef) and media.remote:
        return description, ["chart", "image"] if is_chart(description, "") else ["image"]
    if isinstance(media, ImageRef):
        # Checked from the header whether or not OCR decodes it: a decompression bomb or a
        # file that is no image must not reach Stage 2, which sends raw files to the model.
        check_image(media.path, record=event.id)
        caption = description
        if not caption and captioner is not None:
            caption = captioner(media).strip()
        ocr = ""
        # OCR only where it adds something: an uncaptioned image, or a chart whose values
        # the caption does not give. Transcribing every photo would multiply the build time.
        if reader is not None and (not caption or _CHART_WORDS.search(caption)):
            image = read_image_rgb(media.path, record=event.id)
            ocr = " ".join(line.text for line in reader.read([image])[0])
        chart = is_chart(caption, ocr)
        parts = [caption] if caption else []
        if ocr:
            parts.append(f"{'Values' if chart else 'Text in image'}: {ocr}")
        return "\n".join(parts), ["chart", "image"] if chart else ["image"]
    return description, []


def _with_summaries(key: str, chunks: list[MemoryItem]) -> list[MemoryItem]:
    """``chunks`` with a summary chunk after each session's last round."""
    by_session: dict[str, list[MemoryItem]] = {}
    for chunk in chunks:
        session = chunk.metadata.get("session_id")
        if session is not None and not is_page(chunk):
            by_session.setdefault(session, []).append(chunk)
    out: list[MemoryItem] = []
    for n, chunk in enumerate(chunks):
        out.append(chunk)
        session = chunk.metadata.get("session_id")
        following = chunks[n + 1].metadata.get("session_id") if n + 1 < len(chunks) else None
        if session is not None and following != session:
            out.append(session_summary(key, session, by_session[session]))
    return out


def session_summary(key: str, session: str, rounds: Sequence[MemoryItem]) -> MemoryItem:
    """An extractive summary chunk: the session's date, then per round its first user sentence
    and the files it attached."""
    when = rounds[0].metadata.get("when") or session
    lines = [f"Session {when}: {len(rounds)} rounds."]
    for chunk in rounds:
        user = chunk.text.split("\n", 1)[0]
        user = user.split(": ", 1)[1] if ": " in user else user
        names = chunk.metadata.get("files", [name for _, _, name in chunk_raw(chunk)])
        files = f" [files: {', '.join(names)}]" if names else ""
        lines.append(f"{chunk.id}: {first_sentence(user, SUMMARY_WORDS)}{files}")
    last = rounds[-1]
    return MemoryItem(
        id=f"{SUMMARY_PREFIX}{session}", key=key, event_id=f"{SUMMARY_PREFIX}{session}",
        modality="text", text="\n".join(lines), time=last.time,
        metadata={"chunk": "session_summary", "session_id": session, "when": when,
                  "tags": [], "raw": [], "rounds": [c.id for c in rounds]},
    )
