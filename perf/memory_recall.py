"""Memory retrieval benchmark: supporting-fact recall of BM25, dense, hybrid (+ rerank) and each
m3kit memory, per question type, on an M3Exam persona or LoCoMo, offline.

    python perf/memory_recall.py --data DATA [--types 1,2,3,4] [--systems bm25,rag,...]
        [--out FILE.md] [--json FILE] [--ocr-cache DIR] [--rerank-model MODEL] [--per-type N]
        [--rerank-depth D] [--first-per-type N] [--embedder e5-small|minilm]

``--data`` is an M3Exam persona folder (or a folder of personas) or LoCoMo's ``locomo10.json``.
Every memory is fed what ``m3kit eval`` feeds it: the event stream of
``m3kit.benchmarks.m3exam.stream.conversation_stream`` (PDF pages with their text layer). One
memory key per conversation; each question retrieves at its own time (the causal cut) with k = 15
and is scored on the round ids of its supporting facts (attachments count as their round):
recall@5/10/15 and hit@15 (``m3kit.metrics.retrieval``), over the questions that have supporting
facts.

Systems (each over the same items as ``rag``: rounds and attachment surrogates):

- ``bm25``: SQLite FTS5 BM25 alone; ``dense``: MiniLM cosine alone (``rag`` before hybrid);
- ``hybrid``: both, reciprocal-rank fused, no time scope; ``hybrid+views``: with the items'
  passages and turn windows (``memory/retrieval/views.py``), still no rewriting;
- ``hybrid+maxsim``, ``rag+maxsim``: ``hybrid`` and ``rag`` with the late-interaction reranker
  (``memory/retrieval/maxsim.py``, MiniLM token embeddings, offline, fused with the first
  stage's order) over the top ``--rerank-depth``; ``+maxsim-pure``: MaxSim's order alone;
- ``hybrid+rerank``: ``hybrid`` with a model reranker (``--rerank-model``, any inspect model;
  skipped without one) over the top ``--rerank-depth``;
- memories in their default configuration (hybrid with views, rewriting, time scopes):
  ``rag``, ``hierarchical``,
  ``proctor`` (bias by its lexical detector), and ``hierarchical (filter)`` / ``proctor
  (dense)``: the designs before (routing that hides unchosen sessions; cosine pool).

Index-build seconds are summed over the conversations; OCR goes through ``--ocr-cache`` when
given (then a warm cache makes build seconds the indexing alone). ``--per-type N`` also answers
the first N questions of each type with ``m3kit/builtin`` through ``rag`` and ``proctor`` in both
retrieval configurations, for the answer cost (prompt words read by the builtin). Output: a
markdown report on stdout, or in ``--out``; ``--json`` writes every number, unrounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

KS = (5, 10, 15)
DEPTH = 15
METRICS = ("recall@5", "recall@10", "recall@15", "hit@15")


class MemoEmbedder:
    """A ``TextEmbedder`` that embeds each distinct text once: every system and memory of the
    run asks for the same questions and many of the same item texts."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._memo: dict[str, np.ndarray] = {}
        self._queries: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, self._memo, self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        from m3kit.perception.base import embed_queries

        return self._cached(texts, self._queries, lambda t: embed_queries(self.inner, t))

    def _cached(self, texts: Sequence[str], memo: dict[str, np.ndarray], embed: Any
                ) -> np.ndarray:
        todo = list(dict.fromkeys(t for t in texts if t not in memo))
        if todo:
            for text, row in zip(todo, embed(todo), strict=True):
                memo[text] = row
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([memo[t] for t in texts])



