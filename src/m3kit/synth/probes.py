"""Probe specs of the suite and their rendering through ``m3kit.media.compose``, cached.

A ``ProbeSpec`` says which probe to make (kind, sources or clip spans, swaps, segments, gap);
``build_probe`` composes it with the media engine, renders it with ``render_probe`` (mp4 + the
manifest JSON with per-frame provenance) and returns a ``ProbeRecord``. Files are named by a hash
of the spec, of the rendered sources' names (which hash their scripts) and of the output rate,
so an existing file is exactly the probe asked for and is reused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.media import compose
from m3kit.media.render import render_probe
from m3kit.schema.probe import ProbeKind, ProbeManifest, ProbeSource
from m3kit.synth.questions import Paradigm
from m3kit.synth.render import RENDER_VERSION

__all__ = ["ClipSpec", "ProbeRecord", "ProbeSpec", "build_probe"]

_RECORD = ConfigDict(extra="forbid", frozen=True)


class ClipSpec(BaseModel):
    """One input of a probe: script ``script``'s video, or its span ``[start, end)``, shown
    under ``id`` in the manifest (``video1``, ``video2``, ``clip3``)."""

    model_config = _RECORD

    id: str
    script: str
    start: float | None = None
    end: float | None = None


class ProbeSpec(BaseModel):
    """What to compose. ``order`` lists the inputs' ids in the order the composition takes them
    (a concatenation may repeat one: ``[video1, video1, video2]``)."""

    model_config = _RECORD

    id: str
    paradigm: Paradigm
    condition: str
    kind: ProbeKind
    inputs: list[ClipSpec]
    order: list[str]
    pair: str | None = None
    swaps: int = 0
    segments: int | None = None
    gap: float = 0.0


class ProbeRecord(BaseModel):
    """A rendered probe: its spec, and its files relative to the suite folder."""

    model_config = _RECORD

    spec: ProbeSpec
    video: str
    manifest: str
    duration: float
    frame_count: int
    # (input id, start, end) output seconds of each full-frame segment in output order (the
    # clip spans of an N-back trial); empty for a split screen, whose inputs share the frames.
    spans: list[tuple[str, float, float]] = Field(default_factory=list)

    @property
    def id(self) -> str:
        return self.spec.id


def build_probe(spec: ProbeSpec, sources: dict[str, Path], out_dir: str | Path, *,
                fps: float, root: str | Path) -> ProbeRecord:
    """Compose and render ``spec`` into ``out_dir`` (unless already there); ``sources`` maps
    script ids to rendered videos; paths in the record are relative to ``root``."""
    out = Path(out_dir)
    key_parts: dict[str, Any] = {
        "v": RENDER_VERSION, "spec": spec.model_dump(mode="json"), "fps": fps,
        "sources": {c.script: sources[c.script].name for c in spec.inputs},
    }
    key = hashlib.sha256(repr(sorted(key_parts.items())).encode()).hexdigest()[:12]
    mp4 = out / f"{spec.id}-{key}.mp4"
    manifest_path = mp4.with_suffix(".json")
    if mp4.exists() and manifest_path.exists():
        manifest = ProbeManifest.load(manifest_path)
    else:
        out.mkdir(parents=True, exist_ok=True)
        manifest = compose_spec(spec, sources, fps=fps)
        render_probe(manifest, mp4)
    return ProbeRecord(
        spec=spec,
        video=os.path.relpath(mp4, root),
        manifest=os.path.relpath(manifest_path, root),
        duration=manifest.duration,
        frame_count=manifest.frame_count,
        spans=[(s.source, s.out_start, s.out_end)
               for s in sorted(manifest.segments, key=lambda s: s.frame_start)
               if s.side == "full"],
    )


def compose_spec(spec: ProbeSpec, sources: dict[str, Path], *, fps: float) -> ProbeManifest:
    """The virtual probe of ``spec`` (no pixels rendered)."""
    by_id = {
        c.id: ProbeSource(id=c.id, path=str(Path(sources[c.script]).resolve()), start=c.start,
                          end=c.end)
        for c in spec.inputs
    }
    ordered = [by_id[i] for i in spec.order]
    if spec.kind == "split_screen":
        return compose.split_screen(ordered[0], ordered[1], swaps=spec.swaps, fps=fps)
    if spec.kind == "concat":
        return compose.concatenate(ordered, fps=fps)
    if spec.kind == "interleave":
        return compose.interleave(ordered[0], ordered[1], segments=spec.segments or 1, fps=fps)
    return compose.sequence(ordered, fps=fps, gap=spec.gap)
