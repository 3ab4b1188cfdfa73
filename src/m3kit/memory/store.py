"""Memory indexes on disk: built once, reused by every run, model and process, grown in place.

A stored index lives at ``root/<config hash>/<key hash>/<version>/`` (the memory's ``config()``
and the memory key), one folder per saved version, named ``<events fingerprint>.<random>``
(the hashes of the events it was built from, and a part no other save shares). ``HEAD`` names
the key's current version. A version holds:

- ``manifest.json``: the key, the config, each event's hash in stream order, and the SHA-256 of
  every other file, checked on load (a pydantic record, ``Manifest``);
- ``items.jsonl``: the memory's items; ``arrays.npz``: its vectors (and any other arrays);
- ``state.json``: what the memory keeps beyond items (perception results, summaries), so that
  new events can be appended without redoing the old ones.

Publishing is atomic between processes: a save writes its version into a temporary folder
(``files.new_temp_dir_beside``, naming its writer), renames it to its own unique name (nothing
is replaced), then replaces ``HEAD`` atomically. Nothing a reader may hold is deleted: a
version that stops being current is touched as ``HEAD`` moves off it, and is reclaimed (by a
later save of the key, or by any open of the store) once it has not been current for
``RECLAIM_AFTER_S``; a reader whose version went anyway (or was replaced while it read) reads
what ``HEAD`` names now. Temporary folders are reclaimed on open and on save as soon as their
writer is gone, or when older than ``files.STALE_TEMP_S``.

``lookup`` answers with the current version when its events are the new events or a prefix of
them (incremental ingest). Any way a stored index fails to load (``HEAD`` unreadable, not
UTF-8, a folder, naming no version or a missing one; a manifest that is not JSON or not the
record; a file missing, unreadable or not what its checksum says; items, arrays or state that do
not parse) raises ``CorruptIndexError`` naming the file, and the memory rebuilds. A save that
cannot write (a read-only or full disk) raises ``IndexWriteError``: the memory keeps the index
in memory for the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import secrets
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from m3kit.errors import M3kitError
from m3kit.files import (
    STALE_TEMP_S,
    atomic_write_text,
    is_orphan_temp,
    is_temp_name,
    mtime_or_inf,
    new_temp_dir_beside,
)
from m3kit.memory.base import MemoryEvent, MemoryItem
from m3kit.schema.skipped import SkippedRecord

MANIFEST = "manifest.json"
HEAD = "HEAD"
FORMAT: Final = 1
FILES = ("items.jsonl", "arrays.npz", "state.json")
# How long a version that is no longer current is kept: a reader that read ``HEAD`` just before
# it moved has long finished reading by then (a load takes seconds, even for hours of video).
RECLAIM_AFTER_S = 600.0
# The reason of every damaged index a memory rebuilt, as its ingest reports it
# (``rebuilt_record``, ``is_rebuilt_record``).
REBUILT = "damaged stored index, rebuilt"
# The reason of an index a memory could not store (a read-only or full store) and keeps in
# memory for the run (``unsaved_record``, ``is_unsaved_record``).
UNSAVED = "index not stored, kept in memory for this run"
# A version's name: its events' fingerprint, then (since saves became atomic between processes)
# a random part; a bare fingerprint is a version written before that, still read.
_VERSION = re.compile(r"[0-9a-f]{32}(?:\.[0-9a-f]{16})?")
_HASH = re.compile(r"[0-9a-f]{24}")  # a config or key folder
_LEGACY_TEMP = ".tmp-"  # temporary folders of earlier versions: no writer in the name
_READ_ATTEMPTS = 3


class CorruptIndexError(M3kitError):
    """A stored index is damaged (a file missing, unreadable, or not what its manifest says):
    it is not used, and the memory builds the index again."""


class IndexWriteError(M3kitError):
    """A stored index cannot be written (a read-only or full disk, a path that cannot be a
    folder): the memory uses the index it built for this run only."""


class Manifest(BaseModel):
    """``manifest.json``: what a version was built from and the checksum of each of its files."""

    model_config = ConfigDict(strict=True)

    format: Literal[1]
    key: str
    config: dict[str, Any]
    event_hashes: list[str]
    files: dict[str, str]

    @field_validator("files")
    @classmethod
    def _every_file(cls, files: dict[str, str]) -> dict[str, str]:
        if set(files) != set(FILES):
            raise ValueError(f"files must name {', '.join(FILES)}, not {', '.join(files)}")
        if not all(re.fullmatch(r"[0-9a-f]{64}", digest) for digest in files.values()):
            raise ValueError("every checksum must be a SHA-256 in hex")
        return files


def rebuilt_record(key: str, error: CorruptIndexError) -> SkippedRecord:
    """How a memory's ingest reports the damaged stored index of ``key`` it rebuilt: the
    damaged file, the key, and what was wrong."""
    return SkippedRecord(file=error.path or "", record=key, field=error.field,
                         reason=f"{REBUILT}: {error.reason}")


def is_rebuilt_record(record: SkippedRecord) -> bool:
    """Whether an ingest skip is a damaged stored index that was rebuilt (not an attachment)."""
    return record.reason.startswith(f"{REBUILT}: ")


def unsaved_record(key: str, error: IndexWriteError) -> SkippedRecord:
    """How a memory's ingest reports that the index of ``key`` could not be stored: the
    path that failed, the key, and why."""
    return SkippedRecord(file=error.path or "", record=key, reason=f"{UNSAVED}: {error.reason}")


def is_unsaved_record(record: SkippedRecord) -> bool:
    """Whether an ingest skip is an index that could not be stored (not an attachment)."""
    return record.reason.startswith(f"{UNSAVED}: ")


def event_hash(event: MemoryEvent) -> str:
    """The hash of everything in ``event`` that a memory can read (its JSON form)."""
    return hashlib.sha256(event.model_dump_json().encode("utf-8")).hexdigest()[:32]


def fingerprint(hashes: Sequence[str]) -> str:
    """One hash for a stream of event hashes, in order."""
    digest = hashlib.sha256()
    for h in hashes:
        digest.update(h.encode("ascii"))
        digest.update(b"\n")
    return digest.hexdigest()[:32]


def config_hash(config: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:24]


@dataclass
class StoredIndex:
    """One stored version of a key's index: what it was built from and what it holds."""

    key: str
    event_hashes: list[str]
    items: list[MemoryItem]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    state: str = "{}"  # the memory's own pydantic state, as JSON
    path: Path | None = None  # the version folder it was read from (None: not read from disk)


