"""Cold cost of the quickstart's SuperMemory-VQA part: building the synthetic egocentric suite
and answering it with ``m3kit/builtin`` directly, blind and through ``rag``.

    python perf/supermemory_quickstart.py [--out DIR] [--persons N]

Every cache is empty (``M3KIT_CACHE_DIR`` and ``INSPECT_CACHE_DIR`` point inside ``--out``),
so OCR of every distinct frame and every model call is counted. Each stage reports wall and
CPU seconds (this process, all threads) and the ratio of its CPU time to the blind run's, the
same-run baseline (blind reads no media: its time is the harness and the model's own).
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _distinct_frames(root: Path) -> tuple[int, int]:
    """Distinct decoded pictures (what OCR cached by content reads) and frames in all videos."""
    import hashlib

    from m3kit.media.decode import VideoDecoder

    seen: set[str] = set()
    frames = 0
    for video in sorted(root.glob("data/video/*/*.mp4")):
        with VideoDecoder(video) as decoder:
            pictures = decoder.get_frames(list(range(len(decoder))))
        frames += len(pictures)
        seen.update(hashlib.sha1(p.tobytes()).hexdigest() for p in pictures)
    return len(seen), frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--persons", type=int, default=None)
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="m3kit-perf-supermemory-"))
    os.environ["M3KIT_CACHE_DIR"] = str(out / "cache")
    os.environ["INSPECT_CACHE_DIR"] = str(out / "inspect")

    from m3kit.benchmarks.supermemory.quickstart import quickstart_section
    from m3kit.report.logs import read_run
    from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

    config = EgoSuiteConfig() if args.persons is None else EgoSuiteConfig(persons=args.persons)
    stages: list[tuple[str, float, float]] = []
    wall, cpu = time.perf_counter(), _cpu()
    suite = build_ego_suite(config=config)
    stages.append(("suite build", time.perf_counter() - wall, _cpu() - cpu))
    distinct, frames = _distinct_frames(suite.root)
    marks: list[tuple[str, float, float]] = []

    def progress(stage: str, _done: int, _total: int) -> None:
        marks.append((stage, time.perf_counter(), _cpu()))

    section, _ = quickstart_section(out / "quickstart", model="m3kit/builtin", limit=None,
                                    progress=progress, read_run=read_run, config=config)
    marks.append(("end", time.perf_counter(), _cpu()))
    for (stage, w0, c0), (_, w1, c1) in itertools.pairwise(marks):
        if stage.startswith("eval:"):
            stages.append((stage.removeprefix("eval: "), w1 - w0, c1 - c0))
    blind = next(c for name, _, c in stages if "blind" in name)
    print(f"{len(suite.questions)} questions, {config.persons} persons × {config.sessions} days; "
          f"{distinct} distinct pictures in {frames} frames; load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"{'stage':<28} {'wall s':>8} {'cpu s':>8} {'cpu / blind':>12}")
    for name, w, c in stages:
        print(f"{name:<28} {w:8.1f} {c:8.1f} {c / blind:12.2f}")
    for table in section.tables:
        print(table.to_markdown())


if __name__ == "__main__":
    main()
