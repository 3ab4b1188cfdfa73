"""Probe manifests: how a composed probe video was made and where every output frame came from.

A probe (M3Eval's split-screen, concatenation, interleaving and N-back clip sequences) is a
``ProbeManifest``: the ``ProbeRecipe`` that built it, one ``ProbeFrame`` per output frame and one
``ProbeSegment`` per contiguous block of one source.

JSON shape of an output frame (``probe.json`` → ``frames[i]``)::

    {"index": 12, "time": 0.48,
     "tiles": [{"source": "A", "source_time": 0.48, "source_index": 12, "side": "left",
                "segment": 0},
               {"source": "B", "source_time": 0.48, "source_index": 14, "side": "right",
                "segment": 0}]}

A frame always carries a list of tiles, because a split-screen frame shows two sources at once;
a single-source frame has one tile with ``side == "full"`` and a black gap frame of a clip
sequence has none. ``ProbeManifest.rows()`` flattens this to one flat record per (frame, tile) for
tables, and the ``source`` / ``source_time`` / ``side`` / ``segment`` properties of a one-tile
frame read its tile directly.

Times are seconds. ``source_time`` is measured in the source file (not relative to a span), and
``source_index`` is the frame index in the source file (the ``i``-th frame a full decode yields).
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text

__all__ = [
    "SIDE_ORDER",
    "FrameTile",
    "ProbeFrame",
    "ProbeKind",
    "ProbeManifest",
    "ProbeRecipe",
    "ProbeSegment",
    "ProbeSource",
    "Side",
]

ProbeKind = Literal["split_screen", "concat", "interleave", "sequence"]
Side = Literal["left", "right", "full"]

MANIFEST_VERSION: Final = 1
_RECORD = ConfigDict(extra="forbid", frozen=True)
# Tiles of one frame, left to right; a full-frame tile last.
SIDE_ORDER: dict[Side, int] = {"left": 0, "right": 1, "full": 2}


class ProbeSource(BaseModel):
    """A source video, or the span ``[start, end)`` seconds of one, under a short id.

    ``frame_count``, ``width``, ``height`` and ``fps`` record what the file held when the probe
    was composed; rendering checks ``frame_count`` so a changed file cannot silently shift the
    provenance.
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    path: str = Field(min_length=1)
    start: float | None = Field(default=None, ge=0)
    end: float | None = Field(default=None, gt=0)
    frame_count: int | None = Field(default=None, ge=1)
    width: int | None = Field(default=None, ge=1)
    height: int | None = Field(default=None, ge=1)
    fps: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _end_after_start(self) -> ProbeSource:
        if self.start is not None and self.end is not None and not self.start < self.end:
            raise ValueError(f"end must be after start, got start={self.start} end={self.end}")
        return self

    def label(self) -> str:
        """``id = name [start–end s]`` for summaries."""
        span = ""
        if self.start is not None or self.end is not None:
            lo = f"{self.start:.2f}" if self.start is not None else "0"
            hi = f"{self.end:.2f}" if self.end is not None else "end"
            span = f" [{lo}–{hi} s]"
        meta = ""
        if self.width and self.height and self.fps:
            meta = f" ({self.width}x{self.height}, {self.fps:.3g} fps)"
        return f"{self.id} = {Path(self.path).name}{span}{meta}"


class FrameTile(BaseModel):
    """One source frame shown in an output frame, and where on the screen."""

    model_config = _RECORD

    source: str = Field(min_length=1)  # a ProbeSource id
    source_time: float = Field(ge=0)  # seconds in the source file
    source_index: int = Field(ge=0)  # frame index in the source file
    side: Side
    segment: int = Field(ge=0)