class IndexStore:
    """Stored indexes under ``root`` (``cache_dir()/indexes`` by default). Opening one reclaims
    what dead writers and superseded versions left under it (module docstring)."""

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            from m3kit.paths import cache_dir

            root = cache_dir() / "indexes"
        self.root = Path(root).expanduser()
        self.reclaim()

    def folder(self, config: Mapping[str, Any], key: str) -> Path:
        """Where the versions of ``key`` under ``config`` live."""
        key_hash = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
        return self.root / config_hash(config) / key_hash

    def lookup(self, config: Mapping[str, Any], key: str,
               hashes: Sequence[str]) -> StoredIndex | None:
        """The current stored version of ``key`` when it was built from ``hashes`` or from a
        prefix of them; ``None`` when there is none. Raises ``CorruptIndexError`` when it is
        damaged."""
        stored = _read_current(self.folder(config, key), key)
        if stored is None:
            return None
        old = stored.event_hashes
        if len(old) <= len(hashes) and list(hashes[: len(old)]) == old:
            return stored
        return None

    def save(self, config: Mapping[str, Any], index: StoredIndex) -> Path:
        """Write ``index`` as a new version and make it the key's current one; returns its
        folder. Raises ``IndexWriteError`` when the store cannot be written."""
        folder = self.folder(config, index.key)
        try:
            return _publish(folder, config, index)
        except OSError as exc:
            raise IndexWriteError(f"cannot store the index: {exc.strerror or exc}",
                                  path=exc.filename or folder) from None

    def reclaim(self) -> int:
        """Remove the orphan temporary folders and the expired versions of every key; returns
        how many folders went. What cannot be removed (a read-only store) is left."""
        removed = 0
        for config in _subfolders(self.root, _HASH):
            for key in _subfolders(config, _HASH):
                removed += _reclaim(key)
        return removed


