"""What killed writers leave in a frame store is reclaimed on open; formats never answer for
each other."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import numpy as np
import pytest

from m3kit.files import STALE_TEMP_S, is_temp_name, new_temp_beside
from m3kit.media.decode import VideoDecoder
from m3kit.media.store import FrameStore


def temp_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if is_temp_name(p.name))


def images(root: Path) -> list[Path]:
    return sorted(p for p in (root / "frames").rglob("*") if p.is_file()
                  and not is_temp_name(p.name))


def fake_temp(final: Path, size: int, *, age_s: float = 0.0) -> Path:
    """A temporary file as a writer makes it (``new_temp_beside``), ``size`` bytes long."""
    temp = new_temp_beside(final)
    temp.write_bytes(b"\xff" * size)
    if age_s:
        then = time.time() - age_s
        os.utime(temp, (then, then))
    return temp


def test_temp_files_of_a_dead_writer_are_removed_and_counted_on_open(small_video, tmp_path):
    root = tmp_path / "store"
    with FrameStore(root, image_format="png") as store:
        stored = store.get_paths(small_video, [0, 50])
    shard = stored[0].parent
    # What a writer killed mid-encode leaves: partial images in shards, a partial index.
    orphans = [
        fake_temp(shard / ("ab" * 32 + ".png"), 1000),
        fake_temp(root / "frames" / "cd" / ("cd" * 32 + ".jpg"), 2500),
        fake_temp(root / "index" / "deadbeef.npz", 300),
    ]
    assert temp_files(root) == sorted(orphans)
    with FrameStore(root, image_format="png") as store:  # no other instance has it open
        assert temp_files(root) == []
        assert store.stats.orphans_removed == 3
        assert store.stats.orphan_bytes == 1000 + 2500 + 300
        assert store.frame_count() == 2  # the committed images are untouched
        assert store.size_bytes() == sum(p.stat().st_size for p in stored)


def test_a_live_writers_temp_files_are_kept_until_stale(small_video, tmp_path):
    root = tmp_path / "store"
    with FrameStore(root, image_format="png") as writer:  # open: its temp files may be live
        writer.get_paths(small_video, [1])
        fresh = fake_temp(root / "frames" / "ee" / ("ee" * 32 + ".png"), 700)
        stale = fake_temp(root / "frames" / "ee" / ("ef" * 32 + ".png"), 900,
                          age_s=STALE_TEMP_S + 60)
        with FrameStore(root, image_format="png") as other:
            assert other.stats.orphans_removed == 1 and other.stats.orphan_bytes == 900
        assert temp_files(root) == [fresh] and not stale.exists()
    with FrameStore(root, image_format="png") as alone:
        assert alone.stats.orphans_removed == 1 and temp_files(root) == []


def test_images_whose_rows_were_never_committed_are_adopted_into_the_budget(
    small_video, tmp_path
):
    root = tmp_path / "store"
    with FrameStore(root, image_format="png") as store:
        paths = store.get_paths(small_video, [10, 20, 30])
    sizes = [p.stat().st_size for p in paths]
    # A writer killed between moving its images into place and committing their rows.
    with sqlite3.connect(root / "store.sqlite") as conn:
        conn.execute("DELETE FROM frames")
    damaged = root / "frames" / "00" / ("0" * 64 + ".png")  # named like an image, not one
    damaged.parent.mkdir(exist_ok=True)
    damaged.write_bytes(b"not a png")
    with FrameStore(root, image_format="png", budget_bytes=10**9) as store:
        assert store.stats.orphans_adopted == 3
        assert store.stats.orphans_removed == 1  # the damaged one
        assert store.frame_count() == 3 and store.size_bytes() == sum(sizes)
        assert images(root) == sorted(paths)
        got = store.get_frames(small_video, [10, 20, 30])
        assert store.stats.hits == 3 and store.stats.frames_decoded == 0
    with VideoDecoder(small_video) as decoder:
        wanted = decoder.get_frames([10, 20, 30])
        assert all(np.array_equal(g, w) for g, w in zip(got, wanted, strict=True))


def test_adopted_images_count_against_the_budget(small_video, tmp_path):
    root = tmp_path / "store"
    with FrameStore(root, image_format="png") as store:
        paths = store.get_paths(small_video, [5, 6, 7, 8])
    with sqlite3.connect(root / "store.sqlite") as conn:
        conn.execute("DELETE FROM frames")
    one = max(p.stat().st_size for p in paths)
    with FrameStore(root, image_format="png", budget_bytes=2 * one) as store:
        assert store.stats.orphans_adopted == 4
        assert store.size_bytes() <= 2 * one  # over the budget once adopted: evicted
        assert store.stats.evicted >= 2
        assert len(images(root)) == store.frame_count()


def test_rows_whose_image_is_gone_are_dropped(small_video, tmp_path):
    root = tmp_path / "store"
    with FrameStore(root, image_format="png") as store:
        kept, lost = store.get_paths(small_video, [3, 4])
    lost.unlink()  # an eviction whose transaction was rolled back after the unlink
    with FrameStore(root, image_format="png") as store:
        assert store.stats.rows_dropped == 1
        assert store.frame_count() == 1 and store.size_bytes() == kept.stat().st_size


# -- formats -----------------------------------------------------------------------------------


def test_a_jpeg_entry_never_answers_a_png_request(small_video, tmp_path):
    root = tmp_path / "store"
    indices = [0, 33, 66]
    with FrameStore(root, image_format="jpeg") as jpeg:
        jpeg.get_frames(small_video, indices)
        assert jpeg.stats.misses == 3
    with FrameStore(root, image_format="png") as png:
        first = png.get_frames(small_video, indices)
        assert png.stats.misses == 3 and png.stats.hits == 0  # the jpeg entries do not count
    with FrameStore(root, image_format="png") as png:
        second = png.get_frames(small_video, indices)
        assert png.stats.hits == 3 and png.stats.frames_decoded == 0
    with VideoDecoder(small_video) as decoder:
        exact = decoder.get_frames(indices)
    for a, b, want in zip(first, second, exact, strict=True):
        assert np.array_equal(a, want) and np.array_equal(b, want)  # bit-exact, every run
    suffixes = sorted(p.suffix for p in images(root))
    assert suffixes == [".jpg"] * 3 + [".png"] * 3


def test_get_paths_reports_every_index_once(small_video, tmp_path):
    seen: list[int] = []
    with FrameStore(tmp_path / "store", image_format="png") as store:
        store.get_paths(small_video, [4, 2, 4], on_frame=seen.append)
        assert sorted(seen) == [2, 4]
        seen.clear()
        store.get_paths(small_video, [2, 9], on_frame=seen.append)  # 2 stored, 9 decoded
        assert sorted(seen) == [2, 9]


@pytest.mark.parametrize("image_format", ["jpeg", "png"])
def test_store_files_are_in_the_store_format(small_video, tmp_path, image_format):
    with FrameStore(tmp_path / "s", image_format=image_format) as store:
        (path,) = store.get_paths(small_video, [12])
    head = path.read_bytes()[:8]
    assert head.startswith(b"\x89PNG") if image_format == "png" else head.startswith(b"\xff\xd8")
