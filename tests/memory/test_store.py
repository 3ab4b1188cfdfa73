"""The index store: versions addressed by config, key and events; prefix lookup for incremental
ingest; every kind of damage named, never loaded; saves atomic between processes (two writers
and a reader, no error); superseded versions and dead writers' temporary folders reclaimed, a
live writer's kept."""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from m3kit.files import STALE_TEMP_S, new_temp_dir_beside
from m3kit.memory import MemoryEvent, MemoryItem
from m3kit.memory.store import (
    RECLAIM_AFTER_S,
    CorruptIndexError,
    IndexStore,
    StoredIndex,
    event_hash,
)

from .damage import STORE_DAMAGE, damage

CONFIG = {"memory": "test", "k": 3}


def events(n: int) -> list[MemoryEvent]:
    return [MemoryEvent(id=f"e{i}", kind="text", time=float(i), text=f"note {i}") for i in range(n)]


def stored(n: int) -> StoredIndex:
    evs = events(n)
    items = [MemoryItem(id=e.id, key="k", event_id=e.id, modality="text", text=e.text,
                        time=e.time) for e in evs]
    return StoredIndex(key="k", event_hashes=[event_hash(e) for e in evs], items=items,
                       arrays={"ids": np.asarray([e.id for e in evs]),
                               "vectors": np.eye(n, 4, dtype=np.float32)},
                       state='{"frames": []}')


def test_round_trip_and_prefix_lookup(tmp_path):
    store = IndexStore(tmp_path)
    store.save(CONFIG, stored(3))
    hashes = [event_hash(e) for e in events(5)]
    found = store.lookup(CONFIG, "k", hashes[:3])
    assert found is not None and [i.id for i in found.items] == ["e0", "e1", "e2"]
    np.testing.assert_array_equal(found.arrays["vectors"], np.eye(3, 4, dtype=np.float32))
    assert found.state == '{"frames": []}'
    # a longer stream starting with the stored one: the stored prefix comes back (incremental)
    assert store.lookup(CONFIG, "k", hashes).event_hashes == hashes[:3]
    # another stream, another config, another key: nothing
    assert store.lookup(CONFIG, "k", hashes[1:]) is None
    assert store.lookup({**CONFIG, "k": 4}, "k", hashes[:3]) is None
    assert store.lookup(CONFIG, "other", hashes[:3]) is None


def versions(store: IndexStore) -> list[Path]:
    return sorted(p for p in store.folder(CONFIG, "k").iterdir()
                  if p.is_dir() and not p.name.startswith("."))


def age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_new_version_replaces_the_old_which_is_reclaimed_later(tmp_path):
    store = IndexStore(tmp_path)
    first = store.save(CONFIG, stored(2))
    second = store.save(CONFIG, stored(3))
    assert first != second and (store.folder(CONFIG, "k") / "HEAD").read_text() == second.name
    assert len(store.lookup(CONFIG, "k", stored(3).event_hashes).items) == 3
    # the superseded version stays while a reader may hold it ...
    assert versions(store) == sorted([first, second])
    assert IndexStore(tmp_path).reclaim() == 0 and first.exists()
    # ... and goes once it has not been current for RECLAIM_AFTER_S (on open, or the next save)
    age(first, RECLAIM_AFTER_S + 60)
    age(second, RECLAIM_AFTER_S + 60)  # old, but current: kept
    IndexStore(tmp_path)
    assert versions(store) == [second]
    # the same events saved again (a rebuild) is a new version of its own: nothing is replaced
    third = store.save(CONFIG, stored(3))
    assert third != second and versions(store) == sorted([second, third])
    age(second, RECLAIM_AFTER_S + 60)  # was touched when HEAD moved off it: its grace starts
    store.save(CONFIG, stored(3))
    assert second not in versions(store)


@pytest.mark.parametrize("kind", STORE_DAMAGE)
def test_every_damage_is_named_and_a_save_repairs_it(tmp_path, kind):
    store = IndexStore(tmp_path)
    named = damage(kind, store.save(CONFIG, stored(3)))
    with pytest.raises(CorruptIndexError) as info:
        store.lookup(CONFIG, "k", stored(3).event_hashes)
    assert info.value.path.endswith(named), info.value
    store.save(CONFIG, stored(3))  # the rebuild: stored whatever the damage was
    assert len(store.lookup(CONFIG, "k", stored(3).event_hashes).items) == 3