def _head(folder: Path) -> str | None:
    """The version ``HEAD`` names; None when there is no ``HEAD``. Raises ``CorruptIndexError``
    when it cannot be read or names no version."""
    head = folder / HEAD
    try:
        raw = head.read_bytes()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        if os.path.lexists(folder):  # the key's folder is a file
            raise CorruptIndexError("not a folder", path=folder) from None
        return None  # a folder above is a file: nothing is stored (and nothing can be)
    except OSError as exc:  # a folder, unreadable
        raise CorruptIndexError(f"HEAD unreadable: {exc.strerror or exc}", path=head) from None
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeError:
        raise CorruptIndexError("HEAD is not UTF-8 text", path=head) from None
    if not _VERSION.fullmatch(name):
        raise CorruptIndexError(f"HEAD names no version ({name[:40]!r})", path=head)
    return name


def _read_current(folder: Path, key: str) -> StoredIndex | None:
    """The version ``HEAD`` names (None: no ``HEAD``). A version that fails while ``HEAD`` moved
    on was replaced under the reader: what ``HEAD`` names now is read instead."""
    name = _head(folder)
    for _ in range(_READ_ATTEMPTS - 1):
        if name is None:
            return None
        try:
            return _read(folder / name, key)
        except CorruptIndexError:
            now = _head(folder)
            if now == name:
                raise
            name = now
    return None if name is None else _read(folder / name, key)


def _read(version: Path, key: str) -> StoredIndex:
    """The version in folder ``version``, every check passed (else ``CorruptIndexError``)."""
    manifest_path = version / MANIFEST
    try:
        manifest = Manifest.model_validate_json(manifest_path.read_bytes())
    except FileNotFoundError:
        missing = "HEAD names a version that is not there" if not version.is_dir() \
            else "manifest missing"
        raise CorruptIndexError(missing, path=version if not version.is_dir()
                                else manifest_path) from None
    except ValidationError as exc:
        raise CorruptIndexError(f"manifest invalid: {_first_error(exc)}",
                                path=manifest_path) from None
    except OSError as exc:
        raise CorruptIndexError(f"manifest unreadable: {exc.strerror or exc}",
                                path=manifest_path) from None
    if manifest.key != key:
        raise CorruptIndexError(f"manifest is of another key ({manifest.key[:80]!r})",
                                path=manifest_path, field="key")
    if fingerprint(manifest.event_hashes) != version.name[:32]:
        raise CorruptIndexError("event hashes do not match the version's name",
                                path=manifest_path, field="event_hashes")
    data: dict[str, bytes] = {}
    for file in FILES:
        path = version / file
        try:
            raw = path.read_bytes()
        except OSError as exc:
            reason = "missing" if isinstance(exc, FileNotFoundError) else \
                f"unreadable: {exc.strerror or exc}"
            raise CorruptIndexError(reason, path=path) from None
        if hashlib.sha256(raw).hexdigest() != manifest.files[file]:
            raise CorruptIndexError("checksum does not match the manifest", path=path)
        data[file] = raw
    return StoredIndex(key=manifest.key, event_hashes=list(manifest.event_hashes),
                       items=_items(data["items.jsonl"], version / "items.jsonl"),
                       arrays=_arrays(data["arrays.npz"], version / "arrays.npz"),
                       state=_text(data["state.json"], version / "state.json"), path=version)