def systems(embedder: Any, reader: Any, rerank_model: str | None, rerank_depth: int
            ) -> dict[str, Any]:
    from m3kit.memory import HierarchicalMemory, RagMemory
    from m3kit.memory.proctor import ProctorMemory
    from m3kit.memory.retrieval.config import (
        BM25_SEARCH,
        DENSE_SEARCH,
        FUSED_SEARCH,
        RetrievalConfig,
    )
    from m3kit.memory.retrieval.maxsim import MaxSimReranker

    plain = {"embedder": embedder, "k": DEPTH, "reader": reader, "ocr": reader is not None}
    out: dict[str, Any] = {
        "bm25": RagMemory(retrieval=BM25_SEARCH, **plain),
        "dense": RagMemory(retrieval=DENSE_SEARCH, **plain),
        "hybrid": RagMemory(retrieval=FUSED_SEARCH, **plain),
        "hybrid+views": RagMemory(retrieval=RetrievalConfig(rewriting=False), **plain),
    }
    # One MaxSim reranker per variant for both rows: its cache of item token embeddings is
    # shared; ``maxsim`` is fused with the first stage, ``maxsim-pure`` is MaxSim alone.
    maxsim = {"maxsim": MaxSimReranker(lambda: embedder.inner),
              "maxsim-pure": MaxSimReranker(lambda: embedder.inner, fuse=False)}
    for name, reranker in maxsim.items():
        out[f"hybrid+{name}"] = RagMemory(retrieval=RetrievalConfig(
            views=False, rewriting=False, reranker=reranker, rerank_depth=rerank_depth), **plain)
    if rerank_model:
        out["hybrid+rerank"] = RagMemory(retrieval=RetrievalConfig(
            views=False, rewriting=False, reranker=rerank_model, rerank_depth=rerank_depth),
            **plain)
    out |= {
        "rag": RagMemory(**plain),
        **{f"rag+{name}": RagMemory(retrieval=RetrievalConfig(
            reranker=reranker, rerank_depth=rerank_depth), **plain)
           for name, reranker in maxsim.items()},
        "hierarchical": HierarchicalMemory(embedder=embedder, k=DEPTH),
        "hierarchical (filter)": HierarchicalMemory(embedder=embedder, k=DEPTH,
                                                    routing="filter", retrieval=DENSE_SEARCH),
        "proctor": ProctorMemory(embedder=embedder, reader=reader, ocr=reader is not None),
        "proctor (no α)": ProctorMemory(embedder=embedder, reader=reader, ocr=reader is not None,
                                        alphas=dict.fromkeys(("image", "document", "chart"),
                                                             0.0)),
        "proctor (in_round)": ProctorMemory(embedder=embedder, reader=reader,
                                            ocr=reader is not None, pdf_pages="in_round"),
        "proctor (dense)": ProctorMemory(embedder=embedder, reader=reader,
                                         ocr=reader is not None, retrieval=DENSE_SEARCH),
    }
    return out


async def ranking(name: str, memory: Any, key: str, question: Any) -> list[str]:
    """The rounds ``memory`` ranks for ``question`` (``retrieved_rounds``: an attachment is its
    round, a summary takes no slot)."""
    from m3kit.benchmarks.m3exam.load import retrieved_rounds
    from m3kit.memory.proctor import ProctorMemory, lexical_bias

    if isinstance(memory, ProctorMemory):
        items = await memory.retrieve(key, question.text, k=DEPTH, time=question.time,
                                      bias=lexical_bias(question.text))
    else:
        items = await memory.retrieve(key, question.text, k=DEPTH, time=question.time)
    return retrieved_rounds(i.id for i in items)


