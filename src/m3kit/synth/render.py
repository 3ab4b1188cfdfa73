"""Rendering a script to an H.264 mp4, cached by the script's content hash.

The file is named ``<script id>-<hash>.mp4`` and the script is saved beside it as
``<same stem>.script.json``; a file of that name exists only complete (the writer is atomic), so
its presence is the cache hit.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from m3kit.files import atomic_write_text
from m3kit.media.encode import VideoWriter
from m3kit.synth.draw import FrameDrawer
from m3kit.synth.script import VideoScript

__all__ = ["RENDER_VERSION", "render_script", "rendered_path"]

# Bump when drawing or encoding changes what a script renders to: old files stop matching.
RENDER_VERSION = 2  # 2: x264 on one thread, the same bytes every time (media.encode)
# Crisper than the default 23: caption letters stay sharp for OCR at 320x240.
_CRF = 20


def rendered_path(script: VideoScript, out_dir: str | Path) -> Path:
    """Where ``render_script`` puts ``script`` in ``out_dir``."""
    key = hashlib.sha256(f"{RENDER_VERSION}:{_CRF}:{script.content_hash()}".encode()).hexdigest()
    return Path(out_dir) / f"{script.id}-{key[:12]}.mp4"


def render_script(script: VideoScript, out_dir: str | Path) -> Path:
    """Render ``script`` into ``out_dir`` unless it is already there; return the mp4 path."""
    path = rendered_path(script, out_dir)
    script_path = path.with_suffix(".script.json")
    if path.exists() and script_path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    drawer = FrameDrawer(script)
    # A keyframe every 2 s keeps seeks into one beat (N-back clip spans) cheap.
    keyint = max(1, round(2 * script.fps))
    with VideoWriter(path, script.width, script.height, script.fps, crf=_CRF,
                     keyint=keyint) as writer:
        for index in range(script.frame_count):
            writer.write(drawer.draw(index))
    atomic_write_text(script_path, script.model_dump_json(indent=2))
    return path
