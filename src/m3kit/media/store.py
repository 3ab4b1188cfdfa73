"""The frame store: decoded frames kept on disk, addressed by content, shared by processes.

A frame is addressed by the identity of its file's content (``file_identity``), its frame index,
its resize and the image format, so a copy or a rename of a video finds the frames already
stored, and a second request for stored frames decodes nothing. Layout under ``root``::

    frames/<2 hex>/<sha256>.jpg|png   one image per (content, frame, resize, format)
    index/<identity>.npz              the video's frame index: a miss never rescans the packets
    store.sqlite                      size and last access of every frame (WAL mode)

Several processes may read and write one root at once. Images are written to a temporary file
beside their final name and moved into place with ``os.replace``, so a reader sees a whole image
or none. Every change that moves or deletes stored images (recording new ones, evicting) happens
inside one SQLite write transaction, so the recorded sizes always describe the files on disk.
Readers take no lock: a file evicted or damaged under them is a miss and is decoded again.

A writer killed mid-way leaves temporary files, or images moved into place whose rows its
transaction never committed; both would sit outside the budget forever. Every open reconciles
the folder with the database under the write lock: temporary files are deleted when no other
process has the store open (each open instance holds a shared ``flock`` on ``store.lock``; an
open that gets it exclusively knows every temporary file is a dead writer's) or when they are
older than ``STALE_TEMP_S``; complete images without a row are adopted into the budget as least
recently used (damaged ones deleted); rows whose file is gone are dropped.

With ``image_format="jpeg"`` the stored copy is lossy: a miss returns the decoded frame, a later
hit returns the stored JPEG, which differs from it slightly. ``png`` stores frames exactly.
The root must be on a local file system (SQLite's WAL mode needs shared memory).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Self, get_args

import numpy as np
from PIL import Image

from m3kit.errors import FrameStoreError
from m3kit.files import (
    atomic_file,
    commit_temp,
    is_orphan_temp,
    is_temp_name,
    new_temp_beside,
)
from m3kit.media.budget import check_frames_fit, usable_cpus
from m3kit.media.container import open_video
from m3kit.media.decode import VideoDecoder, frame_to_rgb
from m3kit.media.identity import IdentityCache
from m3kit.media.index import VideoIndex, scan_index
from m3kit.media.resize import Resize, resize_key

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]  # None marks the module absent (checked below)

ImageFormat = Literal["jpeg", "png"]
IMAGE_FORMATS: tuple[ImageFormat, ...] = get_args(ImageFormat)

DEFAULT_BUDGET_BYTES = 10 * 2**30
# Eviction goes below the budget, not to it, so that a store at its limit does not evict again
# after every single write.
EVICT_TO_FRACTION = 0.9
BUSY_TIMEOUT_S = 60.0
SCHEMA_VERSION = 1
# Part of every key: bump when the stored bytes for a key would change meaning.
KEY_VERSION = "m3kit-frame-v1"
# Bytes of decoded frames waiting for the image encoder: a large frame (8000x8000 RGB is 192 MB)
# is encoded before the next one is decoded.
MAX_PENDING_BYTES = 128 * 2**20
# Threads that encode and decode images; more than the cores only adds contention.
MAX_WORKERS = 16
# SQLite caps the number of bound parameters per statement (999 in old builds).
_SQL_CHUNK = 500
_EXTENSIONS: dict[str, str] = {"jpeg": ".jpg", "png": ".png"}
_PIL_FORMAT_OF: dict[str, str] = {".jpg": "JPEG", ".png": "PNG"}
_FRAME_NAME = re.compile(r"[0-9a-f]{64}\.(?:jpg|png)")
_LOCK_NAME = "store.lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS frames (
    name TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    last_access INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS frames_lru ON frames (last_access, name);
CREATE TABLE IF NOT EXISTS total (id INTEGER PRIMARY KEY CHECK (id = 0), bytes INTEGER NOT NULL);
INSERT OR IGNORE INTO total (id, bytes) VALUES (0, 0);
CREATE TRIGGER IF NOT EXISTS frames_added AFTER INSERT ON frames
    BEGIN UPDATE total SET bytes = bytes + NEW.size WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS frames_removed AFTER DELETE ON frames
    BEGIN UPDATE total SET bytes = bytes - OLD.size WHERE id = 0; END;
CREATE TRIGGER IF NOT EXISTS frames_resized AFTER UPDATE OF size ON frames
    BEGIN UPDATE total SET bytes = bytes - OLD.size + NEW.size WHERE id = 0; END;
"""
_UPSERT = (
    "INSERT INTO frames (name, size, last_access) VALUES (?, ?, ?) ON CONFLICT (name) "
    "DO UPDATE SET size = excluded.size, last_access = excluded.last_access"
)


