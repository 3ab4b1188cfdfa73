"""M3Exam memory benchmark: M3Proctor against its baselines, offline.

On one persona (default Alex_Veterinarian), with offline pieces only (MiniLM embeddings,
RapidOCR, the ``m3kit/builtin`` text-surrogate model):

1. supporting-fact recall@5/10/15 (and hit@15) of ``rag``, ``hierarchical`` and ``proctor`` on
   every question: retrieval only, no model (proctor's bias by its lexical detector, which is
   what the model-call path falls back to with ``m3kit/builtin``);
2. tokens and images per question, escalation and answer scores (graded EM, token F1) of
   ``context`` (multimodal), ``rag`` and ``proctor`` answering with ``m3kit/builtin`` on a
   stratified sample (``--per-type`` questions of each type, the first ones in file order);
   tokens = the prompt words the model read (builtin counts words) + ``--image-tokens`` per image
   sent (builtin charges nothing for pixels; a VLM does);
3. index-build seconds of each memory with a cold, uncached OCR reader.

    python perf/m3exam_memory.py [--data DIR] [--per-type 8] [--out results.md]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

DEFAULT_DATA = Path("/work/shared/data/m3exam/Alex_Veterinarian")
TYPES = ("ss", "ms", "tr", "mr", "th", "ii", "fm", "fj")
KS = (5, 10, 15)


def _score(question: Any, prediction: str) -> tuple[float, float | None]:
    """(EM by the type's rule, token F1 against the label or None for fm/fj)."""
    from m3kit.metrics.text_match import fj_em, fm_em, graded_em, token_f1

    answers = [question.answer, *question.alternatives]
    if question.question_type == "fm":
        return fm_em(prediction, answers), None
    if question.question_type == "fj":
        return fj_em(prediction, answers), None
    label = question.metadata.get("label") or question.answer
    return graded_em(prediction, answers), token_f1(prediction, label)


async def run(data_dir: Path, per_type: int, image_tokens: int) -> dict[str, Any]:
    import numpy as np
    from inspect_ai.model import get_model

    import m3kit.models  # noqa: F401  (registers m3kit/builtin)
    from m3kit.benchmarks.m3exam.load import load_m3exam
    from m3kit.benchmarks.m3exam.prompt import attachment_name, question_prompt
    from m3kit.memory import ContextMemory, HierarchicalMemory, RagMemory, conversation_events
    from m3kit.memory.proctor import ProctorMemory, lexical_bias, round_of
    from m3kit.metrics.retrieval import hit_at_k, mean_defined, recall_at_k
    from m3kit.perception import MiniLMEmbedder, RapidTextReader

    data = load_m3exam(data_dir)
    (persona, conversation), = data.conversations.items()
    questions = [q for q in data.questions if q.metadata.get("conversation", persona) == persona]
    events = conversation_events(conversation)
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])  # model loading is not index building
    reader = RapidTextReader()  # uncached: build seconds include the OCR they need
    reader.read([np.zeros((32, 32, 3), dtype=np.uint8)])

    memories: dict[str, Any] = {
        "context (multimodal)": ContextMemory(send_images=True, image_tokens=image_tokens),
        "rag": RagMemory(embedder=embedder, k=15, reader=reader),
        "hierarchical": HierarchicalMemory(embedder=embedder, k=15),
        "proctor": ProctorMemory(embedder=embedder, reader=reader),
    }
    build: dict[str, float] = {}
    for name, memory in memories.items():
        await memory.ingest(persona, events)
        build[name] = memory.build_seconds(persona)
        print(f"built {name} in {build[name]:.1f}s", file=sys.stderr)

    # 1. recall of the supporting-fact rounds, every question.
    recall: dict[str, dict[str, list[float | None]]] = defaultdict(lambda: defaultdict(list))
    rag, hier, proctor = memories["rag"], memories["hierarchical"], memories["proctor"]
    for q in questions:
        rankings = {
            "rag": [round_of(i.id) for i in await rag.retrieve(persona, q.text)],
            "hierarchical": [c.id for c in await hier.retrieve(persona, q.text)],
            "proctor": [round_of(c.id) for c in await proctor.retrieve(
                persona, q.text, bias=lexical_bias(q.text))],
        }
        for name, ranked in rankings.items():
            for k in KS:
                recall[name][f"recall@{k}"].append(recall_at_k(ranked, q.evidence, k))
            recall[name]["hit@15"].append(hit_at_k(ranked, q.evidence, 15))
    recall_table = {name: {m: mean_defined(v) for m, v in cols.items()}
                    for name, cols in recall.items()}

    # 2. answers on a stratified sample.
    by_type: dict[str, list[Any]] = defaultdict(list)
    for q in questions:
        by_type[q.question_type].append(q)
    sample = [q for t in TYPES for q in by_type.get(t, [])[:per_type]]
    candidates = [attachment_name(a) for r in conversation.iter_rounds() for a in r.attachments]
    model = get_model("m3kit/builtin", ocr=False, speech=False)
    rows: list[dict[str, Any]] = []
    for name in ("context (multimodal)", "rag", "proctor"):
        memory = memories[name]
        for n, q in enumerate(sample):
            prompt = question_prompt(q, candidates)
            kwargs = {} if isinstance(memory, ContextMemory) else {"query": q.text}
            start = time.perf_counter()
            answer = await memory.answer(persona, prompt, model, **kwargs)
            em, f1 = _score(q, answer.output)
            rows.append({
                "memory": name, "id": q.id, "type": q.question_type,
                "prompt_tokens": answer.usage.prompt_tokens,
                "images": answer.usage.images_sent,
                "tokens": answer.usage.prompt_tokens + image_tokens * answer.usage.images_sent,
                "escalated": answer.usage.raw_media_escalations > 0,
                "em": em, "f1": f1, "seconds": time.perf_counter() - start,
                "bias": answer.metadata.get("bias"),
            })
            print(f"{name} {n + 1}/{len(sample)} {q.question_type}", file=sys.stderr)
    return {"persona": persona, "questions": len(questions), "sample": len(sample),
            "per_type": per_type, "image_tokens": image_tokens, "build_seconds": build,
            "recall": recall_table, "rows": rows}


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """Per-memory means and proctor's escalation rate by type."""
    rows = result["rows"]
    costs: dict[str, dict[str, float]] = {}
    for name in dict.fromkeys(r["memory"] for r in rows):
        mine = [r for r in rows if r["memory"] == name]
        f1s = [r["f1"] for r in mine if r["f1"] is not None]
        costs[name] = {
            "tokens": statistics.mean(r["tokens"] for r in mine),
            "prompt_words": statistics.mean(r["prompt_tokens"] for r in mine),
            "images": statistics.mean(r["images"] for r in mine),
            "escalation_rate": statistics.mean(float(r["escalated"]) for r in mine),
            "em": statistics.mean(r["em"] for r in mine),
            "f1": statistics.mean(f1s) if f1s else float("nan"),
            "seconds_per_question": statistics.mean(r["seconds"] for r in mine),
        }
    escalation = {}
    for t in TYPES:
        mine = [r for r in rows if r["memory"] == "proctor" and r["type"] == t]
        if mine:
            escalation[t] = (sum(r["escalated"] for r in mine), len(mine))
    return {"costs": costs, "escalation": escalation}


