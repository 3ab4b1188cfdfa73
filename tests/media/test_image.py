"""Still images are read with a pixel bound checked before decoding, and typed errors."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.errors import CorruptMediaError, MediaNotFoundError, MediaTooLargeError
from m3kit.media.image import MAX_IMAGE_PIXELS, read_image_rgb


def png_header_only(path: Path, width: int, height: int) -> Path:
    """A PNG whose header claims ``width`` x ``height`` pixels and whose data is one tiny
    deflate stream: what a decompression bomb looks like to a reader before it decodes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
                     + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) + chunk(b"IEND", b""))
    return path


def png_bomb(path: Path, width: int = 30_000, height: int = 30_000) -> Path:
    """A whole 1-bit PNG of ``width`` x ``height`` black pixels (30000 x 30000: 9e8 pixels in
    about 110 KB, the 112 MB of rows deflated 1000:1): a real decompression bomb, every row
    there, made in well under a second without holding the image."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    row = bytes(1 + (width + 7) // 8)  # filter byte 0, then the packed row
    deflate = zlib.compressobj(9)
    idat = b"".join([*(deflate.compress(row) for _ in range(height)), deflate.flush()])
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat)
                     + chunk(b"IEND", b""))
    return path


def test_a_good_image_reads_as_rgb(tmp_path: Path) -> None:
    path = tmp_path / "grey.png"
    Image.new("L", (5, 3), 77).save(path)
    pixels = read_image_rgb(path)
    assert pixels.shape == (3, 5, 3) and pixels.dtype == np.uint8
    assert int(pixels[0, 0, 0]) == 77


def test_a_bomb_is_refused_from_its_header(tmp_path: Path) -> None:
    # 30000 x 30000 = 9e8 pixels, ten times the bound: refused before a pixel is decoded
    bomb = png_header_only(tmp_path / "bomb.png", 30_000, 30_000)
    with pytest.raises(MediaTooLargeError, match="over the bound of 89478485 pixels") as info:
        read_image_rgb(bomb, record="D1:2/img_1")
    assert (info.value.path, info.value.record) == (str(bomb), "D1:2/img_1")
    # just over the bound (under Pillow's own error threshold): still ours to refuse
    side = int(MAX_IMAGE_PIXELS ** 0.5) + 1
    with pytest.raises(MediaTooLargeError, match=f"{side}x{side} pixels is over the bound"):
        read_image_rgb(png_header_only(tmp_path / "big.png", side, side))
    with pytest.raises(MediaTooLargeError, match="over the bound of 14"):
        read_image_rgb(png_header_only(tmp_path / "small.png", 5, 3), max_pixels=14)


def test_damaged_and_missing_images_are_typed(tmp_path: Path) -> None:
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    with pytest.raises(CorruptMediaError, match="cannot read the image"):
        read_image_rgb(junk)
    truncated = tmp_path / "cut.jpg"
    Image.new("RGB", (64, 64), (200, 10, 10)).save(truncated, format="JPEG")
    truncated.write_bytes(truncated.read_bytes()[:200])
    with pytest.raises(CorruptMediaError):
        read_image_rgb(truncated)
    with pytest.raises(MediaNotFoundError):
        read_image_rgb(tmp_path / "none.png")


# -- inline images (data URIs) and web links ------------------------------------------------------


def _data_uri(image: Image.Image, fmt: str = "JPEG", mime: str = "image/jpeg") -> str:
    import base64
    import io

    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def test_an_inline_image_decodes_like_a_file() -> None:
    from m3kit.media.image import check_image, image_available

    uri = _data_uri(Image.new("RGB", (6, 4), (200, 10, 10)), "PNG", "image/png")
    assert image_available(uri)
    assert check_image(uri, record="D5:6") == (6, 4)
    pixels = read_image_rgb(uri)
    assert pixels.shape == (4, 6, 3) and tuple(int(v) for v in pixels[0, 0]) == (200, 10, 10)
    # Line breaks inside the base64 (as some writers wrap it) are no part of the payload.
    wrapped = uri[:60] + "\n" + uri[60:]
    assert read_image_rgb(wrapped).shape == (4, 6, 3)


@pytest.mark.parametrize(
    ("uri", "reason"),
    [
        ("data:image/jpeg;base64", "',' before its payload"),
        ("data:image/jpeg,rawbytes", "not base64"),
        ("data:text/plain;base64,aGVsbG8=", "is not an image"),
        ("data:image/jpeg;base64,not*base64!", "bad base64"),
        ("data:image/jpeg;base64,", "empty payload"),
    ],
)
def test_a_malformed_inline_image_is_a_named_error(uri: str, reason: str) -> None:
    from m3kit.media.image import InlineImageError, check_image

    for read in (read_image_rgb, check_image):
        with pytest.raises(InlineImageError, match=reason) as caught:
            read(uri, record="conv-42 D5:6")
        assert caught.value.record == "conv-42 D5:6"
        assert len(str(caught.value)) < 200  # the payload is cut from the message
    # Base64 of bytes that are no image: decodes, then fails as any damaged image does.
    with pytest.raises(CorruptMediaError):
        read_image_rgb("data:image/jpeg;base64,aGVsbG8gd29ybGQ=")


def test_an_inline_image_is_bounded_before_it_is_decoded() -> None:
    from m3kit.media.image import inline_image_bytes

    uri = _data_uri(Image.new("RGB", (64, 64), (1, 2, 3)), "PNG", "image/png")
    size = len(inline_image_bytes(uri))
    assert inline_image_bytes(uri, max_bytes=size + 2) is not None
    with pytest.raises(MediaTooLargeError, match="over the bound of 10 bytes"):
        inline_image_bytes(uri, max_bytes=10)


def test_a_web_link_is_never_fetched() -> None:
    from m3kit.media.image import RemoteImageError, image_available

    url = "https://example.invalid/lake.jpg"
    assert not image_available(url)
    with pytest.raises(RemoteImageError, match="offline") as caught:
        read_image_rgb(url, record="D1:2")
    assert caught.value.path == url


def test_a_path_the_file_system_refuses_is_no_file() -> None:
    from m3kit.media.image import image_available

    # What a data URI read as a path looked like: a name longer than any file system allows.
    assert not image_available("x" * 5000)
    with pytest.raises(MediaNotFoundError):
        read_image_rgb("x" * 5000)


# -- the gate before an image is sent -------------------------------------------------------------


def test_an_image_leaves_as_a_data_uri_only_under_the_bound(tmp_path: Path) -> None:
    import base64

    from m3kit.media.image import RemoteImageError, image_data_uri

    bomb = png_bomb(tmp_path / "bomb.png")
    assert bomb.stat().st_size < 1_000_000  # 900 MP in a file a chat would happily carry
    inline = "data:image/png;base64," + base64.b64encode(bomb.read_bytes()).decode("ascii")
    for ref in (bomb, inline):
        with pytest.raises(MediaTooLargeError, match="over the bound of 89478485") as info:
            image_data_uri(ref, record="D1:1/img_2")
        assert info.value.record == "D1:1/img_2"
    good = tmp_path / "photo.jpg"  # a PNG under a .jpg name: the header's type is sent
    Image.new("RGB", (6, 4), (1, 2, 3)).save(good, format="PNG")
    uri = image_data_uri(good)
    assert uri.startswith("data:image/png;base64,")
    assert base64.b64decode(uri.split(",", 1)[1]) == good.read_bytes()
    assert image_data_uri(uri) == uri
    with pytest.raises(MediaTooLargeError, match="over the bound of 10 bytes"):
        image_data_uri(good, max_bytes=10)  # refused before it is read
    junk = tmp_path / "junk.png"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n not really")
    with pytest.raises(CorruptMediaError, match="junk.png"):
        image_data_uri(junk)
    with pytest.raises(MediaNotFoundError):
        image_data_uri(tmp_path / "none.png")
    with pytest.raises(RemoteImageError):
        image_data_uri("https://example.invalid/lake.jpg")
