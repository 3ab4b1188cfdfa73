"""Ways a stored index gets damaged, for the store's tests and the memories' (each kind writes
real bad bytes into a stored version; ``rechecksum`` hides it from the checksums)."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np


def damage_manifest(version: Path, **fields) -> None:
    manifest = json.loads((version / "manifest.json").read_text())
    (version / "manifest.json").write_text(json.dumps({**manifest, **fields}))


def rechecksum(version: Path) -> None:
    """Damage that the checksums do not see: the manifest rewritten to match the files."""
    manifest = json.loads((version / "manifest.json").read_text())
    manifest["files"] = {f: hashlib.sha256((version / f).read_bytes()).hexdigest()
                         for f in manifest["files"]}
    (version / "manifest.json").write_text(json.dumps(manifest))


def _rewrite_arrays(version: Path, **arrays: np.ndarray) -> str:
    """``arrays.npz`` replaced by ``arrays``, the checksums made to match; its name."""
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    (version / "arrays.npz").write_bytes(buffer.getvalue())
    rechecksum(version)
    return "arrays.npz"


def damage(kind: str, version: Path) -> str:
    """Damage the stored ``version`` (current in its key's folder) as ``kind`` says; returns the
    end of the path the error must name."""
    head = version.parent / "HEAD"
    if kind == "head not utf-8":
        head.write_bytes(b"\xff\xfe\x00\x81")
        return "HEAD"
    if kind == "head a folder":
        head.unlink()
        (head / "x").mkdir(parents=True)
        return "HEAD"
    if kind == "head escapes":
        head.write_text("../../../..")
        return "HEAD"
    if kind == "head names a missing version":
        head.write_text("0" * 32 + "." + "1" * 16)
        return "0" * 32 + "." + "1" * 16
    if kind == "key folder a file":
        folder = version.parent
        for path in sorted(folder.rglob("*"), reverse=True):
            path.rmdir() if path.is_dir() else path.unlink()
        folder.rmdir()
        folder.write_text("not a folder")
        return folder.name
    if kind == "manifest files a list":
        damage_manifest(version, files=["items.jsonl", "arrays.npz", "state.json"])
        return "manifest.json"
    if kind == "manifest files incomplete":
        damage_manifest(version, files={"items.jsonl": "0" * 64})
        return "manifest.json"
    if kind == "manifest not json":
        (version / "manifest.json").write_text("{not json")
        return "manifest.json"
    if kind == "manifest not utf-8":
        (version / "manifest.json").write_bytes(b"\xff{}")
        return "manifest.json"
    if kind == "manifest a list":
        (version / "manifest.json").write_text("[1, 2]")
        return "manifest.json"
    if kind == "manifest of other events":
        damage_manifest(version, event_hashes=["0" * 32])
        return "manifest.json"
    if kind == "manifest a folder":
        (version / "manifest.json").unlink()
        (version / "manifest.json").mkdir()
        return "manifest.json"
    if kind == "checksum mismatch":
        data = bytearray((version / "items.jsonl").read_bytes())
        data[5] ^= 1
        (version / "items.jsonl").write_bytes(bytes(data))
        return "items.jsonl"
    if kind == "missing file":
        (version / "state.json").unlink()
        return "state.json"
    if kind == "truncated arrays":
        data = (version / "arrays.npz").read_bytes()
        (version / "arrays.npz").write_bytes(data[: len(data) // 2])
        rechecksum(version)
        return "arrays.npz"
    if kind == "arrays pickled":
        return _rewrite_arrays(version, ids=np.asarray([{"a": 1}], dtype=object))
    if kind == "items not utf-8":
        (version / "items.jsonl").write_bytes(b"\xff\xfe\n")
        rechecksum(version)
        return "items.jsonl"
    if kind == "item invalid":
        (version / "items.jsonl").write_text('{"id": 3}\n')
        rechecksum(version)
        return "items.jsonl"
    if kind == "arrays of the wrong shape":
        with np.load(version / "arrays.npz") as npz:
            arrays = {name: npz[name] for name in npz.files}
        arrays["vectors"] = arrays["vectors"][:, :-1]  # one dimension short
        return _rewrite_arrays(version, **arrays)
    if kind == "state invalid":
        (version / "state.json").write_text('{"frames": 5}')
        rechecksum(version)
        return "state.json"
    raise AssertionError(kind)


# What only a memory can see: the store reads these, the memory's own checks refuse them.
MEMORY_DAMAGE = ["arrays of the wrong shape", "state invalid"]


STORE_DAMAGE = ["head not utf-8", "head a folder", "head escapes",
                "head names a missing version", "key folder a file", "manifest files a list",
                "manifest files incomplete", "manifest not json", "manifest not utf-8",
                "manifest a list", "manifest of other events", "manifest a folder",
                "checksum mismatch", "missing file", "truncated arrays", "arrays pickled",
                "items not utf-8", "item invalid"]
