"""Evidence recall of BM25, dense, hybrid and the long-video memories on a SuperMemory-VQA-layout
suite (the synthetic egocentric one, ``m3kit supermemory synth``), per question type, offline.

    nice -n 10 python perf/longvideo_recall.py --data SUITE [--fps 1] [--out FILE.md]
        [--json FILE] [--systems bm25,rag,...]

Every system is fed what ``m3kit eval supermemory --memory`` feeds it (every session's frames at
``--fps`` and its transcript lines, one person = one memory key, unix clock) and each question
retrieves at its own time (the causal cut), 15 deep.

Systems:

- ``bm25``, ``dense``, ``hybrid``: a ``RagMemory`` with ``retrieval`` lexical / dense / hybrid
  (no views) and query rewriting off, over the same items as ``rag`` (frames by their OCR text,
  speech lines); ``hybrid+views``: hybrid with the items' passages and turn windows
  (``memory/retrieval/views.py``), rewriting off;
- ``rag``: ``RagMemory`` as configured by default (hybrid with views, rewriting on);
- ``videorag``, ``egorag``: the long-video memories in their default (hybrid) retrieval, and
  ``videorag (dense)``, ``egorag (dense)`` as released (cosine only; Video-RAG's 0.3 threshold).
  Each mode pair shares one index store: the dense row loads the hybrid row's stored index
  (the retrieval mode is not part of the store's address), so its build column is that load.

Depth: the rag family with k = 15, ``egorag`` with k = 15 clips (its days and hours as default),
``videorag`` with its default k = 5 per database (ASR, OCR, DET: 15 texts).

A retrieved item *covers* a gold answer-evidence span (``answer_evidence``, put on the absolute
clock by its session's start) when its time span (a clip's or a speech line's start..end, a
frame's moment) overlaps it, with ``--slack`` seconds either side. recall@k: the share of a
question's gold spans covered among its first k items; hit@15: 1 when any is. Means over the
answerable questions that have spans; per type (the suite's skills) with n. Each system's
recall@5 is compared with ``bm25``'s by a paired cluster bootstrap over persons (the memory key,
``m3kit.metrics.bootstrap``). Index-build seconds are summed over persons (model loading
excluded; frames come from the frame store and OCR from the shared OCR cache, warm when an earlier
run filled them). Output: markdown on stdout or ``--out``; ``--json``: every number, unrounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m3kit.memory import Memory, MemoryItem

KS = (5, 10, 15)
DEPTH = 15
METRICS = ("recall@5", "recall@10", "recall@15", "hit@15")
Span = tuple[float, float]


def item_span(item: MemoryItem) -> Span:
    """The stretch of the stream an item stands for: its ``start``..``end`` when it has them
    (clips, summaries), else its moment (a frame, a speech line at its end)."""
    t = float(item.time or 0.0)
    start = float(item.metadata.get("start", t))
    end = float(item.metadata.get("end", t))
    return min(start, t), max(end, t)


def covered(items: Sequence[MemoryItem], span: Span, slack: float) -> bool:
    """Whether any of ``items`` overlaps ``span`` (widened by ``slack`` either side)."""
    start, end = span
    return any(start - slack <= item_span(i)[1] and item_span(i)[0] <= end + slack
               for i in items)


def span_recall(ranked: Sequence[MemoryItem], spans: Sequence[Span], k: int,
                slack: float) -> float:
    """The share of ``spans`` covered by the first ``k`` of ``ranked``."""
    return sum(covered(ranked[:k], s, slack) for s in spans) / len(spans)


def systems(store: Path) -> dict[str, Memory]:
    from m3kit.memory import RagMemory
    from m3kit.memory.egorag import EgoRagMemory
    from m3kit.memory.retrieval.config import (
        BM25_SEARCH,
        DENSE_SEARCH,
        FUSED_SEARCH,
        RetrievalConfig,
    )
    from m3kit.memory.videorag import VideoRagMemory
    from m3kit.perception import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])  # model loading is not index building
    plain = {"embedder": embedder, "k": DEPTH}
    return {
        "bm25": RagMemory(retrieval=BM25_SEARCH, **plain),
        "dense": RagMemory(retrieval=DENSE_SEARCH, **plain),
        "hybrid": RagMemory(retrieval=FUSED_SEARCH, **plain),
        "hybrid+views": RagMemory(retrieval=RetrievalConfig(rewriting=False), **plain),
        "rag": RagMemory(**plain),
        "videorag": VideoRagMemory(embedder=embedder, store=store),
        "videorag (dense)": VideoRagMemory.from_settings(embedder=embedder, store=store,
                                                         retrieval="dense"),
        "egorag": EgoRagMemory(embedder=embedder, k=DEPTH, store=store),
        "egorag (dense)": EgoRagMemory.from_settings(embedder=embedder, k=DEPTH, store=store,
                                                     retrieval="dense"),
    }


def questions_with_spans(data: Any, keys: set[int]) -> list[tuple[int, Any, list[Span]]]:
    """(person, question, gold spans on the absolute clock) of each question that has spans."""
    out = []
    for q in data.questions:
        subject = int(q.metadata["subject"]) if "subject" in q.metadata else None
        spans = []
        for span in q.metadata.get("answer_spans", []):
            session = data.session(subject, span["video_id"]) if subject is not None else None
            if session is not None:
                spans.append((session.start + span["start"], session.start + span["end"]))
        if spans and subject in keys and q.time is not None:
            out.append((subject, q, spans))
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from m3kit.benchmarks.supermemory.load import load_supermemory
    from m3kit.benchmarks.supermemory.timeline import person_events
    from m3kit.harness.frames import FramePolicy
    from m3kit.media.store import FrameStore
    from m3kit.paths import cache_dir

    data = load_supermemory(args.data)
    assert data.root is not None
    frames = FrameStore(cache_dir() / "frames")
    policy = FramePolicy(policy="fps", fps=args.fps, n=1)
    streams = {subject: person_events(frames, data.root, sessions, policy)
               for subject, sessions in data.sessions.items()}
    asked = questions_with_spans(data, set(streams))
    with tempfile.TemporaryDirectory(prefix="longvideo-recall-") as store:
        memories = systems(Path(store))
        if args.systems:
            chosen = [n.strip() for n in args.systems.split(",")]
            unknown = set(chosen) - set(memories)
            if unknown:
                raise SystemExit(f"unknown systems {sorted(unknown)}; known: "
                                 f"{', '.join(memories)}")
            memories = {n: memories[n] for n in chosen}
        build: dict[str, float] = {}
        retrieve_seconds: dict[str, float] = defaultdict(float)
        rows: list[dict[str, Any]] = [
            {"id": q.id, "type": q.question_type, "person": subject, "spans": spans}
            for subject, q, spans in asked]
        for name, memory in memories.items():
            started = time.perf_counter()
            for subject, events in streams.items():
                await memory.ingest(f"person-{subject}", events)
            build[name] = time.perf_counter() - started
            print(f"{name}: built in {build[name]:.1f} s", file=sys.stderr)
            for row, (subject, q, spans) in zip(rows, asked, strict=True):
                started = time.perf_counter()
                ranked = await memory.retrieve(f"person-{subject}", q.text, k=DEPTH,
                                               time=q.time)
                retrieve_seconds[name] += time.perf_counter() - started
                scores = {f"recall@{k}": span_recall(ranked, spans, k, args.slack)
                          for k in KS}
                scores["hit@15"] = float(any(covered(ranked[:15], s, args.slack)
                                             for s in spans))
                row[name] = {"ranked": [i.id for i in ranked], **scores}
    return {
        "data": str(args.data), "fps": args.fps, "slack": args.slack,
        "questions": len(rows), "persons": len({r["person"] for r in rows}),
        "types": sorted({r["type"] for r in rows}), "systems": list(memories),
        "build_seconds": build,
        "retrieve_ms_per_question": {n: 1000 * s / max(len(rows), 1)
                                     for n, s in retrieve_seconds.items()},
        "rows": rows,
    }


def summary(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per system: each metric's mean over the questions and per type (with n), and its
    recall@5 against ``bm25``'s (paired cluster bootstrap over persons) when ``bm25`` ran."""
    from m3kit.metrics.bootstrap import group_units, paired_cluster_bootstrap

    rows = result["rows"]

    def means(picked: Sequence[dict[str, Any]], name: str) -> dict[str, float]:
        return {m: sum(r[name][m] for r in picked) / len(picked) for m in METRICS}

    out: dict[str, dict[str, Any]] = {}
    for name in result["systems"]:
        out[name] = means(rows, name)
        out[name]["by_type"] = {
            t: means([r for r in rows if r["type"] == t], name)
            | {"n": sum(1 for r in rows if r["type"] == t)} for t in result["types"]}
        if "bm25" in result["systems"] and name != "bm25":
            units = [[(r["bm25"]["recall@5"], r[name]["recall@5"]) for r in unit]
                     for unit in group_units(rows, lambda r: r["person"])]
            diff = paired_cluster_bootstrap(
                units, lambda xs: {"recall@5": sum(xs) / len(xs) if xs else None})["recall@5"]
            out[name]["vs_bm25_recall@5"] = diff.model_dump()
    return out


