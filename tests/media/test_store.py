"""The frame store on real generated videos: exact frames, no second decode, budget, processes."""

from __future__ import annotations

import multiprocessing
import os
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from m3kit.errors import FrameStoreError, MediaNotFoundError, NotAVideoError, SamplingError
from m3kit.files import is_temp_name
from m3kit.media.decode import VideoDecoder
from m3kit.media.generate import read_frame_code
from m3kit.media.identity import file_identity
from m3kit.media.resize import Resize
from m3kit.media.store import FrameRequest, FrameStore, StoreStats

from ..forking import check_in_forked_child

FRAMES = 100  # frames of the ``small_video`` fixture


def reference(video: Path, indices, resize: Resize | None = None) -> list[np.ndarray]:
    with VideoDecoder(video) as decoder:
        return decoder.get_frames(list(indices), resize=resize)


def all_equal(got: list[np.ndarray], want: list[np.ndarray]) -> bool:
    return len(got) == len(want) and all(
        g.dtype == np.uint8 and np.array_equal(g, w) for g, w in zip(got, want, strict=True)
    )


def stored_files(root: Path) -> list[Path]:
    return [p for p in (root / "frames").rglob("*") if p.is_file()]


def temp_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if is_temp_name(p.name)]


def assert_consistent(root: Path) -> None:
    """Recorded sizes describe exactly the files on disk; no temporary file is left."""
    with FrameStore(root, image_format="png") as store:
        files = [p for p in stored_files(root) if not is_temp_name(p.name)]
        assert store.size_bytes() == sum(p.stat().st_size for p in files)
        assert store.frame_count() == len(files)
    assert temp_files(root) == []


@pytest.fixture()
def png_root(tmp_path: Path) -> Path:
    return tmp_path / "store"


# -- exact frames and no second decode ---------------------------------------------------------


def test_png_store_returns_the_decoder_frames_in_order_with_repeats(small_video, png_root):
    indices = [7, 0, 99, 7, 42, 43]
    with FrameStore(png_root, image_format="png") as store:
        frames = store.get_frames(small_video, indices)
        assert store.stats.misses == 5 and store.stats.hits == 0
        assert store.stats.decode_passes == 1 and store.stats.frames_decoded > 0
    assert all_equal(frames, reference(small_video, indices))
    assert [read_frame_code(f) for f in frames] == indices


def test_second_request_decodes_nothing_from_a_fresh_instance(small_video, png_root):
    indices = [3, 30, 60, 90]
    with FrameStore(png_root, image_format="png") as first:
        first.get_frames(small_video, indices)
    with FrameStore(png_root, image_format="png") as second:  # nothing in memory: all on disk
        frames = second.get_frames(small_video, indices[::-1])
        assert second.stats.frames_decoded == 0
        assert second.stats.decode_passes == 0
        assert second.stats.hits == 4 and second.stats.misses == 0
    assert all_equal(frames, reference(small_video, indices[::-1]))


