"""PDF pages: count, render to an image, read the text layer.

Pages are 0-based, as in :class:`m3kit.schema.PdfPageRef`. Rendering defaults to 144 dpi, the
resolution M3Exam's oracle regime attaches pages at (Appendix B). Backed by pypdfium2, imported
lazily so that ``m3kit.media`` stays importable without it.

Bad input is a typed error naming the file (and the page): a missing path is
:class:`MediaNotFoundError`, a file that is not a readable PDF (a directory, an empty or
damaged file, an encrypted one) is :class:`NotAPdfError`, a page outside the document is
:class:`PdfPageError`.

``write_text_pdf`` writes a small, valid text-only PDF; tests across m3kit use it to make PDF
fixtures in ``tmp_path`` without shipping binary files.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError
from m3kit.files import atomic_file
from m3kit.paths import cache_dir

if TYPE_CHECKING:
    from PIL.Image import Image

__all__ = [
    "PDF_DPI",
    "NotAPdfError",
    "PdfPageError",
    "pdf_page_count",
    "pdf_page_text",
    "pdf_pages_dir",
    "render_pdf_page",
    "render_pdf_page_file",
    "write_text_pdf",
]

PDF_DPI = 144
"""Default render resolution (M3Exam Appendix B renders PDF pages at 144 dpi)."""

_POINTS_PER_INCH = 72.0

# PDFium is not thread-safe (pypdfium2 documents this): two threads inside it at once can crash
# the process. inspect may run samples on worker threads, so every call into it is serialised.
_PDFIUM_LOCK = threading.Lock()


class NotAPdfError(CorruptMediaError):
    """The path exists but is not a readable PDF (directory, empty, damaged, encrypted)."""


class PdfPageError(MediaError, IndexError):
    """A page index outside the document."""


@contextmanager
def _open(path: str | Path) -> Iterator[Any]:
    """Open ``path`` under the PDFium lock; close it on exit; map failures to typed errors."""
    p = Path(path)
    if not p.exists():
        raise MediaNotFoundError("no such PDF file", path=p)
    if not p.is_file():
        raise NotAPdfError("not a file", path=p)
    if p.stat().st_size == 0:
        raise NotAPdfError("empty file, not a PDF", path=p)
    import pypdfium2 as pdfium

    with _PDFIUM_LOCK:
        try:
            doc = pdfium.PdfDocument(p)
        except pdfium.PdfiumError as exc:
            raise NotAPdfError(f"cannot open as PDF ({exc})", path=p) from exc
        try:
            yield doc
        finally:
            doc.close()


def _page(doc: Any, path: str | Path, page: int) -> Any:
    n = len(doc)
    if not isinstance(page, int) or page < 0 or page >= n:
        raise PdfPageError(f"page {page} out of range (document has {n} pages, 0-based)",
                           path=path, record=f"page {page}")
    return doc[page]


def pdf_page_count(path: str | Path) -> int:
    """Number of pages of the PDF at ``path``."""
    with _open(path) as doc:
        return len(doc)


def render_pdf_page(path: str | Path, page: int, dpi: int = PDF_DPI) -> Image:
    """Render 0-based ``page`` of the PDF at ``path`` to an RGB PIL image at ``dpi``.

    A US-letter page (612×792 pt) at 144 dpi is 1224×1584 pixels: scale = dpi / 72.
    """
    if dpi <= 0:
        raise PdfPageError(f"dpi must be positive, got {dpi}", path=path, record=f"page {page}")
    with _open(path) as doc:
        pg = _page(doc, path, page)
        try:
            bitmap = pg.render(scale=dpi / _POINTS_PER_INCH)
            image = bitmap.to_pil().convert("RGB")
        except Exception as exc:  # PDFium reports damaged page content as generic errors
            raise NotAPdfError(f"cannot render page ({exc})", path=path,
                               record=f"page {page}") from exc
        finally:
            pg.close()
        return image


def pdf_pages_dir() -> Path:
    """Where rendered pages are kept unless a caller names a folder: ``<cache_dir>/pdf_pages``."""
    return cache_dir() / "pdf_pages"


def render_pdf_page_file(
    path: str | Path, page: int, directory: str | Path | None = None, dpi: int = PDF_DPI
) -> Path:
    """Render 0-based ``page`` at ``dpi`` to a PNG file in ``directory`` and return its path.

    ``directory`` defaults to ``pdf_pages_dir()``. The file name is a hash of the PDF's
    ``file_stamp`` (resolved path, size, modification time), the page and the dpi, so a page is
    rendered once, a changed PDF gets a new file, and one folder serves every caller and process.
    The PNG is written atomically. Model providers and OCR read images by path, which is why
    pages are materialised at all.
    """
    import hashlib

    from m3kit.media.identity import file_stamp

    p = Path(path)
    try:
        resolved, size, mtime_ns = file_stamp(p)
    except MediaNotFoundError:
        raise MediaNotFoundError("no such PDF file", path=p) from None
    ident = f"{resolved}|{size}|{mtime_ns}|{page}|{dpi}"
    out_dir = Path(directory) if directory is not None else pdf_pages_dir()
    target = out_dir / f"{hashlib.sha256(ident.encode()).hexdigest()[:24]}.png"
    if target.is_file():
        return target
    image = render_pdf_page(p, page, dpi=dpi)
    out_dir.mkdir(parents=True, exist_ok=True)
    # A concurrent reader never sees a half-written PNG.
    with atomic_file(target, "wb") as fh:
        image.save(fh, format="PNG")
    return target


def pdf_page_text(path: str | Path, page: int) -> str:
    """The text layer of 0-based ``page``; ``""`` for a scanned page without one.

    Line ends are normalised to ``\\n`` (PDFium reports ``\\r\\n``) and the result is stripped.
    """
    with _open(path) as doc:
        pg = _page(doc, path, page)
        try:
            textpage = pg.get_textpage()
            try:
                text = textpage.get_text_range()
            finally:
                textpage.close()
        except Exception as exc:
            raise NotAPdfError(f"cannot read text layer ({exc})", path=path,
                               record=f"page {page}") from exc
        finally:
            pg.close()
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _pdf_string(text: str) -> str:
    """A PDF literal string: escape the three characters that are special inside ``( )``."""
    safe = text.encode("latin-1", errors="replace").decode("latin-1")
    return "(" + safe.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ")"


def write_text_pdf(
    path: str | Path,
    pages: Sequence[str],
    *,
    width: float = 612.0,
    height: float = 792.0,
    font_size: float = 12.0,
) -> Path:
    """Write a text-only PDF with one page per entry of ``pages`` (lines split on ``\\n``).

    Uses the standard Helvetica font (no embedding), so the text layer reads back exactly for
    Latin-1 text. Returns ``path``.
    """
    if not pages:
        raise ValueError("a PDF needs at least one page")
    n = len(pages)
    # Object numbers: 1 catalog, 2 page tree, 3 font, then (page, content) pairs.
    objects: list[bytes] = []
    kids = " ".join(f"{4 + 2 * i} 0 R" for i in range(n))
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {n} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    leading = font_size * 1.2
    for i, text in enumerate(pages):
        ops = [f"BT /F1 {font_size:g} Tf {leading:g} TL 72 {height - 72:g} Td"]
        for line in text.split("\n"):
            ops.append(f"{_pdf_string(line)} Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width:g} {height:g}] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>".encode()
        )
        objects.append(
            f"<< /Length {len(stream)} >>\nstream\n".encode() + stream + b"\nendstream"
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += (f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n"
            f"startxref\n{xref}\n%%EOF\n").encode()
    p = Path(path)
    p.write_bytes(bytes(out))
    return p
