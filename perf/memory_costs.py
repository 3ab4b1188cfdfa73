"""What memories cost per question in real eval runs: tokens, images, M3Proctor escalations.

Reads the eval logs of ``m3kit eval m3exam|locomo --memory <name>`` runs (one log per memory
and data set) and prints, for each, the questions answered and failed, the prompt tokens per
question as the model reported them, the images sent, tokens per question with each image
charged ``--image-tokens`` (``m3kit/builtin`` charges nothing for pixels; a VLM does), the
escalations to raw media by question type, and mean EM / F1.

    m3kit eval locomo --model m3kit/builtin --memory proctor \\
        -T data=/path/to/locomo10.json --log-dir logs/locomo-proctor
    python perf/memory_costs.py logs/*/*.eval [--image-tokens 256] [--types 3] [--json]

``--json`` prints the same numbers unrounded, one object per log.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

SCORER = "m3exam_answer"


def log_costs(path: Path, image_tokens: int, types: set[str] | None = None) -> dict[str, Any]:
    """The cost summary of one eval log (see the module doc), over the questions of ``types``
    (``None``: all)."""
    from inspect_ai.log import read_eval_log

    from m3kit.schema.evallog import read_record

    log = read_eval_log(str(path))
    task_args = log.eval.task_args or {}
    n = failed = prompt = images = 0
    by_type: Counter[str] = Counter()
    escalated: Counter[str] = Counter()
    em: list[float] = []
    f1: list[float] = []
    build: dict[str, float] = {}  # seconds per memory key (each of its samples records it)
    for sample in log.samples or []:
        record = read_record(sample.metadata)
        kind = str((sample.metadata or {}).get("question_type"))
        if types is not None and kind not in types:
            continue
        key = str((sample.metadata or {}).get("memory_key"))
        if record is not None:
            build[key] = max(build.get(key, 0.0), record.usage.index_build_seconds)
        n += 1
        by_type[kind] += 1
        if record is None or record.failure is not None or sample.error is not None:
            failed += 1
            continue
        prompt += record.usage.prompt_tokens
        images += record.usage.images_sent
        if record.usage.raw_media_escalations:
            escalated[kind] += 1
        score = (sample.scores or {}).get(SCORER)
        values = (score.metadata or {}) if score is not None else {}
        if isinstance(values.get("em"), int | float):
            em.append(float(values["em"]))
        if isinstance(values.get("f1"), int | float):
            f1.append(float(values["f1"]))
    answered = n - failed
    return {
        "log": str(path),
        "task": log.eval.task.split("/")[-1],
        "data": str(task_args.get("data")),
        "memory": str((log.eval.metadata or {}).get("m3kit_memory") or task_args.get("memory")),
        "questions": n,
        "failed": failed,
        "prompt_tokens_per_q": prompt / answered if answered else None,
        "images_per_q": images / answered if answered else None,
        "tokens_per_q": (prompt + image_tokens * images) / answered if answered else None,
        "index_build_seconds": sum(build.values()),
        "escalated": sum(escalated.values()),
        "escalated_by_type": {t: [escalated[t], by_type[t]] for t in sorted(by_type)},
        "em": sum(em) / len(em) if em else None,
        "f1": sum(f1) / len(f1) if f1 else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", type=Path)
    parser.add_argument("--image-tokens", type=int, default=256)
    parser.add_argument("--types", help="only these question types, e.g. 3 or mr,fm")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    types = {t.strip() for t in args.types.split(",")} if args.types else None
    rows = [log_costs(path, args.image_tokens, types) for path in args.logs]
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return
    print("| data | memory | n | failed | prompt tok / q | images / q | tok / q "
          f"(+{args.image_tokens} per image) | escalated | index build (s) | EM | F1 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        def fmt(value: float | None, digits: int = 0) -> str:
            return "–" if value is None else f"{value:,.{digits}f}".replace(",", " ")

        print(f"| {Path(row['data']).name} | {row['memory']} | {row['questions']} | "
              f"{row['failed']} | {fmt(row['prompt_tokens_per_q'])} | "
              f"{fmt(row['images_per_q'], 2)} | {fmt(row['tokens_per_q'])} | "
              f"{row['escalated']} | {fmt(row['index_build_seconds'], 1)} | "
              f"{fmt(row['em'], 3)} | {fmt(row['f1'], 3)} |")
    for row in rows:
        if row["escalated"]:
            parts = ", ".join(f"{t} {e}/{n}" for t, (e, n) in row["escalated_by_type"].items())
            print(f"\n{Path(row['data']).name} {row['memory']} escalations by type: {parts}")


if __name__ == "__main__":
    main()
