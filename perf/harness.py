"""Per-sample harness overhead: inspect alone vs m3kit's frame solver, against a local server
that answers instantly (``tests/fakeserver.py``), so the figures are the harness's own time.

    python perf/harness.py [--samples 100] [--connections 1]

For each configuration the eval runs twice, with ``S`` and ``S + samples`` samples; the
difference divided by ``samples`` is the per-sample time, free of start-up costs. Frames are in
the frame store before timing starts (a warm store: decoding is the media engine's cost, not the
harness's), and the response cache is off (every sample reaches the server).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

WARM = 10


def _fakeserver() -> ModuleType:
    """The tests' scripted OpenAI-compatible server (``tests/fakeserver.py``), loaded by path:
    it is test infrastructure, not part of the package."""
    path = Path(__file__).resolve().parents[1] / "tests" / "fakeserver.py"
    spec = importlib.util.spec_from_file_location("fakeserver", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve the module's string annotations through sys.modules
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=100)
    parser.add_argument("--connections", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="m3kit-bench-"))
    os.environ["M3KIT_CACHE_DIR"] = str(work / "cache")
    os.environ["INSPECT_CACHE_DIR"] = str(work / "inspect-cache")
    os.environ["BENCH_API_KEY"] = "not-a-secret"

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    from m3kit.benchmarks.m3eval.task import m3eval_task

    ScriptedServer = _fakeserver().ScriptedServer
    from m3kit.media.generate import write_pattern_video
    from m3kit.schema import Choice, Question, VideoRef

    video = write_pattern_video(work / "probe.mp4", seconds=10, fps=25, width=320, height=240)

    def questions(n: int) -> list[Question]:
        return [Question(
            id=f"q{i}", benchmark="bench", text=f"Which colour? qid=q{i}", answer="A",
            choices=[Choice(letter="A", text="red"), Choice(letter="B", text="blue")],
            media=[VideoRef(path=str(video))], metadata={"paradigm": "interference"},
        ) for i in range(n)]

    def plain(n: int) -> Task:
        return Task(dataset=[Sample(input=f"Which colour? qid=q{i}", target="A")
                             for i in range(n)], solver=generate())

    configs = {
        "inspect: generate() only": plain,
        "m3kit: frames=0 (text)": lambda n: m3eval_task(questions(n), name="b", frames=0,
                                                        cache=False),
        "m3kit: frames=8": lambda n: m3eval_task(questions(n), name="b", frames=8, cache=False),
        "m3kit: frames=96": lambda n: m3eval_task(questions(n), name="b", frames=96,
                                                  cache=False),
    }
    with ScriptedServer() as server:
        os.environ["BENCH_BASE_URL"] = server.base_url
        model = "openai-api/bench/scripted"
        settings = {"model": model, "log_dir": str(work / "logs"), "display": "none",
                    "log_images": False, "max_connections": args.connections, "log_buffer": 1}
        eval(configs["m3kit: frames=96"](2), **settings)  # imports, first call, frame store
        print(f"per-sample time, {args.samples} samples, max_connections={args.connections}")
        base = None
        for label, make in configs.items():
            timings = []
            for n in (WARM, WARM + args.samples):
                start = time.perf_counter()
                log = eval(make(n), **settings)[0]
                timings.append(time.perf_counter() - start)
                assert log.status == "success", log.error
            per_sample = (timings[1] - timings[0]) / args.samples * 1000
            base = per_sample if base is None else base
            extra = "" if per_sample is base else f"  (+{per_sample - base:.1f} ms over inspect)"
            print(f"  {label:28s} {per_sample:7.1f} ms{extra}")


if __name__ == "__main__":
    main()
