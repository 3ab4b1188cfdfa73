"""Index-build time of ``videorag`` and ``egorag`` per video-hour, against a naive baseline
measured in the same run (OCR + embed every frame at 1 fps), a warm rebuild from the stored index,
and the Ray executor (2 workers) against the in-process one on 4 videos.

    nice -n 10 python perf/longvideo_index.py --minutes 4 --ray-minutes 1 --out /tmp/lv

The video is generated: 1280x720 frames at 1 fps (what the frame store hands a memory), a
caption that changes every ``--scene`` seconds (on-screen text), a coloured object per scene and
one transcript line per scene (released transcripts: no Whisper). Every number is printed as
JSON; times are wall seconds on this machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

WORDS = ("kitchen", "garage", "office", "garden", "bedroom", "station", "market", "library")


def make_video(folder: Path, seconds: int, scene: int, tag: str):
    from m3kit.memory import MemoryEvent
    from m3kit.schema import ImageRef

    folder.mkdir(parents=True, exist_ok=True)
    font = ImageFont.load_default(size=48)
    events = []
    for t in range(seconds):
        s = t // scene
        path = folder / f"{t:06d}.jpg"
        if not path.exists():
            image = Image.new("RGB", (1280, 720), (60, 60, 70))
            draw = ImageDraw.Draw(image)
            draw.text((80, 560), f"{tag} {WORDS[s % len(WORDS)].upper()} ROOM {100 + s}",
                      fill=(255, 255, 255), font=font)
            x = 200 + (s * 137) % 800
            draw.rectangle((x, 200, x + 160, 360),
                           fill=((200, 40, 40), (40, 40, 200), (40, 180, 40))[s % 3])
            image.save(path, quality=90)
        events.append(MemoryEvent(id=f"frame-{t:06d}", kind="frame", time=float(t),
                                  media=ImageRef(path=str(path))))
        if t % scene == scene - 1:
            events.append(MemoryEvent(
                id=f"speech-{t:06d}", kind="transcript", time=float(t),
                text=f"we are in the {WORDS[s % len(WORDS)]} now, room {100 + s}",
                metadata={"start": t - 3.0, "end": float(t)}))
    return events


def naive(events) -> float:
    """OCR and embed every frame (1 fps): what a memory without keyframes or caches does."""
    from m3kit.media.image import read_image_rgb
    from m3kit.perception import MiniLMEmbedder, RapidTextReader

    reader, embedder = RapidTextReader(), MiniLMEmbedder()
    reader.read([read_image_rgb(events[0].media.path)])  # models loaded before the clock
    embedder.embed(["warm"])
    start = time.perf_counter()
    texts = []
    for event in events:
        if event.kind == "frame":
            texts.append(" ".join(reader.read_text([read_image_rgb(event.media.path)])))
    embedder.embed([t for t in texts if t])
    return time.perf_counter() - start


def build(name: str, events, store: Path, **kw) -> tuple[float, str]:
    from m3kit.memory import make_memory

    memory = make_memory(name, store=store, speech="transcripts", **kw)
    memory.embedder().embed(["warm"])  # the model load is not index building
    start = time.perf_counter()
    asyncio.run(memory.ingest("video", events))
    return time.perf_counter() - start, memory.report("video").origin


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=6.0)
    parser.add_argument("--ray-minutes", type=float, default=1.0)
    parser.add_argument("--scene", type=int, default=20)
    parser.add_argument("--out", type=Path, default=Path("/tmp/m3kit-longvideo"))
    args = parser.parse_args()
    out = args.out
    shutil.rmtree(out / "cache", ignore_errors=True)
    shutil.rmtree(out / "stores", ignore_errors=True)
    os.environ["M3KIT_CACHE_DIR"] = str(out / "cache")  # cold OCR cache
    seconds = int(args.minutes * 60)
    events = make_video(out / "video", seconds, args.scene, "MAIN")
    hours = seconds / 3600
    results: dict[str, float | str] = {"video_seconds": seconds, "frames_per_second": 1}
    results["naive_s"] = naive(events)
    for name in ("videorag", "egorag"):
        shutil.rmtree(out / "cache", ignore_errors=True)  # each cold build OCRs from scratch
        cold, origin = build(name, events, out / "stores" / name)
        warm, again = build(name, events, out / "stores" / name)
        assert (origin, again) == ("built", "stored")
        results[f"{name}_cold_s"] = cold
        results[f"{name}_warm_s"] = warm
        results[f"{name}_speedup_vs_naive"] = results["naive_s"] / cold
        results[f"{name}_warm_speedup"] = cold / warm
        results[f"{name}_cold_s_per_video_hour"] = cold / hours
    results["naive_s_per_video_hour"] = results["naive_s"] / hours
    # Ray: 4 videos in one pipeline run (``ingest_many``), 2 workers vs in process, each with a
    # cold OCR cache and an empty store
    from m3kit.memory import make_memory

    videos = {f"video-{n}": make_video(out / f"ray{n}", int(args.ray_minutes * 60), args.scene,
                                       f"V{n}") for n in range(4)}
    import ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"M3KIT_CACHE_DIR": str(out / "cache")}})
    for executor in ("inprocess", "ray"):
        shutil.rmtree(out / "cache", ignore_errors=True)
        memory = make_memory("videorag", store=out / "stores" / executor, speech="transcripts",
                             executor=executor, workers=2)
        memory.embedder().embed(["warm"])
        start = time.perf_counter()
        asyncio.run(memory.ingest_many(videos))
        results[f"four_videos_{executor}_s"] = time.perf_counter() - start
    results["ray_speedup"] = results["four_videos_inprocess_s"] / results["four_videos_ray_s"]
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