def _items(raw: bytes, path: Path) -> list[MemoryItem]:
    try:
        return [MemoryItem.model_validate_json(line)
                for line in raw.decode("utf-8").splitlines() if line]
    except ValidationError as exc:
        raise CorruptIndexError(f"item invalid: {_first_error(exc)}", path=path) from None
    except ValueError as exc:  # UnicodeDecodeError too
        raise CorruptIndexError(f"items unreadable: {exc}", path=path) from None


def _arrays(raw: bytes, path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
            return {name: npz[name] for name in npz.files}
    except Exception as exc:  # noqa: BLE001 - zip, zlib, header, pickle: any unreadable archive
        raise CorruptIndexError(f"arrays unreadable: {type(exc).__name__}: {exc}",
                                path=path) from None


def _text(raw: bytes, path: Path) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeError:
        raise CorruptIndexError("not UTF-8 text", path=path) from None


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    return f"{where}: {error['msg']}" if where else error["msg"]


def _publish(folder: Path, config: Mapping[str, Any], index: StoredIndex) -> Path:
    """Write ``index`` under a name of its own, then point ``HEAD`` at it (module docstring)."""
    if os.path.lexists(folder) and not folder.is_dir():  # damage: a file where the key's folder is
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    _reclaim(folder)
    name = f"{fingerprint(index.event_hashes)}.{secrets.token_hex(8)}"
    final = folder / name
    files = {
        "items.jsonl": "".join(item.model_dump_json() + "\n" for item in index.items).encode(),
        "arrays.npz": _npz(index.arrays),
        "state.json": index.state.encode("utf-8"),
    }
    manifest = Manifest(format=FORMAT, key=index.key, config=dict(config),
                        event_hashes=list(index.event_hashes),
                        files={f: hashlib.sha256(d).hexdigest() for f, d in files.items()})
    temp = new_temp_dir_beside(final)
    try:
        for file, data in files.items():
            (temp / file).write_bytes(data)
        # the config as JSON (default=str, as its hash reads it), not a pydantic dump
        (temp / MANIFEST).write_text(json.dumps(manifest.model_dump(), default=str),
                                     encoding="utf-8")
        os.rename(temp, final)  # a name no other save has: nothing is replaced
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    head = folder / HEAD
    current = _current(folder)
    if current is not None:  # it stops being current now: its grace period starts
        _touch(folder / current)
    if head.is_dir() and not head.is_symlink():  # damage (a folder named HEAD): replaced
        shutil.rmtree(head, ignore_errors=True)
    atomic_write_text(head, name)
    return final


def _current(folder: Path) -> str | None:
    """The version ``HEAD`` names, None when none can be read."""
    try:
        return _head(folder)
    except CorruptIndexError:
        return None


def _reclaim(folder: Path, *, now: float | None = None) -> int:
    """In one key's ``folder``: remove orphan temporary folders and the versions that have not
    been current for ``RECLAIM_AFTER_S``; returns how many went."""
    now = time.time() if now is None else now
    current = _current(folder)
    removed = 0
    try:
        entries = [e for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return 0
    for entry in entries:
        name = entry.name
        if name.startswith(_LEGACY_TEMP):
            expired = mtime_or_inf(entry) < now - STALE_TEMP_S
        elif is_temp_name(name):
            expired = is_orphan_temp(entry, now=now)
        else:
            expired = bool(_VERSION.fullmatch(name)) and name != current \
                and mtime_or_inf(entry) < now - RECLAIM_AFTER_S
        if expired:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed += not os.path.exists(entry.path)
    return removed


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):  # gone, or not ours: it is reclaimed by its age alone
        os.utime(path)


def _subfolders(folder: Path, pattern: re.Pattern[str]) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(folder)
                if pattern.fullmatch(e.name) and e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    # numpy's stub types savez's keyword arrays as its ``allow_pickle`` flag; the arrays are
    # keyword arguments all the same (numpy.savez: "arrays to save ... as keywords").
    np.savez(buffer, **{name: np.asarray(a) for name, a in arrays.items()})  # type: ignore[arg-type]
    return buffer.getvalue()
