"""``PersistentMemory`` over a stored index that fails: every kind of damage is reported as a
rebuilt index (named: the file, the key, why) and rebuilt, and the rebuild is stored; a store
that cannot be written keeps each index in memory for the run, with one warning."""

from __future__ import annotations

import logging
import os

import pytest

from m3kit.memory import MemoryEvent
from m3kit.memory.store import REBUILT, IndexStore, is_rebuilt_record, is_unsaved_record
from m3kit.memory.videorag import VideoRagMemory

from .damage import MEMORY_DAMAGE, STORE_DAMAGE, damage
from .longvideo import sync

NOTES = ["the garage door code is 7731", "the blue whale swims in the ocean",
         "the spare keys are under the red pot"]


def notes(key: str) -> list[MemoryEvent]:
    """A key's stream: released transcript lines only, so that nothing but the embedder runs."""
    return [MemoryEvent(id=f"{key}-{n}", kind="transcript", time=10.0 * (n + 1), text=text,
                        metadata={"start": 10.0 * n, "end": 10.0 * (n + 1)})
            for n, text in enumerate(NOTES)]


def memory(store, embedder) -> VideoRagMemory:
    return VideoRagMemory(embedder=embedder, speech="transcripts", request=False, store=store)


@pytest.mark.parametrize("kind", STORE_DAMAGE + MEMORY_DAMAGE)
@sync
async def test_damaged_index_is_named_and_rebuilt(tmp_path, embedder, kind):
    first = memory(tmp_path, embedder)
    await first.ingest("v", notes("v"))
    folder = IndexStore(tmp_path).folder(first.store_config(), "v")
    named = damage(kind, folder / (folder / "HEAD").read_text())

    again = memory(tmp_path, embedder)
    await again.ingest("v", notes("v"))
    report = again.report("v")
    assert report.origin == "built" and report.corrupt_store and report.saved
    (skip,) = again.skipped("v")
    assert is_rebuilt_record(skip) and skip.reason.startswith(f"{REBUILT}: ")
    assert skip.file.endswith(named) and skip.record == "v", skip
    assert "7731" in (await again.retrieve("v", "garage door code"))[0].text

    later = memory(tmp_path, embedder)  # the rebuild was stored: loaded, nothing reported
    await later.ingest("v", notes("v"))
    assert later.report("v").origin == "stored" and later.skipped("v") == []


def unwritable(tmp_path, how: str):
    """A store that exists (or not) where nothing can be written."""
    if how == "read-only folder":
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder: the file case covers it")
        root = tmp_path / "store"
        root.mkdir()
        root.chmod(0o555)
        return root
    blocker = tmp_path / "a-file"  # a path under a regular file: NotADirectoryError
    blocker.write_text("not a folder")
    return blocker / "store"


@pytest.mark.parametrize("how", ["read-only folder", "under a file"])
@sync
async def test_an_unwritable_store_keeps_indexes_in_memory_with_one_warning(
        tmp_path, embedder, caplog, how):
    store = unwritable(tmp_path, how)
    mem = memory(store, embedder)
    with caplog.at_level(logging.WARNING, logger="m3kit.memory"):
        for key in ("a", "b", "c"):
            await mem.ingest(key, notes(key))
        await mem.ingest_many({"d": notes("d"), "e": notes("e")})
    warnings = [r for r in caplog.records if "kept in memory" in r.getMessage()]
    assert len(warnings) == 1 and str(store) in warnings[0].getMessage()
    # the one warning is the first key's ingest note too (the run's summary prints it)
    [note] = mem.skipped("a")
    assert is_unsaved_record(note) and note.record == "a" and str(store) in note.file
    for key in ("a", "b", "c", "d", "e"):
        report = mem.report(key)
        assert report.origin == "built" and not report.saved
        assert key == "a" or mem.skipped(key) == []
        assert "7731" in (await mem.retrieve(key, "garage door code"))[0].text
