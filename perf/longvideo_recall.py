"""Evidence recall of the long-video memories on a SuperMemory-VQA-layout suite (the synthetic
egocentric one, ``m3kit.synth.ego``): ``videorag``, ``egorag`` and ``rag``, each fed what
``m3kit eval supermemory --memory`` feeds it (every session's frames at ``--fps`` and its
transcript lines, one person = one memory key, unix clock), each question retrieving at its own
time (the causal cut) with k = 10.

    nice -n 10 python perf/longvideo_recall.py --data /tmp/s2_suite --fps 1 [--json FILE]

A retrieved item hits when its time span (a clip's or a speech line's start..end, a keyframe's
moment) overlaps a gold answer-evidence span (``answer_evidence``, put on the absolute clock by
its session's start), with ``--slack`` seconds either side. recall@k = the share of answerable
questions with evidence spans that have a hit among their first k items.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from m3kit.memory import MemoryItem, make_memory


def item_span(item: MemoryItem) -> tuple[float, float]:
    t = float(item.time or 0.0)
    start = float(item.metadata.get("start", t))
    end = float(item.metadata.get("end", t))
    return min(start, t), max(end, t)


def hit(items: list[MemoryItem], spans: list[tuple[float, float]], slack: float) -> bool:
    return any(s - slack <= item_span(i)[1] and item_span(i)[0] <= e + slack
               for i in items for s, e in spans)


def main() -> None:
    from m3kit.benchmarks.supermemory.load import load_supermemory
    from m3kit.benchmarks.supermemory.timeline import person_events
    from m3kit.harness.frames import FramePolicy
    from m3kit.media.store import FrameStore
    from m3kit.paths import cache_dir

    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--fps", type=float, default=1.0)
    parser.add_argument("--slack", type=float, default=2.0)
    parser.add_argument("--memories", default="videorag,egorag,rag")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    data = load_supermemory(args.data)
    assert data.root is not None
    store = FrameStore(cache_dir() / "frames")
    policy = FramePolicy(policy="fps", fps=args.fps, n=1)
    streams = {subject: person_events(store, data.root, sessions, policy)[0]
               for subject, sessions in data.sessions.items()}
    questions = []
    for q in data.questions:
        subject = int(q.metadata["subject"]) if "subject" in q.metadata else None
        spans = []
        for span in q.metadata.get("answer_spans", []):
            session = data.session(subject, span["video_id"]) if subject is not None else None
            if session is not None:
                spans.append((session.start + span["start"], session.start + span["end"]))
        if spans and subject in streams and q.time is not None:
            questions.append((subject, q, spans))
    results: dict[str, dict[str, float]] = {}
    for name in args.memories.split(","):
        memory = make_memory(name) if name == "rag" else make_memory(name, store=False)
        start = time.perf_counter()
        for subject, events in streams.items():
            asyncio.run(memory.ingest(f"person-{subject}", events))
        build = time.perf_counter() - start
        hits5 = hits10 = 0
        for subject, q, spans in questions:
            ranked = asyncio.run(memory.retrieve(f"person-{subject}", q.text, k=10, time=q.time))
            hits5 += hit(ranked[:5], spans, args.slack)
            hits10 += hit(ranked, spans, args.slack)
        results[name] = {"questions": len(questions), "recall@5": hits5 / len(questions),
                         "recall@10": hits10 / len(questions), "build_s": build}
    text = json.dumps(results, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
