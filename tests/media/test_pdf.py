"""PDF pages: count, render, text layer, typed errors. Fixtures are written by the tests."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.errors import CorruptMediaError, M3kitError, MediaNotFoundError
from m3kit.media.pdf import (
    NotAPdfError,
    PdfPageError,
    pdf_page_count,
    pdf_page_text,
    render_pdf_page,
    render_pdf_page_file,
    write_text_pdf,
)


@pytest.fixture
def two_pages(tmp_path: Path) -> Path:
    return write_text_pdf(
        tmp_path / "report.pdf",
        ["Vaccination schedule\nRabies (annual) 12 mg", "Page two: invoice total 340"],
    )


def test_count_and_text_layer(two_pages: Path) -> None:
    assert pdf_page_count(two_pages) == 2
    # Escaped parentheses in the source stream come back as plain characters.
    assert pdf_page_text(two_pages, 0) == "Vaccination schedule\nRabies (annual) 12 mg"
    assert pdf_page_text(two_pages, 1) == "Page two: invoice total 340"


def test_render_size_follows_dpi(two_pages: Path) -> None:
    # US letter 612x792 pt; pixels = pt * dpi / 72: 144 dpi -> 1224x1584, 72 dpi -> 612x792.
    image = render_pdf_page(two_pages, 0)
    assert image.mode == "RGB"
    assert image.size == (1224, 1584)
    assert render_pdf_page(two_pages, 1, dpi=72).size == (612, 792)
    # The page has black text on white: both extremes occur in the render.
    lo, hi = image.convert("L").getextrema()
    assert lo < 64 and hi == 255


def test_blank_area_is_white(tmp_path: Path) -> None:
    # Text sits at the top-left margin; the bottom-right corner stays white paper.
    path = write_text_pdf(tmp_path / "a.pdf", ["x"], width=200, height=200)
    image = render_pdf_page(path, 0, dpi=72)
    assert image.size == (200, 200)
    assert image.getpixel((190, 190)) == (255, 255, 255)


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.pdf"
    with pytest.raises(MediaNotFoundError) as err:
        pdf_page_count(missing)
    assert str(missing) in str(err.value)


@pytest.mark.parametrize("content", [b"", b"not a pdf at all", b"%PDF-1.4\n1 0 obj\n<<"])
def test_corrupt_file(tmp_path: Path, content: bytes) -> None:
    bad = tmp_path / "bad.pdf"
    bad.write_bytes(content)
    for call in (lambda: pdf_page_count(bad), lambda: render_pdf_page(bad, 0),
                 lambda: pdf_page_text(bad, 0)):
        with pytest.raises(NotAPdfError) as err:
            call()
        assert isinstance(err.value, CorruptMediaError)
        assert str(bad) in str(err.value)


def test_directory_is_not_a_pdf(tmp_path: Path) -> None:
    with pytest.raises(NotAPdfError):
        pdf_page_count(tmp_path)


def test_page_out_of_range_names_page(two_pages: Path) -> None:
    with pytest.raises(PdfPageError) as err:
        render_pdf_page(two_pages, 2)
    assert "page 2" in str(err.value) and str(two_pages) in str(err.value)
    with pytest.raises(PdfPageError):
        pdf_page_text(two_pages, -1)
    assert isinstance(err.value, M3kitError) and isinstance(err.value, IndexError)


def test_write_requires_a_page(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        write_text_pdf(tmp_path / "empty.pdf", [])


def test_render_to_file_is_cached_by_identity(two_pages: Path, tmp_path: Path) -> None:
    out = tmp_path / "pages"
    first = render_pdf_page_file(two_pages, 1, out, dpi=72)
    assert first.suffix == ".png" and first.parent == out
    with Image.open(first) as image:
        assert image.size == (612, 792)
    mtime = first.stat().st_mtime_ns
    # Same PDF, page and dpi: the same file, not rendered again.
    assert render_pdf_page_file(two_pages, 1, out, dpi=72) == first
    assert first.stat().st_mtime_ns == mtime
    # Another page or another dpi: another file.
    assert render_pdf_page_file(two_pages, 0, out, dpi=72) != first
    assert render_pdf_page_file(two_pages, 1, out, dpi=144) != first
    with pytest.raises(MediaNotFoundError):
        render_pdf_page_file(tmp_path / "gone.pdf", 0, out)


def _race(render: Callable[[], Path], target: Path, writers: int = 8) -> list[Path]:
    """``writers`` threads render the same page at once while readers open the page's file the
    moment it appears, as parallel samples do: every read must see a whole PNG."""
    start = threading.Barrier(writers + 2)
    done = threading.Event()
    reads: list[tuple[int, int]] = []
    failures: list[BaseException] = []

    def read_while_written() -> None:
        start.wait()
        while not done.is_set():
            if target.is_file():
                try:
                    with Image.open(target) as image:
                        image.load()  # a half-written PNG fails here ("image file is truncated")
                        reads.append(image.size)
                except OSError as exc:
                    failures.append(exc)

    def write() -> Path:
        start.wait()
        return render()

    readers = [threading.Thread(target=read_while_written) for _ in range(2)]
    for reader in readers:
        reader.start()
    with ThreadPoolExecutor(writers) as pool:
        paths = list(pool.map(lambda _: write(), range(writers)))
    done.set()
    for reader in readers:
        reader.join()
    assert failures == []
    assert len(set(reads)) <= 1
    return paths


def test_the_same_page_rendered_by_many_threads_at_once_is_always_whole(
    two_pages: Path, tmp_path: Path
) -> None:
    expected = np.asarray(render_pdf_page(two_pages, 0, dpi=144))
    name = render_pdf_page_file(two_pages, 0, tmp_path / "probe", dpi=144).name
    for attempt in range(4):  # a fresh folder each time: every attempt races the first write
        out = tmp_path / f"pages-{attempt}"
        paths = _race(lambda out=out: render_pdf_page_file(two_pages, 0, out, dpi=144),
                      out / name)
        assert set(paths) == {out / name}
        with Image.open(out / name) as image:
            assert np.array_equal(np.asarray(image.convert("RGB")), expected)
        assert [p.name for p in out.iterdir()] == [name]  # no temporary file left behind


def test_the_same_page_rendered_from_many_asyncio_tasks_at_once(
    two_pages: Path, tmp_path: Path
) -> None:
    import anyio

    out = tmp_path / "pages"

    async def many() -> list[Path]:
        # How samples render under inspect: tasks on one loop, each handing PDFium a thread.
        results: list[Path] = []

        async def one() -> None:
            results.append(await anyio.to_thread.run_sync(
                lambda: render_pdf_page_file(two_pages, 1, out, dpi=144)))

        async with anyio.create_task_group() as group:
            for _ in range(16):
                group.start_soon(one)
        return results

    paths = anyio.run(many)
    assert len(paths) == 16 and len(set(paths)) == 1
    with Image.open(paths[0]) as image:
        image.load()
        assert image.size == (1224, 1584)