# -- processes ------------------------------------------------------------------------------------

STRESS_S = 3.0


def _writer(root: str, n: int, start, results) -> None:
    store, counts = IndexStore(root), Counter()
    index = stored(n)
    start.wait()
    end = time.monotonic() + STRESS_S
    while time.monotonic() < end:
        try:
            store.save(CONFIG, index)
            counts["saved"] += 1
        except Exception as exc:  # noqa: BLE001 - every error is counted, none is expected
            counts[f"{type(exc).__name__}: {exc}"] += 1
    results.put(("writer", dict(counts)))


def _reader(root: str, start, results) -> None:
    store, counts = IndexStore(root), Counter()
    hashes = stored(4).event_hashes
    start.wait()
    end = time.monotonic() + STRESS_S
    while time.monotonic() < end:
        try:
            found = store.lookup(CONFIG, "k", hashes)
            counts["read" if found is not None and len(found.items) in (3, 4) else "none"] += 1
        except Exception as exc:  # noqa: BLE001
            counts[f"{type(exc).__name__}: {exc}"] += 1
    results.put(("reader", dict(counts)))


def test_two_writer_processes_and_a_reader_see_no_error(tmp_path):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    IndexStore(tmp_path).save(CONFIG, stored(3))
    context = multiprocessing.get_context("fork")
    start, results = context.Barrier(3), context.Queue()
    procs = [context.Process(target=_writer, args=(str(tmp_path), 3, start, results)),
             context.Process(target=_writer, args=(str(tmp_path), 4, start, results)),
             context.Process(target=_reader, args=(str(tmp_path), start, results))]
    for p in procs:
        p.start()
    got = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    for role, counts in got:
        assert set(counts) == {"saved" if role == "writer" else "read"}, (role, counts)
    assert IndexStore(tmp_path).lookup(CONFIG, "k", stored(4).event_hashes) is not None
    assert not [p for p in store_files(tmp_path) if p.name.startswith(".")]


def store_files(root: Path) -> list[Path]:
    return list(root.rglob("*"))


# -- orphans --------------------------------------------------------------------------------------


def _dead_writer(folder: str, name: str) -> None:
    """A save that died half-way: its temporary folder holds part of a version."""
    temp = new_temp_dir_beside(Path(folder) / name)
    (temp / "arrays.npz").write_bytes(b"\0" * 1000)
    os._exit(0)


def test_orphan_temporary_folders_are_reclaimed_on_open(tmp_path):
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    store = IndexStore(tmp_path)
    store.save(CONFIG, stored(3))
    folder = store.folder(CONFIG, "k")
    process = multiprocessing.get_context("fork").Process(
        target=_dead_writer, args=(str(folder), "0" * 32 + "." + "1" * 16))
    process.start()
    process.join(30)
    (dead,) = [p for p in folder.iterdir() if p.name.startswith(".")]
    live = new_temp_dir_beside(folder / ("2" * 32 + "." + "3" * 16))  # this process: writing
    old_legacy = folder / f".tmp-{'4' * 32}-999999-1"  # earlier versions' naming
    young_legacy = folder / f".tmp-{'5' * 32}-999999-2"
    for legacy in (old_legacy, young_legacy):
        legacy.mkdir()
        (legacy / "arrays.npz").write_bytes(b"\0" * 1000)
    age(old_legacy, STALE_TEMP_S + 60)
    age(live, 60)

    IndexStore(tmp_path)  # open: the dead writer's and the stale one go
    assert not dead.exists() and not old_legacy.exists()
    assert live.exists() and young_legacy.exists()
    age(live, STALE_TEMP_S + 60)  # a writer alive for an hour is taken for dead
    store.save(CONFIG, stored(3))  # a save of the key reclaims too
    assert not live.exists() and young_legacy.exists()
    assert len(store.lookup(CONFIG, "k", stored(3).event_hashes).items) == 3