class ProbeFrame(BaseModel):
    """Output frame ``index`` at ``time`` seconds and the tiles it shows (none: a black gap)."""

    model_config = _RECORD

    index: int = Field(ge=0)
    time: float = Field(ge=0)
    tiles: list[FrameTile] = Field(default_factory=list)

    @model_validator(mode="after")
    def _sides_distinct(self) -> ProbeFrame:
        sides = [t.side for t in self.tiles]
        if len(set(sides)) != len(sides) or ("full" in sides and len(sides) > 1):
            raise ValueError(f"frame {self.index} has overlapping tiles: {sides}")
        return self

    def tile(self, side: Side) -> FrameTile | None:
        """The tile on ``side``, or None."""
        return next((t for t in self.tiles if t.side == side), None)

    def _only(self) -> FrameTile | None:
        # Single-tile convenience only: a split-screen frame has no single source to report.
        if len(self.tiles) > 1:
            raise ValueError(
                f"frame {self.index} shows {len(self.tiles)} tiles; use .tiles or .tile(side)"
            )
        return self.tiles[0] if self.tiles else None

    @property
    def source(self) -> str | None:
        tile = self._only()
        return tile.source if tile else None

    @property
    def source_time(self) -> float | None:
        tile = self._only()
        return tile.source_time if tile else None

    @property
    def source_index(self) -> int | None:
        tile = self._only()
        return tile.source_index if tile else None

    @property
    def side(self) -> Side | None:
        tile = self._only()
        return tile.side if tile else None

    @property
    def segment(self) -> int | None:
        """The segment of the frame (all its tiles share one); None for a gap frame."""
        return self.tiles[0].segment if self.tiles else None


class ProbeSegment(BaseModel):
    """A contiguous block of one source on one side of the output.

    ``part`` numbers the blocks of that source from 0: the occurrence in a concatenation or
    sequence, the 1/n piece in an interleaving (``A1`` is part 0), the between-swaps block in a
    split screen. Output frames ``[frame_start, frame_end)`` show source times
    ``[source_start, source_end)``; ``out_start = frame_start / fps``.
    """

    model_config = _RECORD

    segment: int = Field(ge=0)
    source: str = Field(min_length=1)
    part: int = Field(ge=0)
    side: Side
    source_start: float = Field(ge=0)
    source_end: float = Field(ge=0)
    out_start: float = Field(ge=0)
    out_end: float = Field(ge=0)
    frame_start: int = Field(ge=0)
    frame_end: int = Field(ge=0)

    @property
    def frame_count(self) -> int:
        return self.frame_end - self.frame_start


class ProbeRecipe(BaseModel):
    """What was composed: the kind, the sources, their order and the output format.

    ``order`` lists the source id of each segment in output order; for a split screen it is
    ``[left, right]`` at time 0. ``swap_times`` are the output times (s) of the first frame of
    each new left/right layout. The canvas is ``width`` × ``height``; a split screen puts its
    ``left`` and ``right`` tiles in the two halves.
    """

    model_config = _RECORD

    kind: ProbeKind
    sources: list[ProbeSource] = Field(min_length=1)
    order: list[str] = Field(min_length=1)
    swaps: int = Field(default=0, ge=0)
    swap_times: list[float] = Field(default_factory=list)
    segments_per_source: int | None = Field(default=None, ge=1)
    fps: float = Field(gt=0)
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _consistent(self) -> ProbeRecipe:
        ids = [s.id for s in self.sources]
        if len(set(ids)) != len(ids):
            raise ValueError(f"source ids must be unique, got {ids}")
        unknown = sorted(set(self.order) - set(ids))
        if unknown:
            raise ValueError(f"order names unknown sources {unknown}")
        if len(self.swap_times) != self.swaps:
            raise ValueError(f"{self.swaps} swaps but {len(self.swap_times)} swap_times")
        if any(b <= a for a, b in pairwise(self.swap_times)):
            raise ValueError("swap_times must increase")
        if self.swaps and self.kind != "split_screen":
            raise ValueError(f"only a split screen swaps sides, not {self.kind}")
        return self

    def source(self, source_id: str) -> ProbeSource:
        for s in self.sources:
            if s.id == source_id:
                return s
        raise KeyError(source_id)

    def region(self, side: Side) -> tuple[int, int, int, int]:
        """``(x, y, width, height)`` of the canvas area a tile on ``side`` fills."""
        half = self.width // 2
        if side == "left":
            return 0, 0, half, self.height
        if side == "right":
            return half, 0, half, self.height
        return 0, 0, self.width, self.height