def markdown(result: dict[str, Any], summary: dict[str, dict[str, Any]]) -> str:
    names, types = result["systems"], result["types"]
    per_type = {t: summary[names[0]]["by_type"][t]["n"] for t in types}
    lines = [
        (f"# Evidence recall on {Path(result['data']).name}: {result['questions']} answerable "
         f"questions with answer-evidence spans, {result['persons']} persons"),
        "",
        ("Generated by `python perf/longvideo_recall.py` (offline: MiniLM, SQLite FTS5, "
         f"RapidOCR; frames at {result['fps']:g} fps; 15 deep, each question at its own time; "
         f"a hit overlaps a gold span with {result['slack']:g} s slack). One question is "
         f"{100 / result['questions']:.1f} points of the overall numbers."),
        "",
        ("| system | recall@5 | recall@10 | recall@15 | hit@15 | recall@5 - bm25 [95% CI] | "
         "index build (s) | retrieve (ms / q) |"),
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        cols = summary[name]
        versus = cols.get("vs_bm25_recall@5")
        delta = ("–" if versus is None or versus["diff"] is None else
                 f"{100 * versus['diff']:+.1f} [{_pct(versus['lo'])}, {_pct(versus['hi'])}]")
        lines.append(f"| {name} | " + " | ".join(_pct(cols[m]) for m in METRICS)
                     + f" | {delta} | {result['build_seconds'][name]:.1f} | "
                     f"{result['retrieve_ms_per_question'][name]:.0f} |")
    for metric in METRICS:
        lines += ["", f"{metric} by question type (n):", "",
                  "| system | " + " | ".join(f"{t} ({per_type[t]})" for t in types) + " |",
                  "|---|" + "---|" * len(types)]
        for name in names:
            lines.append(f"| {name} | " + " | ".join(
                _pct(summary[name]["by_type"][t][metric]) for t in types) + " |")
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="a SuperMemory-VQA-layout root")
    parser.add_argument("--fps", type=float, default=1.0, help="frames per second fed")
    parser.add_argument("--slack", type=float, default=2.0, help="seconds either side of a span")
    parser.add_argument("--systems", default=None,
                        help="only these systems, comma-separated (default: all)")
    parser.add_argument("--out", type=Path, default=None, help="markdown report (default: stdout)")
    parser.add_argument("--json", type=Path, default=None, help="every number, unrounded")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    table = summary(result)
    text = markdown(result, table)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    else:
        print(text)
    if args.json:
        args.json.write_text(json.dumps({**result, "summary": table}) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
