"""Retrieval that holds on unseen data: every fusion choice made on one data set, judged on
another (docs/benchmarks.md, "Retrieval that holds on unseen data").

    python perf/retrieval_transfer.py --data ALEX_FOLDER --data locomo10.json [--types ...]
        [--embedders minilm,e5-small] [--ocr-cache DIR] [--rankings FILE.json] [--out FILE.md]
        [--json FILE]

Stage 1 (``--rankings``: cached, reused when the file exists): for every question with
supporting facts, at its own time (the causal cut), the rankings a hybrid search with views and
feedback fuses (``HybridIndex.rankings``: dense (best passage), BM25, the turn window's dense and
BM25, BM25 of the feedback-expanded question), 100 deep, with their scores, over exactly the
items ``rag`` indexes (rounds and attachment surrogates, OCR through ``--ocr-cache``), the
question as ``rag`` rewrites its text (format instructions dropped; no time scope, no compared
parts), once per embedder.

Stage 2 (seconds): each fusion variant (reciprocal rank or min-max CombSUM; the BM25 rankings'
weight; the feedback ranking's; weights learned by ``memory/retrieval/learned.py`` on the design
set) ranks every question; a ranking is read as rounds (an attachment is its round, a round
counts once at its best rank, an item that is no round takes no slot) and scored by recall@5/10/15
and hit@15 (``m3kit.metrics.retrieval``). For each ordered pair of data sets (design →
validation), the variant with the best recall@5 on the design set is taken and reported on the
validation set beside BM25 alone and the current default, with 95 % intervals from 2000 resamples
of conversations (of questions where a data set has one conversation) and paired differences.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

KS = (5, 10, 15)
METRICS = ("recall@5", "recall@10", "recall@15", "hit@15")
DEPTH = 100
LEXICAL = ("bm25", "window_bm25")
PREVIOUS_DEFAULT = "minilm views rrf bm25×1 fb×0"
"""The memories' search before this comparison: MiniLM, views, equal-weight RRF, no feedback."""



def probe_class() -> type:
    from m3kit.memory import RagMemory
    from m3kit.memory.retrieval.hybrid import FUSION_DEPTH

    class RankingProbe(RagMemory):  # type: ignore[misc]
        """``rag``'s items and index; ``retrieve`` records the named rankings, fuses none."""

        captured: list[tuple[str, list[tuple[str, float]]]] = []

        async def _retrieve(self, key: str, query: str, items: list[Any], k: int | None
                            ) -> list[Any]:
            rewritten = self.rewrite(query, items)
            allow = {i.id for i in items}
            self.captured = self.hybrid(key).rankings(rewritten.text, max(DEPTH, FUSION_DEPTH),
                                                      allow)
            return []

    return RankingProbe


