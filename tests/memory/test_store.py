"""The index store: versions addressed by config, key and events; prefix lookup for incremental
ingest; damage (a changed byte, a missing file, an unreadable manifest) named, never loaded."""

from __future__ import annotations

import numpy as np
import pytest

from m3kit.memory import MemoryEvent, MemoryItem
from m3kit.memory.store import CorruptIndexError, IndexStore, StoredIndex, event_hash

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


def test_a_new_version_replaces_the_old(tmp_path):
    store = IndexStore(tmp_path)
    store.save(CONFIG, stored(2))
    store.save(CONFIG, stored(3))
    versions = [p for p in store.folder(CONFIG, "k").iterdir() if p.is_dir()]
    assert len(versions) == 1
    assert len(store.lookup(CONFIG, "k", stored(3).event_hashes).items) == 3


@pytest.mark.parametrize("damage", ["byte", "missing", "manifest"])
def test_damage_is_named(tmp_path, damage):
    store = IndexStore(tmp_path)
    version = store.save(CONFIG, stored(3))
    if damage == "byte":
        data = bytearray((version / "items.jsonl").read_bytes())
        data[5] ^= 1
        (version / "items.jsonl").write_bytes(bytes(data))
    elif damage == "missing":
        (version / "state.json").unlink()
    else:
        (version / "manifest.json").write_text("{not json")
    with pytest.raises(CorruptIndexError) as info:
        store.lookup(CONFIG, "k", stored(3).event_hashes)
    expected = {"byte": "items.jsonl", "missing": "state.json", "manifest": "manifest.json"}
    assert info.value.path.endswith(expected[damage])
