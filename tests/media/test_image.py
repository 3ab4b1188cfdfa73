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
