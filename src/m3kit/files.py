"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Every file m3kit writes for others to read (records, manifests, caches, rendered pages, videos)
is written to a temporary file in the destination's folder, flushed to disk, and moved over
the destination with ``os.replace``, which is atomic within one file system. The temporary file
is named ``.<name>.<random>.tmp``: hidden, beside the file it will become, and recognisable
(``is_temp_name``) so that a sweep can remove what a crashed writer left behind.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Literal, overload

__all__ = [
    "TEMP_SUFFIX",
    "atomic_file",
    "atomic_write_bytes",
    "atomic_write_text",
    "commit_temp",
    "is_temp_name",
    "new_temp_beside",
]

TEMP_SUFFIX = ".tmp"


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is the name of a temporary file made by ``new_temp_beside``."""
    return name.startswith(".") and name.endswith(TEMP_SUFFIX)


def new_temp_beside(path: str | Path) -> Path:
    """Create an empty temporary file in ``path``'s folder and return its path.

    The folder is created if missing. The file is created exclusively (no two writers share
    one) with the permissions of an ordinary new file (the umask applies), named
    ``.<name>.<random>.tmp``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
        try:
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return temp


def commit_temp(temp: str | Path, path: str | Path, *, durable: bool = True) -> Path:
    """Move a finished temporary file over ``path``; with ``durable``, flush it to disk first.

    ``durable=False`` suits caches of many small files that can be recomputed (decoded frames):
    an fsync per file would cost more than the work it protects.
    """
    if durable:
        fd = os.open(temp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    os.replace(temp, path)
    return Path(path)


@overload
def atomic_file(
    path: str | Path, mode: Literal["w"], *, encoding: str = ..., durable: bool = ...
) -> AbstractContextManager[IO[str]]: ...


@overload
def atomic_file(
    path: str | Path, mode: Literal["wb"] = ..., *, encoding: str = ..., durable: bool = ...
) -> AbstractContextManager[IO[bytes]]: ...


def atomic_file(
    path: str | Path, mode: str = "wb", *, encoding: str = "utf-8", durable: bool = True
) -> AbstractContextManager[IO]:
    """Open a temporary file for writing that replaces ``path`` when the block ends without error.

    ``mode`` is ``"wb"`` (bytes) or ``"w"`` (text in ``encoding``). If the block raises, the
    temporary file is removed and ``path`` keeps its old content. Missing parent folders are
    created.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_file writes with mode 'w' or 'wb', not {mode!r}")
    return _atomic_file(Path(path), mode, encoding, durable)


@contextmanager
def _atomic_file(path: Path, mode: str, encoding: str, durable: bool) -> Iterator[IO]:
    temp = new_temp_beside(path)
    try:
        with open(temp, mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)


def atomic_write_bytes(path: str | Path, data: bytes, *, durable: bool = True) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_file(path, "wb", durable=durable) as handle:
        handle.write(data)
    return Path(path)


def atomic_write_text(
    path: str | Path, text: str, *, encoding: str = "utf-8", durable: bool = True
) -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    with atomic_file(path, "w", encoding=encoding, durable=durable) as handle:
        handle.write(text)
    return Path(path)
