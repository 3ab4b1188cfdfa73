"""The perception pipeline: scene-change keyframes, the colour-region detector's scene text, a
failing detector skipped and counted, and the Ray executor on a local cluster giving the same
results, and the same stored index, as the in-process one."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from m3kit.media.keyframes import scene_keyframes
from m3kit.perception.detect import ColorRegionDetector, scene_text
from m3kit.perception.pipeline import (
    FrameInput,
    Perceivers,
    PerceptionConfig,
    PerceptionJob,
    run_jobs,
)


def test_keyframes_at_scene_changes_and_after_the_gap():
    dark, light = np.zeros((32, 32), np.float32), np.ones((32, 32), np.float32)
    thumbs = [dark, dark, light, light, light, dark]
    assert scene_keyframes(thumbs, [0, 1, 2, 3, 4, 5], max_gap=None) == [0, 2, 5]
    assert scene_keyframes(thumbs, [0, 1, 2, 3, 4, 5], max_gap=2.0) == [0, 2, 4, 5]


def test_colour_regions_counted_and_placed():
    image = np.full((90, 160, 3), 40, np.uint8)
    image[10:30, 10:30] = (220, 30, 30)   # red, top left
    image[60:80, 120:150] = (30, 30, 220)  # blue, bottom right
    (found,) = ColorRegionDetector().detect([image])
    assert sorted(d.label for d in found) == ["blue region", "red region"]
    text = scene_text(found, 160, 90)
    assert "1 red region" in text and "red region: top left" in text
    assert "blue region: bottom right" in text and "blue region is right of red region" in text
    assert scene_text(found, 160, 90, ["number"]) == "1 blue region; 1 red region."
    assert scene_text([], 160, 90) == ""


class BrokenDetector:
    name = "broken"

    def detect(self, images):
        raise TimeoutError("detector timed out")


def _frames(folder: Path, count: int) -> tuple[FrameInput, ...]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for n in range(count):
        path = folder / f"{n}.png"
        shade = 40 if n < count // 2 else 200
        image = Image.new("RGB", (64, 48), (shade, shade, shade))
        image.paste((220, 30, 30), (8 + shade // 5, 8, 20 + shade // 5, 20))  # a red square
        image.save(path)
        out.append(FrameInput(id=f"f{n}", path=str(path), time=float(n)))
    return tuple(out)


def test_failing_detector_and_missing_frame_are_skipped_and_counted(tmp_path):
    frames = (*_frames(tmp_path, 4), FrameInput(id="gone", path=str(tmp_path / "x.png"), time=9))
    (result,) = run_jobs([PerceptionJob(id="j", frames=frames)], PerceptionConfig(),
                         perceivers=Perceivers(detector=BrokenDetector()))
    assert [p.id for p in result.frames] == ["f0", "f1", "f2", "f3"]
    assert [p.id for p in result.frames if p.keyframe] == ["f0", "f2"]
    reasons = {(s.record, s.field) for s in result.skipped}
    assert ("gone", None) in reasons and ("f0", "detect") in reasons
    assert result.cost.errors == 3 and result.cost.detector_images == 0


def test_unknown_executor_is_refused():
    with pytest.raises(ValueError, match="unknown executor"):
        run_jobs([], PerceptionConfig(), executor="dask")  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    ray = pytest.importorskip("ray", reason="the Ray executor needs ray (pip install 'm3kit[ray]')")
    cache = tmp_path_factory.mktemp("cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("M3KIT_CACHE_DIR", str(cache))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"M3KIT_CACHE_DIR": str(cache)}})
    yield ray
    ray.shutdown()
    mp.undo()


@pytest.mark.slow
def test_ray_executor_gives_the_in_process_results(ray_cluster, tmp_path):
    from m3kit.perception.pipeline import default_perceivers

    config = PerceptionConfig(speech="none")
    jobs = [PerceptionJob(id=f"video-{n}", frames=_frames(tmp_path / str(n), 6)) for n in range(3)]
    local = run_jobs(jobs, config, perceivers=default_perceivers(config))
    remote = run_jobs(jobs, config, executor="ray", workers=2)
    assert [r.job for r in remote] == [j.id for j in jobs]
    assert [r.frames for r in remote] == [r.frames for r in local]
    assert [r.cost.frames_decoded for r in remote] == [6, 6, 6]


@pytest.mark.slow
def test_more_ray_workers_than_cluster_cpus_share_them(ray_cluster, tmp_path):
    """3 workers on the fixture's 2-CPU cluster: an actor reserving a whole CPU would never
    start and the run would wait forever; sharing, every job is done."""
    config = PerceptionConfig(speech="none", detector="none")
    jobs = [PerceptionJob(id=f"v{n}", frames=_frames(tmp_path / str(n), 2)) for n in range(3)]
    done = run_jobs(jobs, config, executor="ray", workers=3)
    assert [r.job for r in done] == ["v0", "v1", "v2"]
    assert all(len(r.frames) == 2 for r in done)


@pytest.mark.slow
def test_ray_built_index_is_the_in_process_index(ray_cluster, tmp_path):
    from m3kit.memory import MemoryEvent
    from m3kit.memory.store import IndexStore
    from m3kit.memory.videorag import VideoRagMemory
    from m3kit.schema import ImageRef

    events = [MemoryEvent(id=f.id, kind="frame", time=f.time * 30, media=ImageRef(path=f.path))
              for f in _frames(tmp_path / "frames", 40)]
    stored = []
    for executor in ("inprocess", "ray"):
        store = IndexStore(tmp_path / executor)
        mem = VideoRagMemory(speech="none", store=store, executor=executor, shard_seconds=300.0)
        # two keys in one pipeline run: on Ray their jobs share the workers
        asyncio.run(mem.ingest_many({"v": events, "w": events[:10]}))
        assert mem.report("w").cost.frames_decoded == 10
        assert mem.report("v").origin == "built"
        # HEAD names a uniquely named version: ``<events fingerprint>.<unique suffix>``
        head = (store.folder(mem.store_config(), "v") / "HEAD").read_text().split(".")[0]
        index = store.lookup(mem.store_config(), "v", _hashes(events))
        stored.append((mem.items("v"), index, head))
    (items_a, index_a, head_a), (items_b, index_b, head_b) = stored
    assert items_a == items_b and head_a == head_b
    assert list(index_a.arrays["ids"]) == list(index_b.arrays["ids"])
    assert any(i.startswith("det:") for i in index_a.arrays["ids"])
    np.testing.assert_allclose(index_a.arrays["vectors"], index_b.arrays["vectors"], atol=1e-6)


def _hashes(events):
    from m3kit.memory.store import event_hash

    return [event_hash(e) for e in sorted(events, key=lambda e: e.time)]