@dataclass(frozen=True)
class FrameRequest:
    """Frames ``indices`` (in this order, repeats allowed) of ``video``, resized by ``resize``."""

    video: str | Path
    indices: tuple[int, ...]
    resize: Resize | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(int(i) for i in self.indices))


@dataclass
class StoreStats:
    """What one ``FrameStore`` instance did. Hits and misses count distinct frames per call."""

    hits: int = 0
    misses: int = 0
    frames_decoded: int = 0  # frames the decoder produced, those passed through included
    decode_passes: int = 0  # VideoDecoder passes (at most one per video per call)
    evicted: int = 0
    bytes_written: int = 0
    # What the open found left by writers that died (see the module docstring).
    orphans_removed: int = 0  # temporary files deleted
    orphans_adopted: int = 0  # complete images without a row, now recorded (in the budget)
    orphan_bytes: int = 0  # bytes of both
    rows_dropped: int = 0  # rows whose image was gone


@dataclass
class _VideoWants:
    """The missing frames of one video in one call: frame index -> [(resize, name)]."""

    path: Path
    identity: str
    frames: dict[int, list[tuple[Resize | None, str]]] = field(default_factory=dict)

    def add(self, index: int, resize: Resize | None, name: str) -> None:
        self.frames.setdefault(index, []).append((resize, name))


@dataclass(frozen=True)
class _Keyed:
    request: FrameRequest
    identity: str
    names: list[str]  # stored file name per requested index, in request order


@dataclass(frozen=True)
class _Written:
    name: str
    temp: Path
    size: int