def markdown(result: dict[str, Any], summary: dict[str, Any]) -> str:
    costs, build = summary["costs"], result["build_seconds"]
    lines = [
        f"# M3Exam memory benchmark: {result['persona']}",
        "",
        ("Generated by `python perf/m3exam_memory.py` (offline: MiniLM, RapidOCR, "
         "`m3kit/builtin`; a shared 2-core CPU)."),
        "",
        f"## Supporting-fact recall ({result['questions']} questions, retrieval only)",
        "",
        "| memory | recall@5 | recall@10 | recall@15 | hit@15 |",
        "|---|---|---|---|---|",
    ]
    for name, cols in result["recall"].items():
        lines.append(f"| {name} | " + " | ".join(
            f"{cols[c]:.3f}" for c in ("recall@5", "recall@10", "recall@15", "hit@15")) + " |")
    lines += [
        "",
        (f"## Cost per question ({result['sample']} questions: the first "
         f"{result['per_type']} of each type), and index build"),
        "",
        (f"tokens = prompt words read by `m3kit/builtin` + {result['image_tokens']} per "
         "image sent. EM / F1 are the builtin text-surrogate baseline's (a floor, not a "
         "VLM's)."),
        "",
        "| memory | tokens / q | images / q | escalated | index build (s) | EM | F1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, c in costs.items():
        lines.append(
            f"| {name} | {c['tokens']:.0f} | {c['images']:.2f} | {c['escalation_rate']:.1%} | "
            f"{build[name]:.1f} | {c['em']:.3f} | {c['f1']:.3f} |")
    if "hierarchical" in build:
        lines.append(f"| hierarchical (recall only) | – | – | – | {build['hierarchical']:.1f} "
                     "| – | – |")
    lines += ["", "## Proctor escalations by question type", "",
              "| type | " + " | ".join(summary["escalation"]) + " |",
              "|---|" + "---|" * len(summary["escalation"]),
              "| escalated | " + " | ".join(f"{e}/{n}" for e, n in
                                          summary["escalation"].values()) + " |", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--per-type", type=int, default=8)
    parser.add_argument("--image-tokens", type=int, default=256)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results"
                        / "m3exam_memory.md")
    parser.add_argument("--json", type=Path, default=None, help="also write the raw rows")
    args = parser.parse_args()
    result = asyncio.run(run(args.data, args.per_type, args.image_tokens))
    summary = summarize(result)
    text = markdown(result, summary)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    if args.json is not None:
        args.json.write_text(json.dumps({**result, "summary": summary}, indent=1,
                                        default=str), encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