def first_per_type(questions: Sequence[Any], count: int) -> list[Any]:
    """The first ``count`` questions of each type, in data order (all when ``count`` is 0)."""
    if count <= 0:
        return list(questions)
    taken: dict[str, int] = defaultdict(int)
    kept = []
    for q in questions:
        taken[q.question_type] += 1
        if taken[q.question_type] <= count:
            kept.append(q)
    return kept


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from m3kit.benchmarks.m3exam.load import load_data
    from m3kit.benchmarks.m3exam.stream import conversation_stream
    from m3kit.metrics.retrieval import hit_at_k, recall_at_k
    from m3kit.perception.embeddings import named_embedder

    data = load_data(args.data)
    wanted = set(args.types.split(",")) if args.types else None
    questions = first_per_type([q for q in data.questions if q.evidence
                                and (wanted is None or q.question_type in wanted)],
                               args.first_per_type)
    embedder = MemoEmbedder(named_embedder(args.embedder))
    embedder.embed(["warm up"])  # model loading is not index building
    reader = None
    if not args.no_ocr:
        from m3kit.perception import RapidTextReader

        reader = RapidTextReader()
        if args.ocr_cache is not None:
            from m3kit.perception.cache import CachedTextReader

            reader = CachedTextReader(reader, args.ocr_cache)
    memories = systems(embedder, reader, args.rerank_model, args.rerank_depth)
    if args.systems:
        chosen = [n.strip() for n in args.systems.split(",")]
        unknown = set(chosen) - set(memories)
        if unknown:
            raise SystemExit(f"unknown systems {sorted(unknown)}; known: {', '.join(memories)}")
        memories = {n: memories[n] for n in chosen}

    by_key: dict[str, list[Any]] = defaultdict(list)
    for q in questions:
        by_key[str(q.metadata.get("persona"))].append(q)
    build: dict[str, float] = defaultdict(float)
    rows: list[dict[str, Any]] = []
    retrieve_seconds: dict[str, float] = defaultdict(float)
    for key, asked in by_key.items():
        events = conversation_stream(data.conversations[key])
        for name, memory in memories.items():
            await memory.ingest(key, events)
            build[name] += memory.build_seconds(key)
        print(f"{key}: built; {len(asked)} questions", file=sys.stderr)
        for q in asked:
            row: dict[str, Any] = {"id": q.id, "type": q.question_type, "key": key,
                                   "evidence": list(q.evidence)}
            for name, memory in memories.items():
                start = time.perf_counter()
                ranked = await ranking(name, memory, key, q)
                retrieve_seconds[name] += time.perf_counter() - start
                scores = {f"recall@{k}": recall_at_k(ranked, q.evidence, k) for k in KS}
                scores["hit@15"] = hit_at_k(ranked, q.evidence, 15)
                row[name] = {"ranked": ranked, **scores}
            rows.append(row)
        for memory in memories.values():
            memory.forget(key)  # one conversation's index at a time
    stages = {n: m.rerank_stage for n, m in memories.items()
              if getattr(m, "rerank_stage", None) is not None}
    result: dict[str, Any] = {
        "data": args.data.name, "embedder": embedder.name, "questions": len(rows),
        "conversations": len(by_key),
        "types": sorted({r["type"] for r in rows}), "systems": list(memories),
        "build_seconds": dict(build),
        "retrieve_ms_per_question": {n: 1000 * s / max(len(rows), 1)
                                     for n, s in retrieve_seconds.items()},
        "rerank": {n: stage.report() for n, stage in stages.items()},
        "rows": rows,
    }
    if args.per_type:
        result["answers"] = await answer_costs(data, questions, args.per_type, embedder, reader)
    return result


async def answer_costs(data: Any, questions: Sequence[Any], per_type: int, embedder: Any,
                       reader: Any) -> dict[str, dict[str, float]]:
    """Prompt words ``m3kit/builtin`` reads per question through ``rag`` and ``proctor``, each
    with the hybrid default and with dense retrieval, on the first ``per_type`` of each type."""
    from inspect_ai.model import get_model

    import m3kit.models  # noqa: F401  (registers m3kit/builtin)
    from m3kit.benchmarks.m3exam.prompt import attachment_name, question_prompt
    from m3kit.benchmarks.m3exam.stream import conversation_stream
    from m3kit.memory import RagMemory
    from m3kit.memory.proctor import ProctorMemory
    from m3kit.memory.retrieval.config import DENSE_SEARCH

    ocr = reader is not None
    memories = {
        "rag": RagMemory(embedder=embedder, reader=reader, ocr=ocr, k=DEPTH),
        "rag (dense)": RagMemory(embedder=embedder, reader=reader, ocr=ocr, k=DEPTH,
                                 retrieval=DENSE_SEARCH),
        "proctor": ProctorMemory(embedder=embedder, reader=reader, ocr=ocr, bias="lexical"),
        "proctor (dense)": ProctorMemory(embedder=embedder, reader=reader, ocr=ocr,
                                         bias="lexical", retrieval=DENSE_SEARCH),
    }
    by_type: dict[str, list[Any]] = defaultdict(list)
    for q in questions:
        by_type[q.question_type].append(q)
    sample = [q for t in sorted(by_type) for q in by_type[t][:per_type]]
    model = get_model("m3kit/builtin", ocr=False, speech=False)
    tokens: dict[str, list[int]] = defaultdict(list)
    for q in sample:
        key = str(q.metadata.get("persona"))
        conversation = data.conversations[key]
        candidates = [attachment_name(a) for r in conversation.iter_rounds()
                      for a in r.attachments]
        for name, memory in memories.items():
            await memory.ingest(key, conversation_stream(conversation))
            answer = await memory.answer(key, question_prompt(q, candidates), model,
                                         time=q.time, query=q.text)
            tokens[name].append(answer.usage.prompt_tokens + answer.usage.completion_tokens)
    return {name: {"questions": len(t), "tokens_per_question": sum(t) / len(t)}
            for name, t in tokens.items() if t}


