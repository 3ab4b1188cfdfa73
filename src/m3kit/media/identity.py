"""Content identity of a media file: the same bytes give the same identity, wherever they live.

Hashing a multi-GB video whole would cost seconds per request, so the fingerprint samples it:
sha256 over the file size and its first, middle and last MiB (the whole file when it is small).
A copy or a rename keeps the identity; re-encoding, trimming or appending changes the size or the
sampled bytes. What it cannot see is an edit of the same length that touches none of the sampled
blocks, which real media edits (re-muxing, re-encoding, cutting) do not produce.

``file_stamp`` is the cheaper, weaker key for caches of derived files (rendered PDF pages,
captions a model wrote about a video): the resolved path, the size and the modification time,
read without opening the file. A copy elsewhere gets a new stamp; a rewrite in place does too.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

from m3kit.errors import MediaError, MediaNotFoundError

BLOCK = 1 << 20  # bytes sampled at the start, the middle and the end
# Bump when the fingerprint changes: identities of different versions must never collide.
IDENTITY_VERSION = b"m3kit-identity-v1"


def file_stamp(path: str | Path) -> tuple[str, int, int]:
    """``(resolved path, size, modification time in ns)`` of ``path`` (see the module docstring)."""
    p = Path(path).resolve()
    st = _stat_file(p)
    return p.as_posix(), st.st_size, st.st_mtime_ns


def file_identity(path: str | Path) -> str:
    """The hex sha256 content fingerprint of ``path`` (see the module docstring)."""
    p = Path(path)
    return _hash_sampled(p, _stat_file(p).st_size)


class IdentityCache:
    """``file_identity`` with memory: a file is hashed again only when its stat changes.

    Keyed by the resolved path and (device, inode, size, mtime, ctime): replacing, rewriting or
    touching the file invalidates the entry. One cache per owner (a ``FrameStore``), never global.
    """

    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, ...], str]] = {}

    def identity(self, path: str | Path) -> str:
        p = Path(path)
        st = _stat_file(p)
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        name = os.path.abspath(p)
        known = self._known.get(name)
        if known is not None and known[0] == signature:
            return known[1]
        digest = _hash_sampled(p, st.st_size)
        self._known[name] = (signature, digest)
        return digest

    def __len__(self) -> int:
        return len(self._known)


def _stat_file(p: Path) -> os.stat_result:
    try:
        st = p.stat()
    except FileNotFoundError:
        raise MediaNotFoundError("no such file", path=p) from None
    except OSError as exc:
        raise MediaError(f"cannot read ({exc.strerror or exc})", path=p) from None
    if stat.S_ISDIR(st.st_mode):
        raise MediaError("is a directory, not a media file", path=p)
    if not stat.S_ISREG(st.st_mode):
        raise MediaError("is not a regular file", path=p)
    return st


def _hash_sampled(p: Path, size: int) -> str:
    h = hashlib.sha256(IDENTITY_VERSION)
    h.update(size.to_bytes(8, "little"))
    try:
        with p.open("rb") as fh:
            if size <= 3 * BLOCK:
                h.update(fh.read())
            else:
                for offset in (0, (size - BLOCK) // 2, size - BLOCK):
                    fh.seek(offset)
                    h.update(fh.read(BLOCK))
    except FileNotFoundError:
        raise MediaNotFoundError("no such file", path=p) from None
    except OSError as exc:
        raise MediaError(f"cannot read ({exc.strerror or exc})", path=p) from None
    return h.hexdigest()
