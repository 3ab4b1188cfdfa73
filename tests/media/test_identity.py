"""Content identity: the same bytes give the same identity under any name; edits change it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from m3kit.errors import MediaError, MediaNotFoundError
from m3kit.media.identity import BLOCK, IdentityCache, file_identity


def random_file(path: Path, size: int, seed: int = 0) -> Path:
    path.write_bytes(np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes())
    return path


def flip_byte(path: Path, offset: int) -> None:
    with path.open("r+b") as fh:
        fh.seek(offset)
        value = fh.read(1)[0]
        fh.seek(offset)
        fh.write(bytes([value ^ 0xFF]))


@pytest.fixture()
def big_file(tmp_path: Path) -> Path:
    """Larger than three sampled blocks, so the fingerprint samples it."""
    return random_file(tmp_path / "big.bin", 5 * BLOCK + 12345)


def test_identity_is_a_sha256_hex_digest(small_video):
    ident = file_identity(small_video)
    assert len(ident) == 64
    int(ident, 16)


def test_copies_and_renames_share_the_identity(small_video, tmp_path):
    copy = tmp_path / "elsewhere" / "renamed.mov"
    copy.parent.mkdir()
    shutil.copyfile(small_video, copy)
    assert file_identity(copy) == file_identity(small_video)
    moved = tmp_path / "moved.mp4"
    copy.rename(moved)
    assert file_identity(moved) == file_identity(small_video)


def test_different_content_differs(pattern_video_factory, small_video):
    other = pattern_video_factory(hue=0.5)
    assert file_identity(other) != file_identity(small_video)


def test_small_file_is_hashed_whole(tmp_path):
    path = random_file(tmp_path / "small.bin", 2 * BLOCK + 7)
    before = file_identity(path)
    flip_byte(path, BLOCK + 3)  # would fall between sampled blocks of a large file
    assert file_identity(path) != before


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_edit_in_a_sampled_block_changes_the_identity(big_file, where):
    size = big_file.stat().st_size
    offset = {"first": 10, "middle": (size - BLOCK) // 2 + 100, "last": size - 5}[where]
    before = file_identity(big_file)
    flip_byte(big_file, offset)
    assert file_identity(big_file) != before


def test_size_change_changes_the_identity(big_file):
    before = file_identity(big_file)
    with big_file.open("ab") as fh:
        fh.write(b"\0")
    assert file_identity(big_file) != before


def test_same_length_edit_between_samples_is_not_seen(big_file):
    # The documented price of hashing 3 MiB instead of the whole file.
    before = file_identity(big_file)
    flip_byte(big_file, BLOCK + 10)
    assert file_identity(big_file) == before


def test_missing_file_raises_not_found_naming_it(tmp_path):
    missing = tmp_path / "nope.mp4"
    with pytest.raises(MediaNotFoundError) as info:
        file_identity(missing)
    assert str(missing) in str(info.value)
    assert isinstance(info.value, FileNotFoundError)


def test_directory_is_refused(tmp_path):
    with pytest.raises(MediaError, match="directory") as info:
        file_identity(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_cache_returns_the_identity_and_notices_changes(big_file):
    cache = IdentityCache()
    first = cache.identity(big_file)
    assert first == file_identity(big_file)
    assert cache.identity(str(big_file)) == first
    assert len(cache) == 1
    flip_byte(big_file, 0)
    # Keep the old mtime: the cache must still notice (inode change time, size, inode).
    stat = big_file.stat()
    os.utime(big_file, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert cache.identity(big_file) == file_identity(big_file) != first


def test_cache_notices_a_replaced_file(tmp_path):
    path = random_file(tmp_path / "a.bin", 1000, seed=1)
    cache = IdentityCache()
    first = cache.identity(path)
    replacement = random_file(tmp_path / "b.bin", 1000, seed=2)
    os.replace(replacement, path)
    assert cache.identity(path) == file_identity(path) != first


def test_cache_raises_for_missing_files(tmp_path):
    with pytest.raises(MediaNotFoundError):
        IdentityCache().identity(tmp_path / "gone.mp4")
