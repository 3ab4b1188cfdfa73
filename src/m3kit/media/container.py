"""Opening a video file with PyAV, turning every way it can fail into a typed m3kit error."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import av
import av.error

from m3kit.errors import CorruptMediaError, MediaError, MediaNotFoundError, NotAVideoError

# FFmpeg demuxers that read still images: a picture handed in as a video is refused by name.
_IMAGE_DEMUXERS = ("image2", "_pipe", "ico", "tiff", "apng")
# Codecs of still pictures: one frame of these is an image, not a video.
_IMAGE_CODECS = {"gif", "png", "apng", "mjpeg", "jpegls", "webp", "bmp", "tiff", "jpeg2000", "qoi"}
# Seconds FFmpeg may block in one open or one read before the call is interrupted.
OPEN_TIMEOUT_S = 30.0
READ_TIMEOUT_S = 30.0


def check_video_path(path: str | Path) -> Path:
    """Resolve ``path`` and refuse what cannot be a video file before FFmpeg sees it.

    Each refusal says what the path is: missing, a symbolic link loop, a link to nothing, a
    directory, not a regular file, empty, unreadable.
    """
    p = Path(path)
    try:
        info = os.stat(p)
    except ValueError:  # a NUL byte: no file system path can hold one
        raise MediaError("is not a valid path (it contains a NUL byte)", path=p) from None
    except OSError as exc:
        raise _stat_error(p, exc) from None
    if stat.S_ISDIR(info.st_mode):
        raise NotAVideoError("is a directory, not a video file", path=p)
    if not stat.S_ISREG(info.st_mode):
        raise NotAVideoError("is not a regular file", path=p)
    if info.st_size == 0:
        raise NotAVideoError("is an empty file (0 bytes)", path=p)
    if not os.access(p, os.R_OK):
        raise MediaError("is not readable (permission denied)", path=p)
    return p


def _stat_error(path: Path, exc: OSError) -> MediaError:
    """The typed error for a path that cannot be looked up."""
    if exc.errno == errno.ELOOP:
        return MediaError("is a symbolic link loop (too many levels of symbolic links)",
                          path=path)
    if exc.errno == errno.ENOENT:
        if path.is_symlink():
            return MediaNotFoundError(
                f"is a symbolic link to a missing file ({os.readlink(path)})", path=path
            )
        return MediaNotFoundError("no such file", path=path)
    if exc.errno == errno.ENOTDIR:
        return MediaNotFoundError("no such file (a parent is not a directory)", path=path)
    return MediaError(f"cannot be looked up ({exc.strerror or exc})", path=path)


def open_video(path: str | Path) -> tuple[av.container.InputContainer, av.video.stream.VideoStream]:
    """Open ``path`` and return its container and first video stream.

    Raises ``MediaNotFoundError``, ``NotAVideoError`` or ``CorruptMediaError`` naming the path.
    """
    p = check_video_path(path)
    try:
        container = av.open(str(p), mode="r", timeout=(OPEN_TIMEOUT_S, READ_TIMEOUT_S))
    except av.error.InvalidDataError as exc:
        reason = _open_failure_reason(p, exc)
        if reason is None:
            raise CorruptMediaError(
                f"container cannot be read ({_short(exc)}); the file may be truncated or damaged",
                path=p,
            ) from None
        raise NotAVideoError(reason, path=p) from None
    except av.error.FFmpegError as exc:
        raise CorruptMediaError(f"cannot open ({_short(exc)})", path=p) from None
    except OSError as exc:
        raise MediaError(f"cannot open ({exc.strerror or exc})", path=p) from None
    try:
        fmt = container.format.name or ""
        if not container.streams.video:
            kinds: list[str] = sorted({s.type for s in container.streams}) or ["no streams"]
            raise NotAVideoError(f"has no video stream ({', '.join(kinds)} only)", path=p)
        stream = container.streams.video[0]
        if any(tag in fmt for tag in _IMAGE_DEMUXERS):
            raise NotAVideoError(f"is a still image ({fmt}), not a video", path=p)
        if stream.codec_context is None or stream.codec_context.name is None:
            raise NotAVideoError("video stream uses an unsupported codec", path=p)
    except BaseException:
        container.close()
        raise
    return container, stream


def _open_failure_reason(path: Path, exc: Exception) -> str | None:
    """Tell an unrecognised format (not a video) from a recognised but damaged one."""
    with path.open("rb") as fh:
        head = fh.read(12)
    recognised = (
        head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip")  # ISO BMFF / QuickTime
        or head[:4] == b"\x1aE\xdf\xa3"  # Matroska / WebM
        or head[:4] == b"RIFF"  # AVI
        or head[:3] == b"FLV"
        or head[:4] == b"\x00\x00\x01\xba"  # MPEG-PS
        or head[:1] == b"G"  # MPEG-TS sync byte
    )
    if recognised:
        return None
    return f"is not a video in a supported container ({_short(exc)})"


def _short(exc: Exception) -> str:
    """FFmpeg's message without the errno noise."""
    msg = getattr(exc, "strerror", None) or str(exc)
    return str(msg).strip()


def check_not_still(frame_count: int, stream: av.video.stream.VideoStream,
                    path: str | Path) -> None:
    """Refuse a single picture (a one-frame GIF, an MJPEG still) handed in as a video."""
    codec = stream.codec_context.name if stream.codec_context is not None else ""
    if frame_count <= 1 and codec in _IMAGE_CODECS:
        raise NotAVideoError(f"is a still image ({codec}), not a video", path=path)