def test_partly_stored_request_decodes_only_the_missing_frames(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        store.get_frames(small_video, [10, 20])
        frames = store.get_frames(small_video, [10, 20, 30])
        assert store.stats.hits == 2 and store.stats.misses == 3 and store.stats.decode_passes == 2
    assert all_equal(frames, reference(small_video, [10, 20, 30]))


def test_returned_arrays_are_writable_rgb(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        store.get_frames(small_video, [5])
        (frame,) = store.get_frames(small_video, [5])
    assert frame.shape == (120, 160, 3) and frame.flags.writeable


def test_jpeg_is_close_and_keeps_the_frame_code(small_video, tmp_path):
    indices = [1, 50, 98]
    want = reference(small_video, indices)
    with FrameStore(tmp_path / "jpeg", image_format="jpeg", jpeg_quality=90) as store:
        cold = store.get_frames(small_video, indices)
    with FrameStore(tmp_path / "jpeg", image_format="jpeg", jpeg_quality=90) as store:
        warm = store.get_frames(small_video, indices)
        assert store.stats.frames_decoded == 0
    assert all_equal(cold, want)  # a miss returns the decoded frame itself
    for frame, exact, index in zip(warm, want, indices, strict=True):
        assert frame.shape == exact.shape
        assert np.abs(frame.astype(np.int16) - exact).mean() < 3.0
        assert read_frame_code(frame) == index
    assert all(p.suffix == ".jpg" for p in stored_files(tmp_path / "jpeg"))


def test_format_and_quality_are_part_of_the_key(small_video, tmp_path):
    root = tmp_path / "shared"
    with FrameStore(root, image_format="jpeg", jpeg_quality=90) as store:
        store.get_frames(small_video, [4])
    for kwargs in ({"image_format": "jpeg", "jpeg_quality": 70}, {"image_format": "png"}):
        with FrameStore(root, **kwargs) as store:
            store.get_frames(small_video, [4])
            assert store.stats.misses == 1
    assert len(stored_files(root)) == 3


def test_resize_is_part_of_the_key(small_video, png_root):
    half, small = Resize(width=80), Resize(max_side=64)
    with FrameStore(png_root, image_format="png") as store:
        full = store.get_frames(small_video, [12])
        resized = store.get_frames(small_video, [12], resize=half)
        assert store.stats.misses == 2 and store.stats.hits == 0
        other = store.get_frames(small_video, [12], resize=small)
        assert store.stats.misses == 3
        again = store.get_frames(small_video, [12], resize=half)
        assert store.stats.misses == 3 and store.stats.hits == 1
    assert full[0].shape == (120, 160, 3)
    assert resized[0].shape == (60, 80, 3) and other[0].shape == (48, 64, 3)
    assert all_equal(resized, reference(small_video, [12], half))
    assert all_equal(again, resized)
    assert all_equal(other, reference(small_video, [12], small))


def test_same_content_under_another_name_hits(small_video, png_root, tmp_path):
    with FrameStore(png_root, image_format="png") as store:
        store.get_frames(small_video, [0, 25, 77])
    copy = tmp_path / "copies" / "holiday.mp4"
    copy.parent.mkdir()
    shutil.copyfile(small_video, copy)
    with FrameStore(png_root, image_format="png") as store:
        frames = store.get_frames(copy, [77, 25])
        assert store.stats.hits == 2 and store.stats.decode_passes == 0
    assert all_equal(frames, reference(small_video, [77, 25]))


def test_other_content_misses(pattern_video_factory, small_video, png_root):
    other = pattern_video_factory(hue=0.25)
    with FrameStore(png_root, image_format="png") as store:
        store.get_frames(small_video, [5])
        frames = store.get_frames(other, [5])
        assert store.stats.misses == 2
    assert all_equal(frames, reference(other, [5]))


# -- batching -----------------------------------------------------------------------------------


def test_fetch_many_decodes_each_video_once(pattern_video_factory, small_video, png_root):
    other = pattern_video_factory(hue=0.5)
    half = Resize(height=60)
    requests = [
        FrameRequest(small_video, (1, 2, 3)),
        FrameRequest(other, (80, 10)),
        FrameRequest(small_video, (3, 70, 1), half),
        FrameRequest(small_video, (2, 90)),
        FrameRequest(other, [10, 11]),
    ]
    with FrameStore(png_root, image_format="png") as store:
        results = store.fetch_many(requests)
        assert store.stats.decode_passes == 2
        # distinct (video, index, resize) frames: 1,2,3,90 + 3,70,1 (half) + other 80,10,11
        assert store.stats.misses == 10 and store.stats.hits == 0
    for request, frames in zip(requests, results, strict=True):
        assert all_equal(frames, reference(Path(request.video), request.indices, request.resize))
    with FrameStore(png_root, image_format="png") as store:
        again = store.fetch_many(requests)
        assert store.stats.decode_passes == 0 and store.stats.misses == 0
    assert all(all_equal(a, b) for a, b in zip(again, results, strict=True))


def test_fetch_many_serves_a_copy_and_its_original_in_one_pass(small_video, png_root, tmp_path):
    copy = tmp_path / "copy.mp4"
    shutil.copyfile(small_video, copy)
    with FrameStore(png_root, image_format="png") as store:
        results = store.fetch_many([FrameRequest(small_video, (5, 6)), FrameRequest(copy, (6, 7))])
        assert store.stats.decode_passes == 1 and store.stats.misses == 3
    assert all_equal(results[1], reference(small_video, [6, 7]))


def test_empty_requests(small_video, png_root):
    with FrameStore(png_root) as store:
        assert store.get_frames(small_video, []) == []
        assert store.fetch_many([]) == []
        assert store.get_paths(small_video, []) == []
        assert store.stats.decode_passes == 0


# -- paths --------------------------------------------------------------------------------------


def test_get_paths_stores_and_returns_image_files(small_video, png_root):
    indices = [9, 19, 9]
    with FrameStore(png_root, image_format="png") as store:
        paths = store.get_paths(small_video, indices)
        assert store.stats.misses == 2
    assert paths[0] == paths[2] and paths[0] != paths[1]
    assert all(p.is_file() and p.suffix == ".png" and p.is_relative_to(png_root) for p in paths)
    with FrameStore(png_root, image_format="png") as store:
        assert store.get_paths(small_video, indices) == paths
        assert store.stats.decode_passes == 0 and store.stats.hits == 2
        frames = store.get_frames(small_video, indices)
    assert all_equal(frames, reference(small_video, indices))


def test_get_paths_never_evicts_its_own_images(small_video, png_root):
    with FrameStore(png_root, budget_bytes=1, image_format="png") as store:
        paths = store.get_paths(small_video, [1, 2, 3])
        assert all(p.is_file() for p in paths)
        store.get_paths(small_video, [4])
        assert not any(p.is_file() for p in paths)  # evicted by the next call
    assert_consistent(png_root)


# -- the index cache -----------------------------------------------------------------------------


def test_index_is_cached_by_content(small_video, png_root):
    with FrameStore(png_root) as store:
        store.get_frames(small_video, [1])
        cached = png_root / "index" / f"{file_identity(small_video)}.npz"
        assert cached.is_file()
        index = store.index_for(small_video)
    with VideoDecoder(small_video) as decoder:
        assert np.array_equal(index.pts, decoder.index.pts)
        assert np.array_equal(index.keyframe, decoder.index.keyframe)
        assert index.time_base == decoder.index.time_base
    assert len(index) == FRAMES


def test_damaged_index_cache_is_rebuilt(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        store.index_for(small_video)
    cached = png_root / "index" / f"{file_identity(small_video)}.npz"
    cached.write_bytes(b"not an npz")
    with FrameStore(png_root, image_format="png") as store:
        frames = store.get_frames(small_video, [33])
        assert len(store.index_for(small_video)) == FRAMES
    assert all_equal(frames, reference(small_video, [33]))
    assert temp_files(png_root) == []


# -- eviction ------------------------------------------------------------------------------------


def test_evict_removes_least_recently_used_first(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        a, b, c = (store.get_paths(small_video, [i])[0] for i in (10, 20, 30))
        store.get_frames(small_video, [10])  # a is now more recent than b and c
        sizes = {p: p.stat().st_size for p in (a, b, c)}
        assert store.size_bytes() == sum(sizes.values())
        removed = store.evict(store.size_bytes() - 1)
        assert removed == 1 and store.stats.evicted == 1
        assert not b.exists() and a.exists() and c.exists()
        store.evict(sizes[a])
        assert a.exists() and not c.exists()
        assert store.size_bytes() == sizes[a]
        assert store.evict() == 0  # under budget: nothing to do
    assert_consistent(png_root)


def test_budget_is_kept_after_writes(small_video, png_root):
    with FrameStore(png_root, image_format="png") as probe:
        probe.get_frames(small_video, [0])
        frame_bytes = probe.size_bytes()
        probe.clear()
    budget = 5 * frame_bytes
    with FrameStore(png_root, budget_bytes=budget, image_format="png") as store:
        frames = store.get_frames(small_video, list(range(0, 40, 2)))
        assert store.size_bytes() <= budget
        assert store.stats.evicted > 0
        first_batch = store.stats.evicted
        store.get_frames(small_video, list(range(50, 60)))
        assert store.size_bytes() <= budget and store.stats.evicted > first_batch
    assert all_equal(frames, reference(small_video, range(0, 40, 2)))  # evicted or not
    assert_consistent(png_root)


def test_clear_removes_everything(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        store.get_frames(small_video, [1, 2, 3])
        assert store.clear() == 3
        assert store.size_bytes() == 0 and store.frame_count() == 0
        assert stored_files(png_root) == []
        assert list((png_root / "index").iterdir()) == []
        assert all_equal(store.get_frames(small_video, [2]), reference(small_video, [2]))


# -- damaged or vanished files ---------------------------------------------------------------------


@pytest.mark.parametrize("image_format", ["png", "jpeg"])
def test_truncated_stored_file_is_decoded_again(small_video, tmp_path, image_format):
    root = tmp_path / image_format
    with FrameStore(root, image_format=image_format) as store:
        path = store.get_paths(small_video, [44])[0]
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with FrameStore(root, image_format=image_format) as store:
        (frame,) = store.get_frames(small_video, [44])
        assert store.stats.misses == 1 and store.stats.decode_passes == 1
    assert all_equal([frame], reference(small_video, [44]))
    assert path.read_bytes() != data[: len(data) // 2]  # rewritten whole
    with FrameStore(root, image_format=image_format) as store:
        store.get_frames(small_video, [44])
        assert store.stats.hits == 1
    assert_consistent(root)


def test_get_paths_replaces_a_truncated_file(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        path = store.get_paths(small_video, [45])[0]
        whole = path.read_bytes()
        path.write_bytes(whole[:100])
        assert store.get_paths(small_video, [45]) == [path]
        assert store.stats.misses == 2
    assert path.read_bytes() == whole
    assert_consistent(png_root)


def test_garbage_and_vanished_files_are_misses(small_video, png_root):
    with FrameStore(png_root, image_format="png") as store:
        gone, garbage = store.get_paths(small_video, [61, 62])
    gone.unlink()  # as if another process evicted it between lookup and read
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    with FrameStore(png_root, image_format="png") as store:
        frames = store.get_frames(small_video, [61, 62])
        assert store.stats.misses == 2 and store.stats.decode_passes == 1
    assert all_equal(frames, reference(small_video, [61, 62]))
    assert_consistent(png_root)


# -- errors ---------------------------------------------------------------------------------------


def test_root_that_is_a_file_is_refused(tmp_path):
    not_a_dir = tmp_path / "store"
    not_a_dir.write_text("x")
    with pytest.raises(FrameStoreError) as info:
        FrameStore(not_a_dir)
    assert str(not_a_dir) in str(info.value)


def test_root_below_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(FrameStoreError) as info:
        FrameStore(tmp_path / "file" / "store")
    assert str(tmp_path / "file" / "store") in str(info.value)


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root writes anywhere; needs an unprivileged user")
def test_unwritable_root_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(FrameStoreError) as info:
            FrameStore(locked)
        assert str(locked) in str(info.value)
    finally:
        locked.chmod(0o700)


def test_damaged_database_is_refused_by_name(tmp_path):
    root = tmp_path / "store"
    root.mkdir()
    (root / "store.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(FrameStoreError) as info:
        FrameStore(root)
    assert str(root / "store.sqlite") in str(info.value)


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(ValueError):
        FrameStore(tmp_path, image_format="webp")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        FrameStore(tmp_path, jpeg_quality=0)
    with pytest.raises(ValueError):
        FrameStore(tmp_path, budget_bytes=-1)


def test_media_errors_propagate(small_video, png_root, tmp_path):
    text = tmp_path / "notes.mp4"
    text.write_text("not a video\n" * 20)
    with FrameStore(png_root) as store:
        with pytest.raises(MediaNotFoundError):
            store.get_frames(tmp_path / "missing.mp4", [0])
        with pytest.raises(NotAVideoError) as info:
            store.get_frames(text, [0])
        assert str(text) in str(info.value)
        with pytest.raises(SamplingError):
            store.get_frames(small_video, [FRAMES])
        assert store.frame_count() == 0
    assert temp_files(png_root) == []


# -- processes ------------------------------------------------------------------------------------


def hammer(
    root: str, video: str, seed: int, rounds: int, budget: int
) -> tuple[list[tuple[list[int], np.ndarray]], StoreStats]:
    """Worker: overlapping random requests on one shared root; returns what it got."""
    rng = random.Random(seed)
    got: list[tuple[list[int], np.ndarray]] = []
    with FrameStore(root, budget_bytes=budget, image_format="png") as store:
        for r in range(rounds):
            indices = [rng.randrange(0, 40) for _ in range(8)]
            if r % 3 == 2:
                split = [FrameRequest(video, indices[:4]), FrameRequest(video, indices[4:])]
                frames = [f for part in store.fetch_many(split) for f in part]
            else:
                frames = store.get_frames(video, indices)
            got.append((indices, np.stack(frames)))
    return got, store.stats


def test_processes_share_one_root_safely(small_video, png_root):
    want = reference(small_video, range(40))
    budget = 15 * want[0].nbytes // 2  # about 15 png frames: evictions race with writes
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        jobs = [pool.apply_async(hammer, (str(png_root), str(small_video), seed, 12, budget))
                for seed in range(4)]
        results = [job.get(timeout=120) for job in jobs]
    for got, _ in results:
        for indices, frames in got:
            assert all_equal(list(frames), [want[i] for i in indices]), indices
    assert sum(stats.evicted for _, stats in results) > 0  # evictions did race with the rest
    assert sum(stats.hits for _, stats in results) > 0
    assert_consistent(png_root)
    with FrameStore(png_root, budget_bytes=budget, image_format="png") as store:
        assert store.size_bytes() <= budget


def test_an_instance_keeps_working_in_a_forked_child(small_video, png_root):
    store = FrameStore(png_root, image_format="png")
    store.get_frames(small_video, [1, 2])  # the parent now holds a connection and threads
    want = reference(small_video, [3, 1])

    def child() -> bool:
        frames = store.get_frames(small_video, [3, 1])
        return all_equal(frames, want) and store.stats.hits >= 1

    check_in_forked_child(child)
    assert all_equal(store.get_frames(small_video, [3]), reference(small_video, [3]))
    assert store.stats.hits == 1  # the child's frame, found by the parent
    store.close()
    assert_consistent(png_root)