class ProbeManifest(BaseModel):
    """A composed probe: its recipe, per-frame provenance and its segments."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = MANIFEST_VERSION
    recipe: ProbeRecipe
    duration: float = Field(ge=0)  # seconds: frame count / fps
    segments: list[ProbeSegment] = Field(default_factory=list)
    frames: list[ProbeFrame] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> ProbeManifest:
        ids = {s.id for s in self.recipe.sources}
        split = self.recipe.kind == "split_screen"
        for position, frame in enumerate(self.frames):
            if frame.index != position:
                raise ValueError(f"frames[{position}] has index {frame.index}")
            for tile in frame.tiles:
                if tile.source not in ids:
                    raise ValueError(f"frame {position} shows unknown source {tile.source!r}")
                if (tile.side == "full") == split:
                    raise ValueError(
                        f"frame {position}: side {tile.side!r} does not fit a {self.recipe.kind}"
                    )
        for seg in self.segments:
            if seg.source not in ids:
                raise ValueError(f"segment {seg.segment} names unknown source {seg.source!r}")
        return self

    @property
    def frame_count(self) -> int:
        return len(self.frames)

    @property
    def fps(self) -> float:
        return self.recipe.fps

    def rows(self) -> list[dict[str, Any]]:
        """One flat record per (frame, tile); a gap frame gives one row with ``source=None``."""
        out: list[dict[str, Any]] = []
        for f in self.frames:
            if not f.tiles:
                out.append({"frame": f.index, "time": f.time, "source": None,
                            "source_time": None, "source_index": None, "side": None,
                            "segment": None})
            for t in f.tiles:
                out.append({"frame": f.index, "time": f.time, **t.model_dump()})
        return out

    def summary(self) -> str:
        """A few human-readable lines."""
        r = self.recipe
        head = (f"{r.kind} probe: {r.width}x{r.height} at {r.fps:.3g} fps, "
                f"{self.duration:.2f} s, {self.frame_count} frames")
        lines = [
            head,
            "sources: " + "; ".join(s.label() for s in r.sources),
        ]
        if r.kind == "split_screen":
            times = ", ".join(f"{t:.2f}" for t in r.swap_times)
            lines.append(f"swaps: {r.swaps}" + (f" at {times} s" if r.swaps else ""))
        if r.segments_per_source:
            lines.append(f"segments per source: {r.segments_per_source}")
        if r.params.get("gap"):
            lines.append(f"gap between clips: {r.params['gap']:.2f} s")
        lines.extend(_segment_lines(self.segments, numbered=r.kind == "interleave"))
        return "\n".join(lines)

    # -- (de)serialisation ---------------------------------------------------------------------

    def to_json(self) -> str:
        """Pretty at the top, one line per frame and per segment: readable yet compact."""
        data = self.model_dump(mode="json")
        head = {k: v for k, v in data.items() if k not in ("segments", "frames")}
        text = json.dumps(head, indent=2, ensure_ascii=False)[:-2]  # drop the closing "\n}"
        for key in ("segments", "frames"):
            items = ",\n    ".join(json.dumps(x, ensure_ascii=False) for x in data[key])
            body = f"[\n    {items}\n  ]" if items else "[]"
            text += f',\n  "{key}": {body}'
        return text + "\n}\n"

    def save(self, path: str | Path) -> Path:
        """Write the manifest as JSON, atomically (a temporary file moved into place)."""
        return atomic_write_text(path, self.to_json())

    @classmethod
    def load(cls, path: str | Path) -> ProbeManifest:
        """Read a manifest; a malformed file raises ``SchemaError`` naming the field."""
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise SchemaError(f"cannot read the probe manifest ({exc.strerror or exc})",
                              path=p) from None
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(x) for x in err["loc"]]
            record = ".".join(loc[:2]) if loc[:1] in (["frames"], ["segments"]) else None
            raise SchemaError(f"not a valid probe manifest: {err['msg']}", path=p,
                              record=record, field=".".join(loc) or None) from None


def _segment_lines(
    segments: list[ProbeSegment], *, numbered: bool, limit: int = 12
) -> list[str]:
    """``k [t0–t1 s]: A 0.00–1.00 s left, …`` lines, at most ``limit``; ``numbered`` names the
    parts of an interleaving ``A1``, ``A2``."""
    by_segment: dict[int, list[ProbeSegment]] = {}
    for seg in segments:
        by_segment.setdefault(seg.segment, []).append(seg)
    lines = [f"segments: {len(by_segment)}"]
    for k in sorted(by_segment)[:limit]:
        group = sorted(by_segment[k], key=lambda s: SIDE_ORDER[s.side])
        first = group[0]
        what = ", ".join(
            f"{s.source}{s.part + 1 if numbered else ''} {s.source_start:.2f}–{s.source_end:.2f} s"
            + ("" if s.side == "full" else f" {s.side}")
            for s in group
        )
        lines.append(f"  {k} [{first.out_start:.2f}–{first.out_end:.2f} s]: {what}")
    if len(by_segment) > limit:
        lines.append(f"  ... {len(by_segment) - limit} more")
    return lines