def table(rows: Sequence[dict[str, Any]], names: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Per system: each metric's mean over all rows and per question type (``None`` when no
    row of that type is defined)."""
    from m3kit.metrics.retrieval import mean_defined

    types = sorted({r["type"] for r in rows})
    out: dict[str, dict[str, Any]] = {}
    for name in names:
        out[name] = {m: mean_defined(r[name][m] for r in rows) for m in METRICS}
        out[name]["by_type"] = {
            t: {m: mean_defined(r[name][m] for r in rows if r["type"] == t) for m in METRICS}
            | {"n": sum(1 for r in rows if r["type"] == t)}
            for t in types}
    return out


def markdown(result: dict[str, Any], summary: dict[str, dict[str, Any]]) -> str:
    names = result["systems"]
    lines = [
        (f"# Memory retrieval: {result['data']} ({result['questions']} questions with "
         f"supporting facts, {result['conversations']} conversation(s))"),
        "",
        (f"Generated by `python perf/memory_recall.py` (offline: {result['embedder']}, SQLite "
         "FTS5, RapidOCR; k = 15, each question at its own time; a ranking read as rounds, a "
         "summary taking no slot)."),
        "",
        ("| system | recall@5 | recall@10 | recall@15 | hit@15 | index build (s) | "
         "retrieve (ms / q) |"),
        "|---|---|---|---|---|---|---|",
    ]
    for name in names:
        cols = summary[name]
        lines.append(f"| {name} | " + " | ".join(_pct(cols[m]) for m in METRICS)
                     + f" | {result['build_seconds'][name]:.1f} | "
                     f"{result['retrieve_ms_per_question'][name]:.0f} |")
    types = result["types"]
    lines += ["", "recall@5 by question type (n):", "",
              "| system | " + " | ".join(f"{t} ({summary[names[0]]['by_type'][t]['n']})"
                                         for t in types) + " |",
              "|---|" + "---|" * len(types)]
    for name in names:
        lines.append(f"| {name} | " + " | ".join(
            _pct(summary[name]["by_type"][t]["recall@5"]) for t in types) + " |")
    for name, report in (result.get("rerank") or {}).items():
        lines += ["", f"Reranker of {name}: `{json.dumps(report)}`"]
    if result.get("answers"):
        lines += ["", "Answer cost (m3kit/builtin, prompt + completion words per question):", "",
                  "| memory | questions | tokens / q |", "|---|---|---|"]
        for name, cost in result["answers"].items():
            lines.append(f"| {name} | {cost['questions']} | {cost['tokens_per_question']:.0f} |")
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="an M3Exam persona folder (or folder of personas) or locomo10.json")
    parser.add_argument("--types", default=None, help="only these question types, e.g. 1,2,3,4")
    parser.add_argument("--out", type=Path, default=None, help="markdown report (default: stdout)")
    parser.add_argument("--json", type=Path, default=None, help="every number, unrounded")
    parser.add_argument("--systems", default=None,
                        help="only these systems, comma-separated (default: all)")
    parser.add_argument("--ocr-cache", type=Path, default=None, help="OCR cache folder")
    parser.add_argument("--no-ocr", action="store_true", help="images by description only")
    parser.add_argument("--rerank-model", default=None,
                        help="inspect model for the hybrid+rerank row (none ships offline)")
    parser.add_argument("--rerank-depth", type=int, default=30,
                        help="candidates a reranker reorders (the memories' default: 30)")
    parser.add_argument("--first-per-type", type=int, default=0,
                        help="only the first N questions of each type (default: all)")
    parser.add_argument("--embedder", default="e5-small",
                        help="the memories' embedder: e5-small (their default) or minilm")
    parser.add_argument("--per-type", type=int, default=0,
                        help="also answer N questions of each type with m3kit/builtin")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    summary = table(result["rows"], result["systems"])
    text = markdown(result, summary)
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**result, "summary": summary}, indent=1),
                             encoding="utf-8")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