async def stage_rankings(data_path: Path, embedders: Sequence[str], types: set[str] | None,
                         ocr_cache: Path | None, no_ocr: bool) -> dict[str, Any]:
    """Every question's named rankings per embedder, with its type, key and evidence."""
    from m3kit.benchmarks.m3exam.load import load_data
    from m3kit.benchmarks.m3exam.stream import conversation_stream
    from m3kit.memory.retrieval.config import RetrievalConfig
    from m3kit.perception.embeddings import named_embedder

    data = load_data(data_path)
    if types is not None and not any(q.question_type in types for q in data.questions):
        types = None  # the types name another data set's (LoCoMo's categories)
    questions = [q for q in data.questions if q.evidence
                 and (types is None or q.question_type in types)]
    reader = None
    if not no_ocr:
        from m3kit.perception import RapidTextReader

        reader = RapidTextReader()
        if ocr_cache is not None:
            from m3kit.perception.cache import CachedTextReader

            reader = CachedTextReader(reader, ocr_cache)
    by_key: dict[str, list[Any]] = defaultdict(list)
    for q in questions:
        by_key[str(q.metadata.get("persona"))].append(q)
    rows: dict[str, dict[str, Any]] = {
        q.id: {"type": q.question_type, "key": str(q.metadata.get("persona")),
               "evidence": sorted(q.evidence), "rankings": {}} for q in questions}
    probe = probe_class()
    for name in embedders:
        memory = probe(embedder=named_embedder(name), reader=reader, ocr=reader is not None,
                       retrieval=RetrievalConfig(feedback=True))
        started = time.monotonic()
        for n, (key, asked) in enumerate(by_key.items(), start=1):
            await memory.ingest(key, conversation_stream(data.conversations[key]))
            for q in asked:
                await memory.retrieve(key, q.text, k=1, time=q.time)
                rows[q.id]["rankings"][name] = {r: [[i, s] for i, s in hits]
                                                for r, hits in memory.captured}
            memory.forget(key)
            print(f"{data_path.name} {name}: {n}/{len(by_key)} conversations, "
                  f"{time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    return {"data": data_path.name, "rows": rows}


# -- stage 2: fusion variants, chosen on one set, judged on another ---------------------------


def rounds(ranked: Sequence[str], depth: int = 15) -> list[str]:
    """A ranking of items read as rounds: attachment ids are their round (``D3:2/img_7``), a
    round counts once at its best rank, an id with no round (a summary) takes no slot."""
    from m3kit.schema.evallog import round_of

    out: list[str] = []
    for item_id in ranked:
        round_id = round_of(item_id)
        if ":" in round_id and round_id not in out:
            out.append(round_id)
            if len(out) == depth:
                break
    return out


def scores(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float | None]:
    from m3kit.metrics.retrieval import hit_at_k, recall_at_k

    read = rounds(ranked)
    out = {f"recall@{k}": recall_at_k(read, evidence, k) for k in KS}
    out["hit@15"] = hit_at_k(read, evidence, 15)
    return out


def variants(design: Sequence[dict[str, Any]], embedders: Sequence[str]
             ) -> dict[str, Callable[[dict[str, Any]], list[str]]]:
    """Every fusion variant by name: a function from a question's row to its fused ranking.
    ``design``: the design set's rows, the learned weights' training data."""
    from m3kit.memory.retrieval.fusion import FusionSettings
    from m3kit.memory.retrieval.learned import RankedQuestion, fit_fusion

    def fused(embedder: str, settings: FusionSettings, names: Sequence[str]
              ) -> Callable[[dict[str, Any]], list[str]]:
        def rank(row: dict[str, Any]) -> list[str]:
            named = row["rankings"][embedder]
            kept = [(n, [(i, s) for i, s in named[n]]) for n in names if n in named]
            hits = settings.fuse([h for _, h in kept], [settings.weight(n) for n, _ in kept])
            return [i for i, _ in hits]
        return rank

    out: dict[str, Callable[[dict[str, Any]], list[str]]] = {}
    first = embedders[0]
    out["bm25"] = fused(first, FusionSettings(), ["bm25"])
    views = ("dense", "bm25", "window_dense", "window_bm25")
    for embedder in embedders:
        out[f"{embedder} dense"] = fused(embedder, FusionSettings(), ["dense"])
        out[f"{embedder} hybrid (rrf)"] = fused(embedder, FusionSettings(), ["dense", "bm25"])
        for method in ("rrf", "score"):
            for lexical in (0.5, 1.0, 1.5, 2.0, 3.0):
                for feedback in (0.0, 0.5, 1.0):
                    weights = {n: lexical for n in LEXICAL} | {"feedback": feedback * lexical}
                    names = (*views, "feedback") if feedback else views
                    out[f"{embedder} views {method} bm25×{lexical:g} fb×{feedback:g}"] = fused(
                        embedder, FusionSettings(method=method, weights=weights), names)
            try:
                learned = fit_fusion(
                    [RankedQuestion(rankings={n: [(i, s) for i, s in h] for n, h in
                                              row["rankings"][embedder].items()},
                                    relevant=frozenset(_relevant(row, embedder)))
                     for row in design], method=method)
            except ValueError:
                continue
            out[f"{embedder} learned {method} {_weights_text(learned.weights)}"] = fused(
                embedder, learned, (*views, "feedback"))
    return out


def _relevant(row: dict[str, Any], embedder: str) -> set[str]:
    from m3kit.schema.evallog import round_of

    evidence = set(row["evidence"])
    return {i for hits in row["rankings"][embedder].values() for i, _ in hits
            if round_of(i) in evidence}


def _weights_text(weights: dict[str, float]) -> str:
    return "(" + ", ".join(f"{n} {w:.2f}" for n, w in weights.items()) + ")"


def evaluate(rows: Sequence[dict[str, Any]], rank: Callable[[dict[str, Any]], list[str]]
             ) -> list[dict[str, Any]]:
    return [{"key": r["key"], "session": r["session"], "type": r["type"],
             **scores(rank(r), r["evidence"])} for r in rows]


def mean(scored: Sequence[dict[str, Any]], metric: str) -> float | None:
    from m3kit.metrics.retrieval import mean_defined

    return mean_defined(s[metric] for s in scored)


def units(scored: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Conversations; where a set has one conversation (a persona), M3Exam's own unit: the
    session of the question's first supporting fact (``load.evidence_session``)."""
    field = "key" if len({s["key"] for s in scored}) > 1 else "session"
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in scored:
        grouped[s[field]].append(s)
    return list(grouped.values())


def statistic(items: Sequence[dict[str, Any]]) -> dict[str, float | None]:
    return {m: mean(items, m) for m in METRICS}


def judged(rows_by_set: dict[str, list[dict[str, Any]]], embedders: Sequence[str]
           ) -> dict[str, Any]:
    """Per ordered pair (design, validation): every variant's design recall@5, the choice,
    and the validation table (with intervals and paired differences against BM25)."""
    from m3kit.metrics.bootstrap import cluster_bootstrap, paired_cluster_bootstrap

    out: dict[str, Any] = {}
    for design_name, design in rows_by_set.items():
        table = variants(design, embedders)
        design_scores = {name: mean(evaluate(design, rank), "recall@5")
                         for name, rank in table.items()}
        chosen = max(design_scores, key=lambda n: design_scores[n] or 0.0)
        chosen_per_embedder = {
            e: max((n for n in table if n.startswith(f"{e} ")),
                   key=lambda n: design_scores[n] or 0.0) for e in embedders}
        for validation_name, validation in rows_by_set.items():
            if validation_name == design_name:
                continue
            shown = ["bm25", *(f"{e} dense" for e in embedders),
                     *(f"{e} hybrid (rrf)" for e in embedders),
                     *(f"{e} views rrf bm25×1 fb×0" for e in embedders),
                     *chosen_per_embedder.values()]
            shown = list(dict.fromkeys(shown))
            base = evaluate(validation, table["bm25"])
            before = evaluate(validation, table[PREVIOUS_DEFAULT])
            rows = {}
            for name in shown:
                scored = evaluate(validation, table[name])
                intervals = cluster_bootstrap(units(scored), statistic)

                def paired(reference: list[dict[str, Any]], scored: list[dict[str, Any]] = scored
                           ) -> dict[str, Any]:
                    return {m: d.model_dump() for m, d in paired_cluster_bootstrap(
                        [list(zip(a, b, strict=True)) for a, b in
                         zip(units(reference), units(scored), strict=True)], statistic).items()}

                rows[name] = {
                    "design_recall@5": design_scores[name],
                    "intervals": {m: i.model_dump() for m, i in intervals.items()},
                    "vs_bm25": paired(base),
                    "vs_previous_default": paired(before),
                    "by_type": {t: {m: mean([s for s in scored if s["type"] == t], m)
                                    for m in METRICS}
                                | {"n": sum(1 for s in scored if s["type"] == t)}
                                for t in sorted({s["type"] for s in scored})},
                }
            out[f"{design_name} -> {validation_name}"] = {
                "chosen": chosen, "chosen_per_embedder": chosen_per_embedder,
                "design_recall@5": design_scores, "validation": rows,
                "validation_questions": len(validation),
                "validation_units": len(units(base))}
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Retrieval transfer: fusion chosen on one data set, judged on another", ""]
    for pair, block in result["pairs"].items():
        lines += [f"## {pair}", "",
                  f"Chosen on the design set (best recall@5 there): `{block['chosen']}`; per "
                  f"embedder: " + "; ".join(f"{e}: `{n}`"
                                            for e, n in block["chosen_per_embedder"].items()),
                  "",
                  f"Validation: {block['validation_questions']} questions, "
                  f"{block['validation_units']} resampling units.", "",
                  "| system | design r@5 | recall@5 [95 %] | Δ vs bm25 r@5 [95 %] | "
                  "Δ vs previous default r@5 [95 %] | recall@10 | recall@15 | hit@15 |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, row in block["validation"].items():
            iv = row["intervals"]
            d = row["vs_bm25"]["recall@5"]
            lines.append(
                f"| {name} | {_pct(row['design_recall@5'])} | {_iv(iv['recall@5'])} | "
                f"{_diff(d)} | {_diff(row['vs_previous_default']['recall@5'])} | "
                f"{_pct(iv['recall@10']['value'])} | "
                f"{_pct(iv['recall@15']['value'])} | {_pct(iv['hit@15']['value'])} |")
        types = sorted(next(iter(block["validation"].values()))["by_type"])
        first = next(iter(block["validation"].values()))["by_type"]
        lines += ["", "recall@5 by type (n):", "",
                  "| system | " + " | ".join(f"{t} ({first[t]['n']})" for t in types) + " |",
                  "|---|" + "---|" * len(types)]
        for name, row in block["validation"].items():
            lines.append(f"| {name} | " + " | ".join(_pct(row["by_type"][t]["recall@5"])
                                                     for t in types) + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def _iv(interval: dict[str, Any]) -> str:
    if interval["lo"] is None:
        return _pct(interval["value"])
    return f"{_pct(interval['value'])} [{_pct(interval['lo'])}, {_pct(interval['hi'])}]"


def _diff(d: dict[str, Any]) -> str:
    if d["diff"] is None:
        return "–"
    text = f"{100 * d['diff']:+.1f}"
    if d["lo"] is not None:
        text += f" [{100 * d['lo']:+.1f}, {100 * d['hi']:+.1f}]"
    return text


def with_sessions(path: Path, rows: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of a set, each with its question's evidence session (the resampling unit of a
    single-persona set)."""
    from m3kit.benchmarks.m3exam.load import evidence_session, load_data

    session = {q.id: evidence_session(q) or q.id for q in load_data(path).questions}
    return [{**row, "session": session[qid]} for qid, row in rows.items()]


async def run(args: argparse.Namespace) -> dict[str, Any]:
    embedders = [e.strip() for e in args.embedders.split(",")]
    types = {t.strip() for t in args.types.split(",")} if args.types else None
    cached: dict[str, Any] = {}
    if args.rankings is not None and args.rankings.exists():
        cached = json.loads(args.rankings.read_text(encoding="utf-8"))
    for path in args.data:
        have = cached.get(path.name)
        if have is None or any(e not in next(iter(have["rows"].values()))["rankings"]
                               for e in embedders):
            cached[path.name] = await stage_rankings(path, embedders, types, args.ocr_cache,
                                                     args.no_ocr)
            if args.rankings is not None:
                args.rankings.parent.mkdir(parents=True, exist_ok=True)
                args.rankings.write_text(json.dumps(cached), encoding="utf-8")
    rows_by_set = {p.name: with_sessions(p, cached[p.name]["rows"]) for p in args.data}
    return {"embedders": embedders, "pairs": judged(rows_by_set, embedders)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, action="append", required=True,
                        help="a data set (M3Exam persona folder or locomo10.json); two or more")
    parser.add_argument("--types", default=None,
                        help="only these question types (LoCoMo: 1,2,3,4 have evidence)")
    parser.add_argument("--embedders", default="minilm,e5-small")
    parser.add_argument("--ocr-cache", type=Path, default=None)
    parser.add_argument("--no-ocr", action="store_true")
    parser.add_argument("--rankings", type=Path, default=None,
                        help="stage 1's rankings, reused when present")
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    text = markdown(result)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
