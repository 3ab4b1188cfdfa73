"""Memory indexes on disk: built once, reused by every run, model and process, grown in place.

A stored index lives at ``root/<config hash>/<key hash>/<events fingerprint>/`` (the memory's
``config()``, the memory key, and the hashes of the events it was built from), written to a
temporary folder and renamed into place (readers never see half an index), with ``HEAD`` (an
atomically replaced file) naming the newest fingerprint of the key. A version holds:

- ``manifest.json``: the key, the config, each event's hash in stream order, and the SHA-256 of
  every other file, checked on load;
- ``items.jsonl``: the memory's items; ``arrays.npz``: its vectors (and any other arrays);
- ``state.json``: what the memory keeps beyond items (perception results, summaries), so that
  new events can be appended without redoing the old ones.

``lookup`` answers with the stored version whose events are the new events or a prefix of them
(incremental ingest); a version that fails its checks raises ``CorruptIndexError``, naming the
file, and the memory rebuilds.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from m3kit.errors import M3kitError
from m3kit.files import atomic_write_text
from m3kit.memory.base import MemoryEvent, MemoryItem

MANIFEST = "manifest.json"
HEAD = "HEAD"
FORMAT = 1


class CorruptIndexError(M3kitError):
    """A stored index is damaged (a file missing, unreadable, or not what its manifest says):
    it is not used, and the memory builds the index again."""


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


class IndexStore:
    """Stored indexes under ``root`` (``cache_dir()/indexes`` by default)."""

    def __init__(self, root: str | Path | None = None) -> None:
        if root is None:
            from m3kit.paths import cache_dir

            root = cache_dir() / "indexes"
        self.root = Path(root).expanduser()

    def folder(self, config: Mapping[str, Any], key: str) -> Path:
        """Where the versions of ``key`` under ``config`` live."""
        key_hash = hashlib.sha256(key.encode("utf-8")).hexdigest()[:24]
        return self.root / config_hash(config) / key_hash

    def lookup(self, config: Mapping[str, Any], key: str,
               hashes: Sequence[str]) -> StoredIndex | None:
        """The newest stored version of ``key`` built from ``hashes`` or from a prefix of them;
        ``None`` when there is none. Raises ``CorruptIndexError`` when it is damaged."""
        folder = self.folder(config, key)
        head = folder / HEAD
        if not head.is_file():
            return None
        version = folder / head.read_text(encoding="utf-8").strip()
        stored = self._read(version)
        old = stored.event_hashes
        if len(old) <= len(hashes) and list(hashes[: len(old)]) == old:
            return stored
        return None

    def save(self, config: Mapping[str, Any], index: StoredIndex) -> Path:
        """Write ``index`` as a new version and make it the key's newest; older versions go."""
        folder = self.folder(config, index.key)
        folder.mkdir(parents=True, exist_ok=True)
        name = fingerprint(index.event_hashes)
        final = folder / name
        temp = folder / f".tmp-{name}-{os.getpid()}-{id(index)}"
        shutil.rmtree(temp, ignore_errors=True)
        temp.mkdir()
        files = {
            "items.jsonl": "".join(item.model_dump_json() + "\n" for item in index.items).encode(),
            "arrays.npz": _npz(index.arrays),
            "state.json": index.state.encode("utf-8"),
        }
        for file, data in files.items():
            (temp / file).write_bytes(data)
        manifest = {"format": FORMAT, "key": index.key, "config": dict(config),
                    "event_hashes": index.event_hashes,
                    "files": {f: hashlib.sha256(d).hexdigest() for f, d in files.items()}}
        (temp / MANIFEST).write_text(json.dumps(manifest, default=str), encoding="utf-8")
        if final.exists():  # the same events again (a rebuild after damage): replace it
            shutil.rmtree(final)
        os.replace(temp, final)
        atomic_write_text(folder / HEAD, name)
        for other in folder.iterdir():
            if other.is_dir() and other.name != name and not other.name.startswith(".tmp-"):
                shutil.rmtree(other, ignore_errors=True)
        return final

    def _read(self, version: Path) -> StoredIndex:
        manifest_path = version / MANIFEST
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            expected: dict[str, str] = manifest["files"]
            data = {}
            for file, digest in expected.items():
                raw = (version / file).read_bytes()
                if hashlib.sha256(raw).hexdigest() != digest:
                    raise CorruptIndexError("checksum does not match the manifest",
                                            path=version / file)
                data[file] = raw
            items = [MemoryItem.model_validate_json(line)
                     for line in data["items.jsonl"].decode("utf-8").splitlines() if line]
            with np.load(io.BytesIO(data["arrays.npz"]), allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
            return StoredIndex(key=manifest["key"], event_hashes=list(manifest["event_hashes"]),
                               items=items, arrays=arrays, state=data["state.json"].decode())
        except CorruptIndexError:
            raise
        except FileNotFoundError as exc:
            raise CorruptIndexError(f"stored index incomplete: {exc.strerror}",
                                    path=exc.filename or version) from None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptIndexError(f"stored index unreadable: {type(exc).__name__}: {exc}",
                                    path=manifest_path) from None


def _npz(arrays: Mapping[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **{name: np.asarray(a) for name, a in arrays.items()})
    return buffer.getvalue()
