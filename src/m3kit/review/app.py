"""The review app over one ``ReviewSource`` and its ``DecisionStore``: a small JSON API, the
media of the source's root (and nothing else), and one static page (``static/``: vanilla
JavaScript, no build step, nothing fetched from the internet).

FastAPI on Starlette: both ship on the package index, are well kept and already installed with
inspect-ai (no new dependency); Starlette's ``FileResponse`` answers HTTP ``Range`` requests, so
the browser's ``<video>`` can seek to an evidence span without downloading the file.

Routes::

    GET  /                          the page
    GET  /api/items                 every item with its verdict, and the progress
    GET  /api/items/{id}            one item and its latest decision
    POST /api/items/{id}/decision   accept / reject (a reason required) / pending, with edits
    POST /api/export                the accepted items in the released layout ({"out": ...})
    GET  /media/{path}              a file under the source's root (Range requests answered)
    GET  /pdf/{path}?page=N         a PDF page under the source's root, as PNG

Requests that change anything must come from the page itself: a ``POST`` whose ``Origin`` is
another site's is refused (a page elsewhere cannot make the reviewer's browser decide or export),
and on a loopback address only loopback host names are answered (DNS rebinding).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel
from starlette.middleware.trustedhost import TrustedHostMiddleware

from m3kit.errors import M3kitError, MediaError, UnsafePathError
from m3kit.paths import resolve_in_root
from m3kit.review.store import DEFAULT_EXPORT_DIR, DecisionStore, export_current
from m3kit.schema.review import (
    ExportResult,
    ItemEdit,
    ReviewDecision,
    ReviewItem,
    ReviewSource,
    ReviewVerdict,
    item_fingerprint,
)

__all__ = [
    "LOOPBACK_HOSTS",
    "STATIC_DIR",
    "DecisionReply",
    "DecisionRequest",
    "ExportRequest",
    "ItemDetail",
    "ItemList",
    "ItemSummary",
    "Progress",
    "create_app",
]

STATIC_DIR = Path(__file__).resolve().parent / "static"
LOOPBACK_HOSTS: tuple[str, ...] = ("127.0.0.1", "localhost", "::1", "[::1]")


class Progress(BaseModel):
    reviewed: int
    total: int
    accepted: int
    rejected: int
    pending: int


class ItemSummary(BaseModel):
    """An item in the list: its latest verdict, who took it and when, whether it was edited."""

    id: str
    group: str
    question: str
    verdict: ReviewVerdict
    reason: str = ""
    reviewer: str | None = None
    at: datetime | None = None
    edited: bool = False
    stale: bool = False  # decided on an earlier version of the item: pending again


class ItemList(BaseModel):
    benchmark: str
    root: str
    reviewer: str
    progress: Progress
    items: list[ItemSummary]


class ItemDetail(BaseModel):
    item: ReviewItem
    decision: ReviewDecision | None = None


class DecisionRequest(BaseModel):
    """What the page sends: the verdict, the reason (required to reject), the edits, and who
    (the app's reviewer when left out)."""

    verdict: ReviewVerdict
    reason: str = ""
    edit: ItemEdit = ItemEdit()
    reviewer: str | None = None


class DecisionReply(BaseModel):
    decision: ReviewDecision
    progress: Progress


class ExportRequest(BaseModel):
    """``out``: the export folder (relative: to the source's root); left out,
    ``DEFAULT_EXPORT_DIR``."""

    out: str | None = None


def _progress(items: Sequence[ReviewItem], decisions: dict[str, ReviewDecision]) -> Progress:
    verdicts = [decisions[i.id].verdict if i.id in decisions else "pending" for i in items]
    accepted, rejected = verdicts.count("accepted"), verdicts.count("rejected")
    return Progress(reviewed=accepted + rejected, total=len(items), accepted=accepted,
                    rejected=rejected, pending=verdicts.count("pending"))


def _summary(item: ReviewItem, decision: ReviewDecision | None, stale: bool) -> ItemSummary:
    if decision is None:
        return ItemSummary(id=item.id, group=item.group, question=item.question,
                           verdict="pending", stale=stale,
                           reason="decided on an earlier version of this item" if stale
                           else "")
    return ItemSummary(id=item.id, group=item.group, question=item.question,
                       verdict=decision.verdict, reason=decision.reason,
                       reviewer=decision.reviewer, at=decision.at,
                       edited=not decision.edit.empty)


def _check_edit(item: ReviewItem, edit: ItemEdit) -> str | None:
    """Why ``edit`` cannot apply to ``item`` (``None``: it can)."""
    letters = {o.letter for o in item.options}
    if edit.question is not None and not edit.question.strip():
        return "the question cannot be blank"
    for letter, text in edit.options.items():
        if letter not in letters:
            return f"item {item.id} has no option {letter!r}"
        if not text.strip():
            return f"option {letter}'s text cannot be blank"
    if edit.answer is not None:
        if letters and edit.answer not in letters:
            return f"the gold {edit.answer!r} is none of the options {''.join(sorted(letters))}"
        if not edit.answer.strip():
            return "the gold cannot be blank"
    return None


def _same_origin(request: Request) -> bool:
    # a browser names the page's origin on every cross-site POST; tools (curl, tests) name none
    origin = request.headers.get("origin")
    return origin is None or urlsplit(origin).netloc == request.headers.get("host", "")


def create_app(source: ReviewSource, store: DecisionStore, reviewer: str, *,
               allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> FastAPI:
    """The app reviewing ``source``'s items, keeping decisions in ``store``; ``reviewer`` is
    who decides unless a request names someone; ``allowed_hosts`` the ``Host`` names it
    answers (``("*",)``: any, for a server bound beyond loopback)."""
    items = source.items()
    by_id = {item.id: item for item in items}
    root = Path(source.root)
    app = FastAPI(title=f"m3kit review: {source.benchmark}", docs_url=None, redoc_url=None,
                  openapi_url=None)
    app.add_middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts))

    @app.middleware("http")
    async def _refuse_cross_site(request: Request,
                                 call_next: Callable[[Request], Awaitable[Response]]
                                 ) -> Response:
        if request.method not in ("GET", "HEAD") and not _same_origin(request):
            return JSONResponse({"detail": "cross-site request refused"}, status_code=403)
        return await call_next(request)

    @app.exception_handler(M3kitError)
    async def _m3kit_error(request: Request, exc: M3kitError) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=422)

    def item_of(item_id: str) -> ReviewItem:
        item = by_id.get(item_id)
        if item is None:
            raise HTTPException(404, f"no item {item_id!r}")
        return item

    def file_under_root(path: str) -> Path:
        try:
            resolved = resolve_in_root(root, path, root_name="the reviewed folder")
        except UnsafePathError as exc:
            raise HTTPException(403, exc.reason) from None
        if not resolved.is_file():
            raise HTTPException(404, f"no file {path!r} in the reviewed folder")
        return resolved

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", media_type="text/html")

    @app.get("/api/items")
    def list_items() -> ItemList:
        decisions, stale = store.current(items)
        return ItemList(benchmark=source.benchmark, root=str(root), reviewer=reviewer,
                        progress=_progress(items, decisions),
                        items=[_summary(item, decisions.get(item.id), item.id in stale)
                               for item in items])

    @app.get("/api/items/{item_id}")
    def get_item(item_id: str) -> ItemDetail:
        item = item_of(item_id)
        decisions, _ = store.current([item])
        return ItemDetail(item=item, decision=decisions.get(item_id))

    @app.post("/api/items/{item_id}/decision")
    def decide(item_id: str, request: DecisionRequest) -> DecisionReply:
        item = item_of(item_id)
        if request.verdict == "rejected" and not request.reason.strip():
            raise HTTPException(400, "a rejection needs a reason")
        # the app's own checks, then the builder's: an edit the released format would refuse
        # is refused now, not first at export
        problem = _check_edit(item, request.edit) or source.check_edit(item_id, request.edit)
        if problem is not None:
            raise HTTPException(400, problem)
        who = (request.reviewer or "").strip() or reviewer
        decision = ReviewDecision(item_id=item_id, item_fingerprint=item_fingerprint(item),
                                  verdict=request.verdict, reason=request.reason.strip(),
                                  edit=request.edit, reviewer=who, at=datetime.now(UTC))
        store.record(decision)
        return DecisionReply(decision=decision, progress=_progress(items,
                                                                   store.current(items)[0]))

    @app.post("/api/export")
    def export(request: ExportRequest) -> ExportResult:
        out = root / (request.out or DEFAULT_EXPORT_DIR)  # an absolute ``out`` stays itself
        return export_current(source, items, store, out)

    @app.get("/media/{path:path}")
    def media(path: str) -> FileResponse:
        return FileResponse(file_under_root(path))

    @app.get("/pdf/{path:path}")
    def pdf_page(path: str, page: int = 0) -> FileResponse:
        from m3kit.media.pdf import render_pdf_page_file

        try:
            png = render_pdf_page_file(file_under_root(path), page)
        except MediaError as exc:
            raise HTTPException(404, exc.reason) from None
        return FileResponse(png, media_type="image/png")

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app
