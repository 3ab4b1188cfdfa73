"""What a model sees of the conversation before an M3Exam question (paper Appendix B).

A ``Regime`` names one of:

- ``oracle``: only the sessions that hold the question's supporting-fact rounds, with their
  attached images (at most ``max_images``, 10) and PDF pages rendered at ``dpi`` (144, at most
  ``max_pdf_pages``, 30). The paper's frontier-MLLM setting (B.1) and Base (Session) (B.3).
- ``full``: the whole history, every session, within ``token_budget``; an image or page costs
  ``image_tokens``, text ``ceil(chars * tokens_per_char)``; when it does not fit, the oldest
  rounds go first (FIFO, the long-context buffer of B.1). Base (Full) of B.3.
- ``memory=<name>``: a memory of ``m3kit.memory`` ingests the conversation and answers
  (``m3kit.benchmarks.m3exam.task`` drives it; nothing is built here).

and a modality: ``multimodal`` sends the pixels (images and rendered pages), ``text`` sends
each image's released description and each page's text layer in their place (the paper's
text-only group, which gets captions as a text equivalent of the visuals).

An image whose pixels would be sent passes the pixel bound first (``m3kit.media.image``, from
its header): a decompression bomb or a damaged image is not sent, its round keeps its text and
says so, and the skip is named in ``ContextBlocks.skipped`` (file, ``<round>/<name>``, reason);
the question goes on without it.

``build_context`` turns a question and its conversation into ``ContextBlocks``: text and the
raw media to attach, in reading order, with the candidate image names an fm prompt lists and
the counts the cost accounting records. It reads PDF text layers (I/O): call it from a worker
thread inside an event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from m3kit.benchmarks.m3exam.prompt import attachment_name
from m3kit.errors import CorruptMediaError, M3kitError, MediaError, MediaTooLargeError
from m3kit.media.image import check_image
from m3kit.media.pdf import PDF_DPI, pdf_page_text
from m3kit.memory.context import TOKENS_PER_CHAR, estimated_tokens
from m3kit.schema import (
    Attachment,
    Conversation,
    ImageRef,
    PdfPageRef,
    Question,
    Round,
    Session,
    SkippedRecord,
)
from m3kit.schema.evallog import attachment_item_id

__all__ = [
    "REGIMES",
    "ContextBlocks",
    "MediaBlock",
    "Regime",
    "RegimeError",
    "build_context",
    "oracle_sessions",
    "parse_regime",
    "round_cost",
]

REGIMES = ("oracle", "full", "memory=<name>")
MODALITIES = ("multimodal", "text")
ORACLE_MAX_IMAGES = 10  # Appendix B.3: "capped at ten per question"
ORACLE_MAX_PDF_PAGES = 30
DEFAULT_TOKEN_BUDGET = 32_000  # Appendix F serves a 32,768-token context; room left to answer
DEFAULT_IMAGE_TOKENS = 256  # the same per-image charge as m3kit's ``context`` memory
# A rendered page stays under the pixel bound (m3kit.media.image.MAX_IMAGE_PIXELS, 89 478 485)
# up to a US-letter or A4 page at about 970 dpi; PDFium allocates the whole bitmap first, so a
# dpi past any use (the paper's 144; print's 600) is refused before a page is rendered.
MAX_DPI = 600


class RegimeError(M3kitError, ValueError):
    """A regime that cannot be built: an unknown name, bad limits, no supporting session."""


class Regime(BaseModel):
    """One evaluation regime and its limits (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["oracle", "full", "memory"] = "oracle"
    modality: Literal["multimodal", "text"] = "multimodal"
    memory: str | None = None
    max_images: int = Field(default=ORACLE_MAX_IMAGES, ge=0)
    max_pdf_pages: int = Field(default=ORACLE_MAX_PDF_PAGES, ge=0)
    dpi: int = Field(default=PDF_DPI, gt=0, le=MAX_DPI)
    token_budget: int = Field(default=DEFAULT_TOKEN_BUDGET, ge=0)
    image_tokens: int = Field(default=DEFAULT_IMAGE_TOKENS, ge=0)
    tokens_per_char: float = Field(default=TOKENS_PER_CHAR, gt=0)

    @property
    def name(self) -> str:
        """``oracle``, ``oracle-text``, ``full``, ``full-text``, ``memory=rag``..."""
        if self.kind == "memory":
            return f"memory={self.memory}"
        return self.kind if self.modality == "multimodal" else f"{self.kind}-text"

    @property
    def sends_pixels(self) -> bool:
        return self.modality == "multimodal"

    def tokens(self, text: str) -> int:
        return estimated_tokens(text, self.tokens_per_char)


def parse_regime(
    regime: str | None = None,
    *,
    modality: str | None = None,
    memory: str | None = None,
    default: str = "oracle",
    **limits: float,
) -> Regime:
    """A ``Regime`` from the task's arguments.

    ``regime`` is ``oracle``, ``full``, ``memory=<name>`` (or ``memory:<name>``), or a shorthand:
    ``text`` = oracle with descriptions, ``multimodal`` = oracle with pixels, ``oracle-text``,
    ``full-text``; left out (``None``) it is the memory regime when a ``memory`` is named and
    ``default`` otherwise. ``modality`` (``text``/``multimodal``) overrides the shorthand's. A
    ``memory`` name (``m3kit eval --memory``) selects the memory regime; it conflicts with a
    regime that shows the conversation directly (``full``, ``text``...: a ``RegimeError``
    naming both, rather than silently ignoring the memory) and with a ``memory=<other>``.
    ``oracle`` with a memory stays the memory regime: ``oracle`` was the task's default, so
    older calls pass it explicitly. ``limits`` set ``max_images``, ``max_pdf_pages``, ``dpi``,
    ``token_budget``, ``image_tokens``, ``tokens_per_char``.
    """
    memory_name = memory.strip() if memory not in (None, "", "none") else None
    given = (regime or "").strip().lower()
    raw = given or ("memory" if memory_name else default.strip().lower())
    kind, implied = raw, None
    if raw.startswith(("memory=", "memory:")):
        named = raw.split(raw[6], 1)[1].strip()
        if named and memory_name and named != memory_name.lower():
            raise RegimeError(f"regime {regime!r} and --memory {memory_name} name two different "
                              "memories: give one", field="memory")
        kind, memory_name = "memory", named or memory_name
    elif raw in MODALITIES:
        kind, implied = "oracle", raw
    elif raw.endswith(("-text", "-multimodal")):
        kind, _, implied = raw.partition("-")
    if memory_name is not None and raw in ("oracle", "memory"):
        kind = "memory"  # ``--memory rag`` with ``regime=oracle`` (the former default)
    if kind not in ("oracle", "full", "memory"):
        raise RegimeError(f"unknown regime {regime!r}; known: oracle, full, text, multimodal, "
                          "oracle-text, full-text, memory=<name>", field="regime")
    if kind != "memory" and memory_name is not None:
        raise RegimeError(
            f"regime {given!r} shows the conversation to the model directly, but --memory "
            f"{memory_name} answers through a memory: drop one of them (the memory regime is "
            f"-T regime=memory={memory_name})", field="regime")
    if kind == "memory" and not memory_name:
        raise RegimeError("the memory regime needs a memory name (memory=<name>)",
                          field="regime")
    chosen = (modality or implied or "multimodal").strip().lower()
    if chosen not in MODALITIES:
        raise RegimeError(f"unknown modality {modality!r}; known: multimodal, text",
                          field="modality")
    try:
        # Validated from a mapping: the kind and modality are checked strings here, the
        # limits numbers the record checks against its own bounds.
        return Regime.model_validate({"kind": kind, "modality": chosen,
                                      "memory": memory_name if kind == "memory" else None,
                                      **limits})
    except ValidationError as exc:  # one line naming the limit
        first = exc.errors()[0]
        field = str(first["loc"][-1]) if first.get("loc") else "regime"
        raise RegimeError(f"bad regime limit: {first['msg']} (got {first.get('input')!r})",
                          field=field) from None


class MediaBlock(BaseModel):
    """Raw media to attach at this point of the prompt: an image file or a PDF page."""

    model_config = ConfigDict(frozen=True)

    name: str
    ref: ImageRef | PdfPageRef
    round_id: str


class ContextBlocks(BaseModel):
    """The context of one question, in reading order, and what it holds.

    ``blocks``: text and ``MediaBlock``s; ``candidates``: names of the images whose pixels or
    descriptions are in the context (an fm prompt lists them); ``sessions``: session ids
    shown; ``rounds``: rounds shown; ``images``/``pages``: media attached as pixels;
    ``withheld``: attachments over the caps, named but not sent; ``skipped``: images refused
    by the pixel bound or unreadable, named in their round and here (file, ``<round>/<name>``,
    reason), never sent; ``evicted_rounds``: rounds the token budget left out;
    ``estimated_tokens``: the regime's own estimate of the context.
    """

    blocks: list[str | MediaBlock] = Field(default_factory=list)
    candidates: list[str] = Field(default_factory=list)
    sessions: list[str] = Field(default_factory=list)
    rounds: int = 0
    images: int = 0
    pages: int = 0
    withheld: int = 0
    skipped: list[SkippedRecord] = Field(default_factory=list)
    evicted_rounds: int = 0
    estimated_tokens: int = 0
    missing_evidence: list[str] = Field(default_factory=list)

    @property
    def media(self) -> list[MediaBlock]:
        return [b for b in self.blocks if isinstance(b, MediaBlock)]


def build_context(question: Question, conversation: Conversation, regime: Regime) -> ContextBlocks:
    """The context ``regime`` shows before ``question`` (not for the memory regime)."""
    if regime.kind == "oracle":
        return _oracle(question, conversation, regime)
    if regime.kind == "full":
        return _full(conversation, regime)
    raise RegimeError("the memory regime builds no direct context: a memory answers",
                      record=question.id, field="regime")


# -- oracle ---------------------------------------------------------------------------------------


def oracle_sessions(question: Question, conversation: Conversation
                    ) -> tuple[set[str], list[str]]:
    """The ids of the sessions holding ``question``'s supporting-fact rounds (what the oracle
    regime shows), and the supporting-fact rounds the conversation does not hold. No session:
    the question cannot be posed under the oracle regime."""
    wanted: set[str] = set()
    missing: list[str] = []
    for round_id in question.evidence:
        try:
            wanted.add(conversation.session_of(round_id).id)
        except KeyError:
            missing.append(round_id)
    return wanted, missing


def _oracle(question: Question, conversation: Conversation, regime: Regime) -> ContextBlocks:
    wanted, missing = oracle_sessions(question, conversation)
    if not wanted:
        raise RegimeError(
            "no supporting-fact round is in the conversation, so the oracle regime has no "
            f"session to show (supporting facts: {', '.join(question.evidence) or 'none'})",
            record=question.id, field="evidence",
        )
    sessions = [s for s in conversation.sessions if s.id in wanted]
    rounds = [(s, r) for s in sessions for r in s.rounds]
    refused: Refusals = {}
    shown = _capped_media(rounds, set(question.evidence), regime, refused)
    out = ContextBlocks(sessions=[s.id for s in sessions], missing_evidence=missing)
    previous: Session | None = None
    for session, rnd in rounds:
        if session is not previous:
            _add_text(out, regime, _session_header(session))
            previous = session
        _add_round(out, rnd, regime, shown, refused)
    return out


# Attachments refused by the pixel bound (or unreadable), by (round id, index): the error names
# the file, the attachment and the reason.
Refusals = dict[tuple[str, int], MediaError]


def _sendable(rnd: Round, n: int, regime: Regime, refused: Refusals) -> bool:
    """Whether attachment ``n`` of ``rnd`` may go as pixels: a page, or an image that passes
    the pixel bound (checked from its header, once per context); a refused one is kept in
    ``refused``. A missing file is no refusal: it fails when sent, as before."""
    attachment = rnd.attachments[n]
    if (not regime.sends_pixels or not isinstance(attachment.media, ImageRef)
            or attachment.media.remote):  # a web image is described, never sent
        return True
    if (rnd.id, n) in refused:
        return False
    try:
        check_image(attachment.media.path,
                    record=attachment_item_id(rnd.id, attachment_name(attachment)))
    except (MediaTooLargeError, CorruptMediaError) as exc:
        refused[(rnd.id, n)] = exc
        return False
    return True


def _capped_media(
    rounds: Sequence[tuple[Session, Round]], evidence: set[str], regime: Regime,
    refused: Refusals,
) -> set[tuple[str, int]]:
    """Which attachments go as pixels: supporting-fact rounds' first, then the others in
    conversation order, up to ``max_images`` images and ``max_pdf_pages`` pages; an image the
    pixel bound refuses takes no place (it is added to ``refused``)."""
    if not regime.sends_pixels:
        return set()
    ordered = [(r, n, a) for _, r in rounds if r.id in evidence
               for n, a in enumerate(r.attachments)]
    ordered += [(r, n, a) for _, r in rounds if r.id not in evidence
                for n, a in enumerate(r.attachments)]
    chosen: set[tuple[str, int]] = set()
    images = pages = 0
    for rnd, n, attachment in ordered:
        if _caption_only(attachment):
            continue
        if isinstance(attachment.media, ImageRef) and images < regime.max_images:
            if not _sendable(rnd, n, regime, refused):
                continue
            chosen.add((rnd.id, n))
            images += 1
        elif isinstance(attachment.media, PdfPageRef) and pages < regime.max_pdf_pages:
            chosen.add((rnd.id, n))
            pages += 1
    return chosen


# -- full -----------------------------------------------------------------------------------------


def round_cost(rnd: Round, regime: Regime, header: str = "",
               refused: Refusals | None = None) -> int:
    """Tokens one round takes in the ``full`` regime: its text (and the session header it
    opens, if any) at ``tokens_per_char``, plus ``image_tokens`` per image or page sent as
    pixels (in the text modality descriptions and page text are charged as text; an image the
    pixel bound refuses, kept in ``refused``, as the line that names it)."""
    scratch = ContextBlocks()
    refused = {} if refused is None else refused
    sent = _sent_of(rnd, regime, refused)
    if header:
        _add_text(scratch, regime, header)
    _add_round(scratch, rnd, regime, sent, refused)
    return scratch.estimated_tokens


def _sent_of(rnd: Round, regime: Regime, refused: Refusals) -> set[tuple[str, int]]:
    """Every attachment of ``rnd`` the pixel bound lets through (the ``full`` regime has no
    per-question caps)."""
    return {(rnd.id, n) for n in range(len(rnd.attachments))
            if _sendable(rnd, n, regime, refused)}


def _full(conversation: Conversation, regime: Regime) -> ContextBlocks:
    rounds = [(s, r) for s in conversation.sessions for r in s.rounds]
    # FIFO: walk back from the newest round while the budget holds. Every kept session gets
    # its header once, before its first kept round, whether or not that round opens the
    # session: it is charged with the session's last round, the first one the walk meets, so
    # the estimate is the context's own (``estimated_tokens``) and never over the budget.
    start = len(rounds)
    spent = 0
    refused: Refusals = {}
    for n in range(len(rounds) - 1, -1, -1):
        session, rnd = rounds[n]
        meets = n == len(rounds) - 1 or rounds[n + 1][0] is not session
        cost = round_cost(rnd, regime, _session_header(session) if meets else "", refused)
        if spent + cost > regime.token_budget:
            break
        spent += cost
        start = n
    kept = rounds[start:]
    out = ContextBlocks(evicted_rounds=start)
    previous: Session | None = None
    for session, rnd in kept:
        if session is not previous:
            _add_text(out, regime, _session_header(session))
            out.sessions.append(session.id)
            previous = session
        _add_round(out, rnd, regime, _sent_of(rnd, regime, refused), refused)
    return out


# -- rendering ------------------------------------------------------------------------------------


def _session_header(session: Session) -> str:
    return f"Session {session.id}" + (f" ({session.date})" if session.date else "") + ":"


def _add_text(out: ContextBlocks, regime: Regime, text: str) -> None:
    out.blocks.append(text)
    out.estimated_tokens += regime.tokens(text) + 1  # +1: the line break joining blocks


def _caption_only(attachment: Attachment) -> bool:
    # A web image is never fetched (m3kit runs offline): its description goes in its place,
    # in the multimodal modality too.
    return isinstance(attachment.media, ImageRef) and attachment.media.remote


def _describe(attachment: Attachment, rnd: Round) -> str:
    if isinstance(attachment.media, PdfPageRef):
        return _page_text(attachment.media)
    text = attachment.description
    if not text and isinstance(attachment.media, ImageRef):
        text = attachment.media.description
    return text or rnd.attachments_description or "(no description)"


def _page_text(ref: PdfPageRef) -> str:
    try:
        return pdf_page_text(ref.path, ref.page) or "(no text layer)"
    except M3kitError as exc:  # the round keeps its text; the page says why it is missing
        return f"(unreadable: {exc.reason})"


def _add_round(
    out: ContextBlocks, rnd: Round, regime: Regime, shown: set[tuple[str, int]],
    refused: Refusals,
) -> None:
    speaker = rnd.speaker or "user"
    lines = [f"[{rnd.id}] {speaker}: {rnd.text.strip()}"]
    media: list[MediaBlock] = []
    for n, attachment in enumerate(rnd.attachments):
        name = attachment_name(attachment)
        is_page = isinstance(attachment.media, PdfPageRef)
        what = "PDF page" if is_page else "image"
        described = not regime.sends_pixels or _caption_only(attachment)
        # fm candidates: images the model can actually see or read about
        if not is_page and (described or (rnd.id, n) in shown):
            out.candidates.append(name)
        if described:
            lines.append(f"(attached {what} {name}: {_describe(attachment, rnd)})")
        elif (rnd.id, n) in shown and isinstance(attachment.media, ImageRef | PdfPageRef):
            lines.append(f"(attached {what} {name}, shown below)")
            media.append(MediaBlock(name=name, ref=attachment.media, round_id=rnd.id))
        elif (rnd.id, n) in refused:
            error = refused[(rnd.id, n)]
            why = "too large to send" if isinstance(error, MediaTooLargeError) else "unreadable"
            lines.append(f"(attached {what} {name}, not shown: {why})")
            out.skipped.append(SkippedRecord.from_error(error))
        else:
            lines.append(f"(attached {what} {name}, not shown: over the per-question limit)")
            out.withheld += 1
    _add_text(out, regime, "\n".join(lines))
    for block in media:
        _add_text(out, regime, f"{block.name}:")
        out.blocks.append(block)
        out.estimated_tokens += regime.image_tokens
        if isinstance(block.ref, PdfPageRef):
            out.pages += 1
        else:
            out.images += 1
    if rnd.response:
        _add_text(out, regime, f"assistant: {rnd.response.strip()}")
    out.rounds += 1
