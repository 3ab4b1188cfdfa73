"""Pair a researcher's videos by the semantic similarity of their captions or titles.

M3Eval pairs videos "following a semantic similarity-first principle" (Appendix B), because
interference is strongest between similar material. Here each video's text (a caption, a title,
a one-line description) is embedded (``m3kit.perception.MiniLMEmbedder`` by default, offline)
and videos are matched greedily: the most similar unmatched pair first, until fewer than two
videos are left (an odd one out is reported, not forced into a weak pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from m3kit.errors import SchemaError
from m3kit.schema import read_json_lines

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

__all__ = ["VideoPair", "VideoSource", "load_sources", "pair_by_similarity"]

VIDEO_SUFFIXES = (".mp4", ".mkv", ".mov", ".webm", ".avi", ".m4v")


class VideoSource(BaseModel):
    """One of the researcher's videos: a short id, its file, and the text it is paired by."""

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    path: str
    text: str = ""


class VideoPair(BaseModel):
    """Two videos paired for the probes; ``video1`` is the one listed first in the sources."""

    id: str
    video1: VideoSource
    video2: VideoSource
    similarity: float


def load_sources(path: str | Path) -> list[VideoSource]:
    """The videos to build from: a JSONL file or a folder.

    JSONL: one ``{"id", "video", "text"}`` per line (``video`` relative to the file's folder;
    ``text`` the caption or title; ``id`` defaults to the file stem). Folder: every video file in
    it, its text from a ``<stem>.txt`` beside it, else the stem with ``_``/``-`` as spaces.
    """
    path = Path(path)
    if path.is_dir():
        out = []
        for video in sorted(p for p in path.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES):
            side = video.with_suffix(".txt")
            text = (side.read_text(encoding="utf-8").strip() if side.is_file()
                    else video.stem.replace("_", " ").replace("-", " "))
            out.append(VideoSource(id=_safe_id(video.stem), path=str(video.resolve()), text=text))
        if not out:
            raise SchemaError("no video files in the folder", path=path)
        return _unique_ids(out, path)
    if not path.is_file():
        raise SchemaError("sources file or folder not found", path=path)
    out = []
    for no, raw in read_json_lines(path):
        if not raw.get("video"):
            raise SchemaError("needs a 'video' path", path=path, record=no, field="video")
        video = Path(str(raw["video"]))
        if not video.is_absolute():
            video = path.parent / video
        try:
            out.append(VideoSource(id=str(raw.get("id") or _safe_id(video.stem)),
                                   path=str(video.resolve()), text=str(raw.get("text") or "")))
        except ValidationError as exc:
            raise SchemaError(exc.errors()[0]["msg"], path=path, record=no, field="id") from None
    return _unique_ids(out, path)


def pair_by_similarity(
    sources: Sequence[VideoSource], embedder: TextEmbedder | None = None
) -> tuple[list[VideoPair], list[VideoSource]]:
    """Greedy most-similar-first pairs by cosine similarity of the texts; and the unpaired.

    Ties break by source order, so the pairing is deterministic.
    """
    if len(sources) < 2:
        return [], list(sources)
    if embedder is None:
        from m3kit.perception import MiniLMEmbedder

        embedder = MiniLMEmbedder()
    vectors = np.asarray(embedder.embed([s.text or s.id for s in sources]), dtype=np.float64)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1.0, norms)
    sims = vectors @ vectors.T
    n = len(sources)
    candidates = sorted((-sims[i, j], i, j) for i in range(n) for j in range(i + 1, n))
    used: set[int] = set()
    pairs: list[VideoPair] = []
    for neg, i, j in candidates:
        if i in used or j in used:
            continue
        used.update((i, j))
        pairs.append(VideoPair(id=f"pair{len(pairs) + 1:02d}", video1=sources[i],
                               video2=sources[j], similarity=round(float(-neg), 6)))
    return pairs, [s for k, s in enumerate(sources) if k not in used]


def _safe_id(stem: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_.-" else "_" for c in stem)
    return cleaned or "video"


def _unique_ids(sources: list[VideoSource], path: Path) -> list[VideoSource]:
    seen: set[str] = set()
    for s in sources:
        if s.id in seen:
            raise SchemaError(f"duplicate id {s.id!r}", path=path, record=s.id, field="id")
        seen.add(s.id)
    return sources
