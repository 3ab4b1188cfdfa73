"""Probe manifests: JSON shape, round-trip, validation, conveniences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from m3kit.errors import SchemaError
from m3kit.schema.probe import (
    FrameTile,
    ProbeFrame,
    ProbeManifest,
    ProbeRecipe,
    ProbeSegment,
    ProbeSource,
)


def _split_manifest() -> ProbeManifest:
    """4 frames at 2 fps of A | B with one swap at 1 s."""
    recipe = ProbeRecipe(
        kind="split_screen",
        sources=[ProbeSource(id="A", path="a.mp4", frame_count=10, width=64, height=48, fps=5.0),
                 ProbeSource(id="B", path="b.mp4")],
        order=["A", "B"], swaps=1, swap_times=[1.0], fps=2.0, width=128, height=48,
        params={"tile_width": 64, "tile_height": 48},
    )
    frames = []
    for j in range(4):
        seg = int(j >= 2)
        left, right = ("A", "B") if seg == 0 else ("B", "A")
        tiles = [FrameTile(source=left, source_time=j / 2, source_index=j * 2 + (left == "B"),
                           side="left", segment=seg),
                 FrameTile(source=right, source_time=j / 2, source_index=j * 2,
                           side="right", segment=seg)]
        frames.append(ProbeFrame(index=j, time=j / 2, tiles=tiles))
    segments = [
        ProbeSegment(segment=k, source=src, part=k, side=side, source_start=k, source_end=k + 1,
                     out_start=k, out_end=k + 1, frame_start=2 * k, frame_end=2 * k + 2)
        for k in (0, 1)
        for side, src in zip(("left", "right"), ("AB" if k == 0 else "BA"), strict=True)
    ]
    return ProbeManifest(recipe=recipe, duration=2.0, segments=segments, frames=frames)


def _concat_manifest() -> ProbeManifest:
    recipe = ProbeRecipe(kind="sequence", sources=[ProbeSource(id="A", path="a.mp4")],
                         order=["A", "A"], fps=1.0, width=64, height=48, params={"gap": 1.0})
    frames = [
        ProbeFrame(index=0, time=0.0,
                   tiles=[FrameTile(source="A", source_time=0.0, source_index=0, side="full",
                                    segment=0)]),
        ProbeFrame(index=1, time=1.0),  # a black gap
        ProbeFrame(index=2, time=2.0,
                   tiles=[FrameTile(source="A", source_time=0.0, source_index=0, side="full",
                                    segment=1)]),
    ]
    return ProbeManifest(recipe=recipe, duration=3.0, frames=frames)


def test_frame_json_shape() -> None:
    frame = json.loads(_split_manifest().to_json())["frames"][2]
    assert frame == {
        "index": 2, "time": 1.0,
        "tiles": [
            {"source": "B", "source_time": 1.0, "source_index": 5, "side": "left", "segment": 1},
            {"source": "A", "source_time": 1.0, "source_index": 4, "side": "right", "segment": 1},
        ],
    }


def test_round_trip(tmp_path: Path) -> None:
    for manifest in (_split_manifest(), _concat_manifest()):
        path = manifest.save(tmp_path / "p.json")
        assert ProbeManifest.load(path) == manifest
        assert ProbeManifest.model_validate_json(manifest.model_dump_json()) == manifest
    assert [p.name for p in tmp_path.iterdir()] == ["p.json"]  # no temporary file left


def test_json_is_one_line_per_frame() -> None:
    text = _split_manifest().to_json()
    lines = [ln for ln in text.splitlines() if ln.lstrip().startswith('{"index"')]
    assert len(lines) == 4
    assert json.loads(text)["recipe"]["swap_times"] == [1.0]


def test_single_tile_conveniences() -> None:
    m = _concat_manifest()
    f0, gap = m.frames[0], m.frames[1]
    assert (f0.source, f0.source_time, f0.source_index, f0.side, f0.segment) == (
        "A", 0.0, 0, "full", 0)
    assert (gap.source, gap.side, gap.segment) == (None, None, None)
    split = _split_manifest().frames[0]
    assert split.segment == 0 and split.tile("right").source == "B"
    with pytest.raises(ValueError):
        _ = split.source  # two tiles: no single source


def test_rows_flatten() -> None:
    rows = _concat_manifest().rows()
    assert len(rows) == 3 and rows[1]["source"] is None
    rows = _split_manifest().rows()
    assert len(rows) == 8
    assert rows[0] == {"frame": 0, "time": 0.0, "source": "A", "source_time": 0.0,
                       "source_index": 0, "side": "left", "segment": 0}


def test_summary() -> None:
    text = _split_manifest().summary()
    assert "split_screen" in text and "128x48" in text and "4 frames" in text
    assert "swaps: 1 at 1.00 s" in text
    assert "A = a.mp4 (64x48, 5 fps)" in text
    assert "gap between clips: 1.00 s" in _concat_manifest().summary()


def test_region() -> None:
    r = _split_manifest().recipe
    assert r.region("left") == (0, 0, 64, 48)
    assert r.region("right") == (64, 0, 64, 48)
    assert r.region("full") == (0, 0, 128, 48)


def test_validation() -> None:
    good = _split_manifest()
    data = good.model_dump()
    bad = json.loads(json.dumps(data))
    bad["frames"][1]["tiles"][0]["source"] = "Z"
    with pytest.raises(ValidationError, match="unknown source"):
        ProbeManifest.model_validate(bad)
    bad = json.loads(json.dumps(data))
    bad["frames"][1]["index"] = 7
    with pytest.raises(ValidationError):
        ProbeManifest.model_validate(bad)
    bad = json.loads(json.dumps(data))
    bad["frames"][1]["tiles"][0]["side"] = "full"
    with pytest.raises(ValidationError):
        ProbeManifest.model_validate(bad)
    recipe = data["recipe"]
    with pytest.raises(ValidationError):
        ProbeRecipe.model_validate({**recipe, "swap_times": []})
    with pytest.raises(ValidationError):
        ProbeRecipe.model_validate({**recipe, "sources": recipe["sources"][:1] * 2})
    with pytest.raises(ValidationError):
        ProbeRecipe.model_validate({**recipe, "order": ["A", "C"]})
    with pytest.raises(ValidationError):
        ProbeSource(id="A", path="a.mp4", start=3.0, end=2.0)
    with pytest.raises(ValidationError):
        ProbeFrame(index=0, time=0.0, tiles=[
            FrameTile(source="A", source_time=0, source_index=0, side="left", segment=0)] * 2)


def test_load_errors_are_typed(tmp_path: Path) -> None:
    with pytest.raises(SchemaError):
        ProbeManifest.load(tmp_path / "missing.json")
    data = json.loads(_split_manifest().to_json())
    data["frames"][3]["tiles"][1]["source_index"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(SchemaError) as err:
        ProbeManifest.load(path)
    assert err.value.path == str(path)
    assert err.value.field == "frames.3.tiles.1.source_index"
    assert err.value.record == "frames.3"
