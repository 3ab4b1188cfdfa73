"""GPU check for ``m3kit/hf`` (a script, not collected by pytest).

    python tests/models/gpu_check_hf.py                         # tiny random Qwen2.5-VL on GPU
    python tests/models/gpu_check_hf.py --model-path /models/Qwen2.5-VL-7B-Instruct

It renders an image showing "ROOM 42", asks one question about it through inspect's Model API,
and prints one JSON line: completion, usage, device, dtype, which input builder ran, seconds.
With a real checkpoint it also checks that the answer names 42; with the tiny random model it
checks the plumbing only (device, dtype, token counts, determinism). Exit status 0 = pass.
``--allow-cpu`` runs it without a GPU (for trying the script itself).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-path", help="a local Qwen2.5-VL / Qwen3-VL checkpoint folder")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--allow-cpu", action="store_true")
    args = parser.parse_args()

    import torch
    from inspect_ai.model import ChatMessageUser, ContentText, GenerateConfig, get_model
    from PIL import Image, ImageDraw, ImageFont

    import m3kit.models  # noqa: F401  (registers the m3kit model API)
    from m3kit.models import image_content

    if not torch.cuda.is_available() and not args.allow_cpu:
        print(json.dumps({"ok": False, "reason": "no GPU visible (torch.cuda.is_available())"}))
        return 2

    with tempfile.TemporaryDirectory() as scratch:
        path = Path(args.model_path) if args.model_path else _tiny(Path(scratch) / "tiny")
        image = Image.new("RGB", (448, 448), (255, 255, 255))
        ImageDraw.Draw(image).text((60, 190), "ROOM 42", fill=(0, 0, 0),
                                   font=ImageFont.load_default(size=64))
        question = "What number is written in the image? Answer with the number only."
        message = ChatMessageUser(content=[image_content(image), ContentText(text=question)])
        model = get_model("m3kit/hf", model_path=str(path), dtype=args.dtype, memoize=False)
        config = GenerateConfig(max_tokens=args.max_tokens)

        started = time.perf_counter()
        first = asyncio.run(model.generate([message], config=config))
        loaded_and_answered = time.perf_counter() - started
        started = time.perf_counter()
        second = asyncio.run(model.generate([message], config=config))
        answered = time.perf_counter() - started

    meta = first.metadata["m3kit"]
    checks = {
        "on_gpu": meta["device"].startswith("cuda") or args.allow_cpu,
        "image_tokens_counted": meta["image_tokens"] > 0 and meta["images"] == 1,
        "usage": first.usage is not None and first.usage.output_tokens >= 1,
        "deterministic": first.completion == second.completion,
    }
    if args.model_path:
        checks["answer_names_42"] = "42" in first.completion
    report = {
        "ok": all(checks.values()), "checks": checks, "model_path": str(path),
        "completion": first.completion, "usage": first.usage.model_dump() if first.usage else None,
        "metadata": meta, "seconds_first_call": round(loaded_and_answered, 2),
        "seconds_second_call": round(answered, 2),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
    }
    print(json.dumps(report))
    return 0 if report["ok"] else 1


def _tiny(folder: Path) -> Path:
    """Build the tiny random checkpoint with the helper beside this script."""
    helper = Path(__file__).with_name("tiny_qwen.py")
    spec = importlib.util.spec_from_file_location("tiny_qwen", helper)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_qwen(folder)


if __name__ == "__main__":
    sys.exit(main())
