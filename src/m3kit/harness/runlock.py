"""Run locks: ``--resume`` must not pick up a run that is still going, nor run twice at once.

While ``run_eval`` runs, it holds a lock file in the log directory,
``.m3kit-run-<key>-<pid>.lock``, where ``key`` identifies the run as resume does (task, model,
task arguments, limit) and the file holds the pid and host. One file per process, not one per
key, so two plain runs of the same task never block each other (each writes its own log).

A resume (``resume_lock``) first takes the key's resume lock, ``.m3kit-resume-<key>.lock``,
with an exclusive, non-blocking ``flock``: of two resumes started at once exactly one gets it,
the other is refused with one line. The kernel releases a ``flock`` when its holder dies, so a
hard kill leaves no stale resume lock behind; the file itself is removed on release, and an
acquirer checks that the file it locked is still the one at that path (a lock taken on a file
another process has just removed would be no lock at all). Holding it, the resume looks for run
locks of other live processes: one refuses the resume; one left by a process that is gone (a
hard kill) is stale, removed and ignored.

POSIX only (``fcntl``), as m3kit is.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from m3kit.errors import M3kitError
from m3kit.files import process_alive

__all__ = ["LockInfo", "RunLockedError", "held_lock", "live_locks", "resume_lock", "run_key"]

_PREFIX = ".m3kit-run-"
_RESUME_PREFIX = ".m3kit-resume-"


class RunLockedError(M3kitError):
    """The run to resume is still going in another process."""


class LockInfo(BaseModel):
    """What a lock file holds."""

    pid: int
    host: str
    task: str
    model: str


def run_key(task: str, model: str, task_args: Mapping[str, Any], limit: int | None) -> str:
    """A short stable key for one run identity (what ``find_resumable`` matches on)."""
    blob = json.dumps([task, model, dict(task_args), limit], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _alive(info: LockInfo) -> bool:
    # another machine's process cannot be checked from here: it counts as running (the error
    # names the lock file, which the user can remove)
    return process_alive(info.pid, this_host=info.host == socket.gethostname())


def _read_info(path: Path) -> LockInfo | None:
    try:
        return LockInfo.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValidationError, UnicodeDecodeError):
        return None  # gone, half-written or unreadable: not evidence of a live run


def live_locks(log_dir: str | Path, key: str) -> list[tuple[Path, LockInfo]]:
    """The run locks on ``key`` held by live processes other than this one; stale ones are
    removed."""
    folder = Path(log_dir)
    if not folder.is_dir():
        return []
    live = []
    for path in sorted(folder.glob(f"{_PREFIX}{key}-*.lock")):
        info = _read_info(path)
        if info is None:
            continue
        if info.pid == os.getpid() and info.host == socket.gethostname():
            continue
        if _alive(info):
            live.append((path, info))
        else:
            path.unlink(missing_ok=True)
    return live


def _write_whole(path: Path, text: str) -> None:
    """``path`` holds ``text`` or nothing new: written beside it, then renamed over it, so a
    reader never sees half of it."""
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


@contextmanager
def held_lock(log_dir: str | Path, key: str, *, task: str, model: str) -> Iterator[Path]:
    """Hold this process's run lock on ``key`` in ``log_dir`` for the duration of the block."""
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_PREFIX}{key}-{os.getpid()}.lock"
    info = LockInfo(pid=os.getpid(), host=socket.gethostname(), task=task, model=model)
    _write_whole(path, info.model_dump_json())
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)


def _still_here(fd: int, path: Path) -> bool:
    """Whether the open file ``fd`` is still the file at ``path``."""
    try:
        now = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino)


def _take_resume_lock(path: Path) -> int | None:
    """An open descriptor of ``path`` holding its exclusive ``flock``; ``None`` when another
    process (or thread) holds it."""
    import fcntl

    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        if _still_here(fd, path):
            return fd
        # the holder removed the file between our open and our lock: ours is a lock on a
        # file nobody else will ever look at; take the new one instead
        os.close(fd)


def _refusal(info: LockInfo | None, path: Path) -> RunLockedError:
    who = f" (pid {info.pid} on {info.host})" if info is not None else ""
    return RunLockedError(
        f"this run is still going{who}: wait for it or stop it before --resume", path=path)


@contextmanager
def resume_lock(log_dir: str | Path, key: str, *, task: str, model: str) -> Iterator[Path]:
    """Hold the right to resume the run ``key`` in ``log_dir`` (and this process's run lock)
    for the duration of the block; ``RunLockedError`` when another process is resuming it or
    still running it."""
    folder = Path(log_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_RESUME_PREFIX}{key}.lock"
    fd = _take_resume_lock(path)
    if fd is None:
        raise _refusal(_read_info(path), path)
    try:
        info = LockInfo(pid=os.getpid(), host=socket.gethostname(), task=task, model=model)
        os.ftruncate(fd, 0)
        os.pwrite(fd, info.model_dump_json().encode("utf-8"), 0)
        running = live_locks(folder, key)
        if running:
            raise _refusal(running[0][1], running[0][0])
        with held_lock(folder, key, task=task, model=model):
            yield path
    finally:
        # removed while still locked: a process that opened it before the removal finds, once
        # it gets the lock, that it is no longer the file at this path (``_still_here``)
        path.unlink(missing_ok=True)
        os.close(fd)
