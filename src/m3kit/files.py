"""Atomic file writes: a reader sees the old file or the whole new one, never a part.

Every file m3kit writes for others to read (records, manifests, caches, rendered pages, videos)
is written to a temporary file in the destination's folder, flushed to disk, and moved over
the destination with ``os.replace``, which is atomic within one file system. The temporary file
is named ``.<name>.<random>.tmp``: hidden, beside the file it will become, and recognisable
(``is_temp_name``) so that a sweep can remove what a crashed writer left behind.

A temporary folder (``new_temp_dir_beside``: a whole version of a stored index, renamed into
place once complete) also names its writer, ``.<name>.<pid>@<host>.<random>.tmp``, so that a
sweep knows it for an orphan as soon as that process is gone (``is_orphan_temp``); any
temporary file or folder older than ``STALE_TEMP_S`` is one too, whoever wrote it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import IO, Literal, overload

__all__ = [
    "folder_replaced",
    "link_or_copy",
    "STALE_TEMP_S",
    "TEMP_SUFFIX",
    "atomic_file",
    "atomic_write_bytes",
    "atomic_write_text",
    "commit_temp",
    "is_orphan_temp",
    "is_temp_name",
    "mtime_or_inf",
    "new_temp_beside",
    "new_temp_dir_beside",
    "process_alive",
]

TEMP_SUFFIX = ".tmp"
# Temporary files older than this belong to a writer that died, even while other processes use
# the same folder (a writer on another host, whose process cannot be checked): a sweep removes
# them. No m3kit writer keeps one open for so long.
STALE_TEMP_S = 3600.0


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


def new_temp_dir_beside(path: str | Path) -> Path:
    """Create an empty temporary folder in ``path``'s folder and return its path.

    Named ``.<name>.<pid>@<host>.<random>.tmp`` (``is_temp_name`` holds): a sweep removes it as
    soon as its writer is gone (``is_orphan_temp``), not only once it is ``STALE_TEMP_S`` old.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        temp = target.with_name(
            f".{target.name}.{_writer_tag()}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
        try:
            temp.mkdir()
        except FileExistsError:
            continue
        return temp


def is_orphan_temp(entry: str | Path | os.DirEntry, *, now: float | None = None) -> bool:
    """Whether ``entry`` is a temporary file or folder no live writer will finish: its writer
    (named in a folder's name by ``new_temp_dir_beside``) is a process of this host that is
    gone, or it is older than ``STALE_TEMP_S``. Anything else (not a temporary name, a live or
    unknown writer, a young file) is left alone."""
    name = entry.name if isinstance(entry, os.DirEntry) else Path(entry).name
    if not is_temp_name(name):
        return False
    parts = name[1 : -len(TEMP_SUFFIX)].rsplit(".", 2)
    if len(parts) == 3 and _writer_gone(parts[1]):
        return True
    return mtime_or_inf(entry) < (time.time() if now is None else now) - STALE_TEMP_S


def mtime_or_inf(entry: str | Path | os.DirEntry) -> float:
    """The modification time of ``entry``; infinity when it is gone already (nothing is left
    to remove)."""
    try:
        return entry.stat().st_mtime if isinstance(entry, os.DirEntry) else os.stat(entry).st_mtime
    except OSError:
        return float("inf")


def _writer_tag() -> str:
    """This process as ``<pid>@<host>``; the host as a short hash (any name is safe in a path)."""
    return f"{os.getpid()}@{_host()}"


def _host() -> str:
    return hashlib.sha256(socket.gethostname().encode("utf-8", "replace")).hexdigest()[:8]


def _writer_gone(tag: str) -> bool:
    """Whether the writer ``<pid>@<host>`` is known to be dead (``process_alive``)."""
    pid, _, host = tag.partition("@")
    return pid.isdigit() and not process_alive(int(pid), this_host=host == _host())


def process_alive(pid: int, *, this_host: bool) -> bool:
    """Whether process ``pid`` may still run: only a process of this host (``this_host``) that
    no longer runs is known dead. Another host's process (a shared file system) cannot be
    checked from here, nor can anything on Windows, where ``os.kill`` would end the process
    instead of probing it: both count as running."""
    if not this_host or os.name == "nt" or pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process (EPERM): alive
        return True
    return True


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


def link_or_copy(source: str | Path, target: str | Path) -> Literal["linked", "copied", "kept"]:
    """``target`` as the same file as ``source``: a hard link where both lie on one file system,
    else a copy (``kept``: it already is that file). Not a symbolic link: m3kit's loaders refuse a
    link that leads out of the data root (``m3kit.paths.resolve_in_root``), and a hard link is
    a file of the root like any other, costing no space."""
    source, target = Path(source), Path(target)
    if target.exists() and os.path.samefile(source, target):
        return "kept"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    try:
        os.link(source, target)
        return "linked"
    except OSError:  # another file system, or one without hard links
        shutil.copy2(source, target)
        return "copied"


@contextmanager
def folder_replaced(out: str | Path, *, earlier: str) -> Iterator[Path]:
    """A folder built whole, then put at ``out``: the block writes into the temporary folder it
    is given (beside ``out``), and only when it ends without error does that folder take
    ``out``'s place, so a reader never sees half of it and a failure leaves ``out`` as it was.
    ``out`` may be missing, empty, or an earlier build of the same kind (it holds the file
    ``earlier``, which the caller writes into ``out`` once it is in place); any other folder
    or file is refused (``M3kitError``), never written over."""
    from m3kit.errors import M3kitError

    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir())
                                              and not (out / earlier).is_file())):
        raise M3kitError(f"holds other data (no {earlier} of an earlier build): not written "
                         "over; choose a new folder", path=out)
    temp = new_temp_dir_beside(out)
    try:
        yield temp
        old = new_temp_dir_beside(out) if out.exists() else None
        if old is not None:
            os.replace(out, old)
        os.replace(temp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