class FrameStore:
    """Decoded frames on disk, keyed by content identity, frame index, resize and format.

    ``budget_bytes`` bounds the stored images: past it, the least recently used ones are evicted.
    The instance keeps per-process state only (a SQLite connection, a thread pool, a cache of
    file identities) and reopens it in a child process after ``fork``.
    """

    def __init__(
        self,
        root: str | Path,
        budget_bytes: int = DEFAULT_BUDGET_BYTES,
        *,
        image_format: ImageFormat = "jpeg",
        jpeg_quality: int = 90,
    ) -> None:
        if image_format not in _EXTENSIONS:
            raise ValueError(f"image_format must be 'jpeg' or 'png', got {image_format!r}")
        if not 1 <= jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be in 1..100, got {jpeg_quality}")
        if budget_bytes < 0:
            raise ValueError(f"budget_bytes must be >= 0, got {budget_bytes}")
        self.root = Path(root)
        self.budget_bytes = int(budget_bytes)
        self.image_format: ImageFormat = image_format
        self.jpeg_quality = jpeg_quality
        self.stats = StoreStats()
        self._frames_dir = self.root / "frames"
        self._index_dir = self.root / "index"
        self._db_path = self.root / "store.sqlite"
        self._ext = _EXTENSIONS[image_format]
        self._variant = "png" if image_format == "png" else f"jpeg-q{jpeg_quality}"
        self._pil_format = _PIL_FORMAT_OF[self._ext]
        self._save_params = ({"compress_level": 1} if image_format == "png"
                             else {"quality": jpeg_quality})
        self._pil_formats = (self._pil_format,)  # no probing of other formats
        self._identities = IdentityCache()
        self._workers = min(MAX_WORKERS, usable_cpus())
        self._pid: int | None = None
        self._conn: sqlite3.Connection | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.RLock()
        # Handles inherited through fork: closing them in the child could disturb the parent's
        # locks, so they are kept referenced and never used.
        self._inherited: list[object] = []
        self._holder: int | None = None  # descriptor holding the shared flock on store.lock
        _prepare_root(self.root, (self._frames_dir, self._index_dir))
        alone = self._hold_store(try_alone=True)
        self._ensure_process()
        self._reclaim_orphans(alone)
        if alone:
            _flock(self._holder, shared=True)

    # -- public API --------------------------------------------------------------------------------

    def get_frames(
        self, video: str | Path, indices: Sequence[int], resize: Resize | None = None
    ) -> list[np.ndarray]:
        """RGB ``uint8`` (H, W, 3) frames of ``video`` at ``indices``, in the order asked.

        Stored frames are read from disk; all missing ones are decoded in one pass, stored and
        returned as decoded (with jpeg, a later hit returns the slightly different stored copy).
        A repeated index gives the same array object each time, as ``VideoDecoder`` does.
        """
        return self.fetch_many([FrameRequest(video, tuple(indices), resize)])[0]

    def fetch_many(self, requests: Sequence[FrameRequest]) -> list[list[np.ndarray]]:
        """Serve several requests; each video's missing frames (any resizes) take one decode
        pass."""
        self._ensure_process()
        keyed = [self._keyed(request) for request in requests]
        unique = list(dict.fromkeys(name for k in keyed for name in k.names))
        images = dict(zip(unique, self._read_images(unique), strict=True))
        found = {name: image for name, image in images.items() if image is not None}
        self._touch(list(found))
        self.stats.hits += len(found)
        for want in self._missing(keyed, found.keys()):
            found.update(self._decode_and_store(want, keep=True, protect=frozenset()))
        return [[found[name] for name in k.names] for k in keyed]

    def get_paths(
        self,
        video: str | Path,
        indices: Sequence[int],
        resize: Resize | None = None,
        *,
        on_frame: Callable[[int], None] | None = None,
    ) -> list[Path]:
        """Paths of the stored images of ``video`` at ``indices``, storing missing ones first.

        Hits are checked against the recorded sizes, not decoded. The paths stay valid until
        the images are evicted (this call never evicts its own images). No decoded frame is
        kept: memory holds about one frame at a time. ``on_frame(index)`` is called once per
        distinct index as it is found or stored (for progress bars).
        """
        self._ensure_process()
        keyed = self._keyed(FrameRequest(video, tuple(indices), resize))
        present = set(self._present_and_touch(list(dict.fromkeys(keyed.names))))
        self.stats.hits += len(present)
        if on_frame is not None:
            # one name per requested index
            for index in dict.fromkeys(
                    i for i, name in zip(keyed.request.indices, keyed.names, strict=True)
                    if name in present):
                on_frame(index)
        for want in self._missing([keyed], present):
            self._decode_and_store(want, keep=False, protect=frozenset(keyed.names),
                                   on_frame=on_frame)
        return [self._path_of(name) for name in keyed.names]

    def index_for(self, video: str | Path) -> VideoIndex:
        """The frame index of ``video``, from the cache or read from its packets and cached."""
        self._ensure_process()
        path = Path(video)
        identity = self._identities.identity(path)
        cached = self._load_index(identity, path)
        if cached is not None:
            return cached
        container, stream = open_video(path)
        try:
            index = scan_index(container, stream, path)
        finally:
            container.close()
        self._save_index(identity, index)
        return index

    def size_bytes(self) -> int:
        """Bytes of stored images, as recorded."""
        conn = self._connection()
        with self._lock:
            return _total(conn)

    def frame_count(self) -> int:
        """Number of stored images, as recorded."""
        conn = self._connection()
        with self._lock:
            return int(conn.execute("SELECT COUNT(*) FROM frames").fetchone()[0])

    def evict(self, target_bytes: int | None = None) -> int:
        """Evict least recently used images until at most ``target_bytes`` remain.

        ``None``: what happens after writes: when over the budget, go down to 90 % of it.
        Returns the number of images evicted.
        """
        with self._write_txn() as conn:
            if target_bytes is None:
                if _total(conn) <= self.budget_bytes:
                    return 0
                target_bytes = int(self.budget_bytes * EVICT_TO_FRACTION)
            return self._evict_locked(conn, max(0, target_bytes), frozenset())

    def clear(self) -> int:
        """Remove every stored image and cached index; returns the number of images removed."""
        with self._write_txn() as conn:
            names = [row[0] for row in conn.execute("SELECT name FROM frames")]
            conn.execute("DELETE FROM frames")
            for name in names:
                _unlink(self._path_of(name))
            _remove_unrecorded(self._frames_dir)  # left by a writer that died mid-transaction
        for npz in self._index_dir.glob("*.npz"):
            _unlink(npz)
        return len(names)

    def close(self) -> None:
        """Release the database connection and the worker threads of this process."""
        if self._pid != os.getpid():
            return
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._holder is not None:
            os.close(self._holder)  # a forked child holding a copy keeps the lock held
            self._holder = None
        self._pid = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"FrameStore({str(self.root)!r}, budget_bytes={self.budget_bytes}, "
                f"image_format={self.image_format!r})")

    # -- keys and paths ----------------------------------------------------------------------------

    def _keyed(self, request: FrameRequest) -> _Keyed:
        """The request with its video's identity and the stored file name of every index."""
        identity = self._identities.identity(request.video)
        prefix = f"{KEY_VERSION}|{identity}|{resize_key(request.resize)}|{self._variant}|"
        names = [hashlib.sha256(f"{prefix}{i}".encode()).hexdigest() + self._ext
                 for i in request.indices]
        return _Keyed(request, identity, names)

    def _path_of(self, name: str) -> Path:
        return self._frames_dir / name[:2] / name

    def _missing(self, keyed: Sequence[_Keyed], found: Collection[str]) -> list[_VideoWants]:
        """The frames not found, grouped by video content, each frame once; counts the misses."""
        by_identity: dict[str, _VideoWants] = {}
        seen: set[str] = set()
        for k in keyed:
            for name, index in zip(k.names, k.request.indices, strict=True):
                if name in found or name in seen:
                    continue
                seen.add(name)
                want = by_identity.setdefault(
                    k.identity, _VideoWants(Path(k.request.video), k.identity)
                )
                want.add(index, k.request.resize, name)
        self.stats.misses += len(seen)
        return list(by_identity.values())

    # -- reading -----------------------------------------------------------------------------------

    def _read_image(self, name: str) -> np.ndarray | None:
        """The stored image, or None when it is missing, damaged or not an RGB image."""
        try:
            with Image.open(self._path_of(name), formats=self._pil_formats) as image:
                image.load()
                if image.mode != "RGB":
                    return None
                return np.array(image)
        except Exception:  # noqa: BLE001 - any unreadable image is a miss, decoded again
            return None

    def _present_and_touch(self, names: list[str]) -> list[str]:
        """Names whose file exists with its recorded size; their last access is updated."""
        if not names:
            return []
        with self._write_txn() as conn:
            recorded: dict[str, int] = {}
            for chunk in _chunks(names, _SQL_CHUNK):
                marks = ",".join("?" * len(chunk))
                recorded.update(conn.execute(
                    f"SELECT name, size FROM frames WHERE name IN ({marks})", chunk
                ).fetchall())
            present = [n for n in names if n in recorded and _file_size(self._path_of(n))
                       == recorded[n]]
            now = time.time_ns()
            conn.executemany("UPDATE frames SET last_access = ? WHERE name = ?",
                             [(now, n) for n in present])
        return present

    def _touch(self, names: list[str]) -> None:
        """Mark hits as used now (one transaction); rows evicted meanwhile are not recreated."""
        if not names:
            return
        now = time.time_ns()
        with self._write_txn() as conn:
            conn.executemany("UPDATE frames SET last_access = ? WHERE name = ?",
                             [(now, n) for n in names])

    # -- decoding and writing ----------------------------------------------------------------------

    def _decode_and_store(
        self,
        want: _VideoWants,
        *,
        keep: bool,
        protect: frozenset[str],
        on_frame: Callable[[int], None] | None = None,
    ) -> dict[str, np.ndarray]:
        """Decode the wanted frames of one video in one pass, store them, return them if ``keep``.

        Images are encoded on worker threads while the decoder goes on (Pillow releases the GIL),
        then all are moved into place and recorded in one transaction. Frames kept for the
        caller must fit the memory budget (``MediaTooLargeError`` before decoding).
        """
        index = self._load_index(want.identity, want.path)
        decoder = VideoDecoder(want.path, index=index)
        arrays: dict[str, np.ndarray] = {}
        pending: deque[tuple[Future[_Written], int]] = deque()
        pending_bytes = 0
        written: list[_Written] = []
        try:
            if index is None:
                self._save_index(want.identity, decoder.index)
            if keep:
                sizes = [decoder.output_size(r) for rs in want.frames.values() for r, _ in rs]
                check_frames_fit(len(sizes), max(sizes, key=lambda wh: wh[0] * wh[1]),
                                 decoder.frame_size, path=want.path)
            try:
                for i, frame in decoder.iter_frames(sorted(want.frames)):
                    for resize, name in want.frames[i]:
                        rgb = frame_to_rgb(frame, resize)
                        if keep:
                            arrays[name] = rgb
                        pending.append((self._threads().submit(self._write_temp, name, rgb),
                                        rgb.nbytes))
                        pending_bytes += rgb.nbytes
                        del rgb
                        # Bound the frames waiting for the encoder, in count and in bytes.
                        while pending and (len(pending) > 2 * self._workers
                                           or pending_bytes > MAX_PENDING_BYTES):
                            future, nbytes = pending.popleft()
                            pending_bytes -= nbytes
                            written.append(future.result())
                    if on_frame is not None:
                        on_frame(i)
            finally:
                self.stats.decode_passes += 1
                self.stats.frames_decoded += decoder.last_stats.frames
            while pending:
                written.append(pending.popleft()[0].result())
        except BaseException:
            for future, _ in pending:
                with contextlib.suppress(BaseException):
                    written.append(future.result())
            for item in written:
                _unlink(item.temp)
            raise
        finally:
            decoder.close()
        self._commit(written, protect)
        return arrays

    def _write_temp(self, name: str, rgb: np.ndarray) -> _Written:
        """Encode ``rgb`` into a temporary file beside the final one."""
        shard = self._frames_dir / name[:2]
        try:
            shard.mkdir(exist_ok=True)
            temp = new_temp_beside(self._path_of(name))
        except OSError as exc:
            raise FrameStoreError(f"cannot write a frame ({exc.strerror or exc})",
                                  path=shard) from None
        try:
            with open(temp, "wb") as fh:
                Image.fromarray(rgb).save(fh, format=self._pil_format, **self._save_params)
                size = fh.tell()
        except BaseException as exc:
            _unlink(temp)
            if isinstance(exc, OSError):
                raise FrameStoreError(f"cannot write a frame ({exc.strerror or exc})",
                                      path=temp) from None
            raise
        return _Written(name, temp, size)

    def _commit(self, written: list[_Written], protect: frozenset[str]) -> None:
        """Move new images into place, record them and evict, all in one write transaction."""
        if not written:
            return
        moved: set[str] = set()
        try:
            with self._write_txn() as conn:
                now = time.time_ns()
                rows = []
                for item in written:
                    try:
                        commit_temp(item.temp, self._path_of(item.name), durable=False)
                    except FileNotFoundError:
                        continue  # ``clear`` in another process swept the temporary file
                    moved.add(item.name)
                    rows.append((item.name, item.size, now))
                conn.executemany(_UPSERT, rows)
                self.stats.bytes_written += sum(size for _, size, _ in rows)
                if _total(conn) > self.budget_bytes:
                    self._evict_locked(conn, int(self.budget_bytes * EVICT_TO_FRACTION), protect)
        except OSError as exc:
            raise FrameStoreError(f"cannot store frames ({exc.strerror or exc})",
                                  path=self._frames_dir) from None
        finally:
            for item in written:
                if item.name not in moved:
                    _unlink(item.temp)

    def _evict_locked(self, conn: sqlite3.Connection, target: int, protect: frozenset[str]) -> int:
        """Inside a write transaction: delete least recently used images down to ``target``."""
        excess = _total(conn) - target
        if excess <= 0:
            return 0
        victims: list[str] = []
        freed = 0
        cursor = conn.execute("SELECT name, size FROM frames ORDER BY last_access, name")
        for name, size in cursor:
            if name in protect:
                continue
            victims.append(name)
            freed += size
            if freed >= excess:
                break
        cursor.close()
        conn.executemany("DELETE FROM frames WHERE name = ?", [(n,) for n in victims])
        # Unlinked under the write lock: no writer can put a file back between row and file.
        for name in victims:
            _unlink(self._path_of(name))
        self.stats.evicted += len(victims)
        return len(victims)

    # -- orphans of dead writers -------------------------------------------------------------------

    def _hold_store(self, *, try_alone: bool) -> bool:
        """Open ``store.lock`` and hold it: exclusively if ``try_alone`` and no other instance
        has the store open (returns True; the caller downgrades it after reclaiming), else
        shared (False)."""
        try:
            self._holder = os.open(self.root / _LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise FrameStoreError(f"cannot open the store lock ({exc.strerror or exc})",
                                  path=self.root / _LOCK_NAME) from None
        if try_alone and _flock(self._holder, shared=False, wait=False):
            return True
        _flock(self._holder, shared=True)
        return False

    def _reclaim_orphans(self, alone: bool) -> None:
        """Reconcile the folders with the database (module docstring); counts in ``stats``."""
        now = time.time()
        with self._write_txn() as conn:
            recorded = dict(conn.execute("SELECT name, size FROM frames").fetchall())
            seen: set[str] = set()
            adopt: list[tuple[str, int, int]] = []
            for directory in (self._index_dir, *_subdirs(self._frames_dir)):
                for entry in _scan(directory):
                    name = entry.name
                    if is_temp_name(name):
                        if alone or is_orphan_temp(entry, now=now):
                            self._remove_orphan(entry)
                    elif name in recorded:
                        seen.add(name)
                    elif directory.parent == self._frames_dir and _FRAME_NAME.fullmatch(name) \
                            and name.startswith(directory.name):
                        row = self._adoptable(entry)
                        if row is None:
                            self._remove_orphan(entry)
                        else:
                            adopt.append(row)
            lost = [name for name in recorded if name not in seen]
            for chunk in _chunks(lost, _SQL_CHUNK):
                conn.executemany("DELETE FROM frames WHERE name = ?", [(n,) for n in chunk])
            conn.executemany(_UPSERT, adopt)
            self.stats.rows_dropped += len(lost)
            self.stats.orphans_adopted += len(adopt)
            self.stats.orphan_bytes += sum(size for _, size, _ in adopt)
            if adopt and _total(conn) > self.budget_bytes:
                self._evict_locked(conn, int(self.budget_bytes * EVICT_TO_FRACTION), frozenset())

    def _remove_orphan(self, entry: os.DirEntry) -> None:
        try:
            size = entry.stat().st_size
            os.unlink(entry.path)
        except OSError:
            return  # gone already, or not ours to delete
        self.stats.orphans_removed += 1
        self.stats.orphan_bytes += size

    @staticmethod
    def _adoptable(entry: os.DirEntry) -> tuple[str, int, int] | None:
        """``(name, size, last access)`` of a whole, readable image; None for a damaged one.
        Its last access is its modification time, so adopted images are evicted first."""
        fmt = _PIL_FORMAT_OF[os.path.splitext(entry.name)[1]]
        try:
            stat = entry.stat()
            with Image.open(entry.path, formats=(fmt,)) as image:
                image.load()
        except Exception:  # noqa: BLE001 - any unreadable image is removed, decoded again later
            return None
        return entry.name, stat.st_size, stat.st_mtime_ns

    # -- the index cache ---------------------------------------------------------------------------

    def _index_path(self, identity: str) -> Path:
        return self._index_dir / f"{identity}.npz"

    def _load_index(self, identity: str, path: Path) -> VideoIndex | None:
        try:
            with np.load(self._index_path(identity), allow_pickle=False) as data:
                return VideoIndex.from_arrays(str(path), {k: data[k] for k in data.files})
        except Exception:  # noqa: BLE001 - missing or damaged cache: the packets are read again
            return None

    def _save_index(self, identity: str, index: VideoIndex) -> None:
        target = self._index_path(identity)
        try:
            with atomic_file(target, "wb", durable=False) as fh:
                # numeric arrays only: allow_pickle=False as ``_load_index`` reads them
                np.savez(fh, allow_pickle=False, **index.to_arrays())
        except OSError as exc:
            raise FrameStoreError(f"cannot cache the frame index ({exc.strerror or exc})",
                                  path=target) from None

    # -- per-process state -------------------------------------------------------------------------

    def _ensure_process(self) -> None:
        """Open the connection and the pool for this process (again, after a fork)."""
        pid = os.getpid()
        if self._pid == pid:
            return
        self._inherited += [x for x in (self._conn, self._pool) if x is not None]
        self._conn, self._pool = None, None
        self._lock = threading.RLock()  # a lock held in the parent at fork stays held
        if self._holder is None:  # reopened after close(); a forked child shares its parent's
            self._hold_store(try_alone=False)
        self._conn = self._open_db()
        self._pid = pid

    def _connection(self) -> sqlite3.Connection:
        self._ensure_process()
        assert self._conn is not None
        return self._conn

    def _threads(self) -> ThreadPoolExecutor:
        """Worker threads for image encoding and decoding (Pillow releases the GIL there)."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="m3kit-store")
        return self._pool

    def _read_images(self, names: list[str]) -> list[np.ndarray | None]:
        if len(names) <= 1:
            return [self._read_image(n) for n in names]
        return list(self._threads().map(self._read_image, names))

    def _open_db(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self._db_path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise FrameStoreError(f"cannot open the store database ({exc})",
                                  path=self._db_path) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            _enable_wal(conn)
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable enough for a cache
            _create_schema(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise FrameStoreError(f"cannot use the store database ({exc})",
                                  path=self._db_path) from None
        except BaseException:
            conn.close()
            raise
        return conn

    @contextlib.contextmanager
    def _write_txn(self) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction: the store-wide write lock, across processes."""
        conn = self._connection()
        with self._lock:
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise FrameStoreError(f"cannot lock the store database ({exc})",
                                      path=self._db_path) from None
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise FrameStoreError(f"cannot update the store database ({exc})",
                                      path=self._db_path) from None


# -- helpers ---------------------------------------------------------------------------------------


def _prepare_root(root: Path, subdirs: Iterable[Path]) -> None:
    """Create the store's directories or say why the root cannot hold a store."""
    if root.exists() and not root.is_dir():
        raise FrameStoreError("frame store root is not a directory", path=root)
    try:
        for d in subdirs:
            d.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FrameStoreError(f"cannot create the frame store ({exc.strerror or exc})",
                              path=root) from None
    if not os.access(root, os.W_OK | os.X_OK):
        raise FrameStoreError("frame store root is not writable", path=root)


def _enable_wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL (persistent in the file); several processes may race to do it first."""
    for attempt in range(50):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() == "wal":
                return
            conn.execute("PRAGMA journal_mode = WAL")
            # A file system without shared memory keeps the rollback journal: still correct,
            # readers just wait for writers.
            return
        except sqlite3.OperationalError:
            if attempt == 49:
                raise
            time.sleep(0.05)


def _create_schema(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise sqlite3.DatabaseError(f"written by a newer m3kit (schema {version})")
    if version == SCHEMA_VERSION:
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Not executescript: it would COMMIT first and give up the write lock.
        for statement in _split_sql(_SCHEMA):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _split_sql(script: str) -> list[str]:
    """Split on statement ends, keeping trigger bodies (``BEGIN ...; END;``) whole."""
    statements: list[str] = []
    current = ""
    for piece in script.split(";"):
        current += piece + ";"
        if sqlite3.complete_statement(current):
            if current.strip(" \n;"):
                statements.append(current.strip())
            current = ""
    return statements


def _total(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT bytes FROM total WHERE id = 0").fetchone()
    return int(row[0]) if row else 0


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _remove_unrecorded(frames_dir: Path) -> None:
    """Delete images with no row, and temporary files old enough to be a dead writer's."""
    now = time.time()
    for shard in frames_dir.iterdir():
        if not shard.is_dir():
            continue
        for entry in os.scandir(shard):
            if not is_temp_name(entry.name) or is_orphan_temp(entry, now=now):
                _unlink(Path(entry.path))


def _flock(fd: int | None, *, shared: bool, wait: bool = True) -> bool:
    """Take (or convert to) a shared or exclusive ``flock`` on ``fd``; False when ``wait`` is
    off and another holder conflicts. Without ``fcntl`` (Windows) no process is ever known to
    be alone: only stale temporary files are reclaimed there."""
    if fd is None or fcntl is None:
        return False
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    try:
        fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:
        return False  # a file system without flock: behave as if others had the store open
    return True


def _subdirs(directory: Path) -> list[Path]:
    try:
        return [Path(e.path) for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _scan(directory: Path) -> list[os.DirEntry]:
    try:
        return [e for e in os.scandir(directory) if e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
