"""Media references: span validation and discriminated-union round trips."""

from __future__ import annotations

import json

import pytest
from pydantic import TypeAdapter, ValidationError

from m3kit.schema import ImageRef, MediaRef, PdfPageRef, TimeSpan, VideoRef

MEDIA_LIST = TypeAdapter(list[MediaRef])


def test_video_ref_round_trip_and_span() -> None:
    ref = VideoRef(path="videos/cooking.mp4", start=12.5, end=30.0)
    assert ref.kind == "video"
    assert ref.span == TimeSpan(start=12.5, end=30.0)
    assert ref.span.duration == 17.5
    assert VideoRef.model_validate_json(ref.model_dump_json()) == ref


def test_video_ref_open_bounds() -> None:
    whole = VideoRef(path="a.mp4")
    assert (whole.start, whole.end, whole.span) == (None, None, None)
    from_start = VideoRef(path="a.mp4", start=0.0)
    assert from_start.span is None
    until = VideoRef(path="a.mp4", end=4.0)
    assert until.end == 4.0


@pytest.mark.parametrize(
    ("start", "end", "field"),
    [(-1.0, 5.0, "start"), (5.0, 5.0, "end"), (6.0, 5.0, "end"), (None, 0.0, "end")],
)
def test_video_ref_rejects_bad_span(start: float | None, end: float, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        VideoRef(path="a.mp4", start=start, end=end)
    assert [e["loc"] for e in info.value.errors()] == [(field,)]


def test_time_span_contains_is_half_open() -> None:
    span = TimeSpan(start=1.0, end=2.0)
    assert span.contains(1.0)
    assert span.contains(1.999)
    assert not span.contains(2.0)
    assert not span.contains(0.5)
    with pytest.raises(ValidationError):
        TimeSpan(start=2.0, end=1.0)


def test_image_and_pdf_round_trip() -> None:
    img = ImageRef(path="images/img_1.jpg", description="a puppy on an IV drip")
    page = PdfPageRef(path="docs/manual.pdf", page=0)
    assert ImageRef.model_validate_json(img.model_dump_json()) == img
    assert PdfPageRef.model_validate_json(page.model_dump_json()) == page
    assert json.loads(page.model_dump_json()) == {
        "kind": "pdf_page",
        "path": "docs/manual.pdf",
        "page": 0,
    }


def test_pdf_page_is_zero_based_non_negative() -> None:
    with pytest.raises(ValidationError):
        PdfPageRef(path="a.pdf", page=-1)


def test_records_are_frozen_and_strict() -> None:
    ref = ImageRef(path="a.jpg")
    with pytest.raises(ValidationError):
        ref.path = "b.jpg"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        ImageRef(path="a.jpg", caption="not a field")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        ImageRef(path="")


def test_media_union_round_trip_keeps_types() -> None:
    refs = [
        VideoRef(path="v.mp4", start=0.0, end=1.5),
        ImageRef(path="i.png"),
        PdfPageRef(path="d.pdf", page=3),
    ]
    dumped = MEDIA_LIST.dump_json(refs)
    back = MEDIA_LIST.validate_json(dumped)
    assert back == refs
    assert [type(r) for r in back] == [VideoRef, ImageRef, PdfPageRef]


def test_media_union_dispatches_on_kind() -> None:
    raw = '[{"kind": "pdf_page", "path": "d.pdf", "page": 2}, {"kind": "image", "path": "x.jpg"}]'
    assert MEDIA_LIST.validate_json(raw) == [
        PdfPageRef(path="d.pdf", page=2),
        ImageRef(path="x.jpg"),
    ]


def test_media_union_rejects_unknown_kind() -> None:
    with pytest.raises(ValidationError) as info:
        MEDIA_LIST.validate_json('[{"kind": "audio", "path": "a.wav"}]')
    assert info.value.errors()[0]["type"] == "union_tag_invalid"


def test_schema_imports_without_heavy_dependencies() -> None:
    # The schema layer must stay importable where av, torch or inspect-ai are absent.
    import subprocess
    import sys

    code = (
        "import sys, m3kit.schema; "
        "heavy = {'av', 'torch', 'inspect_ai', 'numpy', 'PIL'}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
