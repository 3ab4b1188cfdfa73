"""Where m3kit keeps its caches (frames, OCR results, suites), and where a path read from a data
file may point: inside its data root, nowhere else.

Released data files name media by path (an M3Exam ``img_file``, an M3Eval ``video``, a
Video-MME-v2 ``video_id``). A crafted file must not make m3kit read, decode and send to a model
endpoint any file the user can read, so every loader resolves such a path through
``resolve_in_root``: relative only, resolved, and refused when it leaves the root, whatever
symbolic links it passes through. A data root must hold its files: a folder linked in from
elsewhere would let one link in a downloaded archive expose any folder the user can read.
"""

from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path, PurePosixPath

from m3kit.errors import UnsafePathError

__all__ = ["cache_dir", "relative_data_path", "resolve_in_root"]

# Linux's PATH_MAX and NAME_MAX: a longer path makes every later ``stat`` raise ENAMETOOLONG.
MAX_PATH_BYTES = 4096
MAX_NAME_BYTES = 255
# NUL ends a C string (``stat`` raises ValueError on it); the other control characters name no
# file a released data set ships and would break every one-line report that shows the path.
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# ``C:...`` and ``\\server\share``: absolute on Windows, where many data sets are written.
_WINDOWS_ABSOLUTE = re.compile(r"^(?:[A-Za-z]:|//)")


def cache_dir() -> Path:
    """``$M3KIT_CACHE_DIR``, else ``$XDG_CACHE_HOME/m3kit``, else ``~/.cache/m3kit``."""
    explicit = os.environ.get("M3KIT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "m3kit"


def relative_data_path(
    value: object,
    *,
    path: str | Path | None = None,
    record: str | int | None = None,
    field: str | None = None,
    root_name: str = "the data root",
) -> str:
    """``value`` as a normalised relative POSIX path (``"videos/a.mp4"``), checked without
    touching the disk: a non-empty string, no NUL byte or other control character, encodable
    for the file system, within the length limits, not absolute (POSIX, drive letter or UNC),
    no ``..`` climbing above where it starts, not naming the root itself. Backslashes count as
    separators (data sets written on Windows). Refusals are ``UnsafePathError`` naming
    ``path``, ``record`` and ``field``; ``root_name`` is how they call the root."""

    def refuse(reason: str) -> UnsafePathError:
        return UnsafePathError(reason, path=path, record=record, field=field)

    if not isinstance(value, str) or not value.strip():
        raise refuse("missing or empty path")
    if "\x00" in value:
        raise refuse("the path holds a NUL byte")
    if _CONTROL.search(value):
        raise refuse(f"the path holds a control character: {value!r}")
    try:
        encoded = os.fsencode(value)
    except UnicodeError:
        raise refuse(f"the path cannot be encoded for the file system: {value!r}") from None
    rel = value.replace("\\", "/")
    if len(encoded) > MAX_PATH_BYTES or any(
        len(os.fsencode(part)) > MAX_NAME_BYTES for part in rel.split("/")
    ):
        raise refuse(f"the path is longer than {MAX_PATH_BYTES} bytes or has a name longer "
                     f"than {MAX_NAME_BYTES} bytes")
    if PurePosixPath(rel).is_absolute() or _WINDOWS_ABSOLUTE.match(rel):
        raise refuse(f"path {value!r} is absolute: paths are relative to {root_name}")
    normal = posixpath.normpath(rel)
    if normal == ".." or normal.startswith("../"):
        raise refuse(f"path {value!r} leaves {root_name}")
    if normal == ".":
        raise refuse(f"path {value!r} names {root_name}, not a file")
    return normal


def resolve_in_root(
    root: str | Path,
    value: object,
    *,
    path: str | Path | None = None,
    record: str | int | None = None,
    field: str | None = None,
    root_name: str = "the data root",
) -> Path:
    """The file ``value`` names under ``root``, resolved (symbolic links followed), after the
    checks of ``relative_data_path``; refused with ``UnsafePathError`` when the resolved file
    lies outside the resolved root: a symbolic link on the way, to a file or to a folder, points
    out. Links that stay inside the root are fine, and so is a root that is itself a link. The
    file need not exist.
    """

    def refuse(reason: str) -> UnsafePathError:
        return UnsafePathError(reason, path=path, record=record, field=field)

    rel = relative_data_path(value, path=path, record=record, field=field, root_name=root_name)
    try:
        base = Path(root).resolve()
        lexical = base / rel
        resolved = lexical.resolve()
        if not resolved.is_relative_to(base):
            raise refuse(f"path {value!r} leaves {root_name} through a symbolic link")
        return resolved
    except RuntimeError:  # Python 3.11's ``resolve`` on a symlink loop
        raise refuse(f"path {value!r} runs into a symbolic link loop") from None
    except OSError as exc:
        raise refuse(f"path {value!r} cannot be resolved: {exc.strerror or exc}") from None
