"""The response cache never answers for another endpoint: two live servers behind one model
name, for each way of pointing a provider at a server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.task import m3eval_task

ANSWER_A = "The final answer is A"
ANSWER_B = "The final answer is B"


def _point_openai(monkeypatch, server, key) -> str:
    """``openai/...`` at ``server`` through ``OPENAI_BASE_URL`` (inspect's ``openai`` provider
    keeps no base URL of its own then: its client reads the variable)."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return "openai/gpt-4o"  # chat completions: the scripted server has no Responses API


def _point_service(monkeypatch, server, key) -> str:
    """``openai-api/twin/...`` at ``server`` through ``TWIN_BASE_URL``."""
    monkeypatch.setenv("TWIN_BASE_URL", server.base_url)
    monkeypatch.setenv("TWIN_API_KEY", key)
    return "openai-api/twin/scripted"


@pytest.mark.parametrize("point", [_point_openai, _point_service], ids=["openai", "openai-api"])
def test_a_run_against_b_after_a_run_against_a_asks_b(
    tmp_path, monkeypatch, scripted, secret, questions, point: Callable[..., str]
):
    server_a = scripted(answer=lambda prompt: ANSWER_A)
    server_b = scripted(answer=lambda prompt: ANSWER_B)
    task = m3eval_task(questions[:3], name="twins", frames=0)  # the cache is on

    def run(server):
        model = point(monkeypatch, server, secret)
        log = run_benchmark_task(task, model, log_dir=tmp_path / "logs", max_retries=1)
        assert log.status == "success"
        return sorted(s.output.completion for s in log.samples)

    assert run(server_a) == [ANSWER_A] * 3
    assert len(server_a.records) == 3
    assert run(server_b) == [ANSWER_B] * 3  # B's answers, not A's replayed
    assert len(server_b.records) == 3
    # the cache still answers for the same endpoint: a second run against B asks nobody
    assert run(server_b) == [ANSWER_B] * 3
    assert (len(server_a.records), len(server_b.records)) == (3, 3)


def test_the_cache_holds_no_key(tmp_path, monkeypatch, scripted, secret, questions,
                                isolated_dirs):
    server = scripted(api_key=secret)
    model = _point_openai(monkeypatch, server, secret)
    log = run_benchmark_task(m3eval_task(questions[:2], name="keyless", frames=0), model,
                             log_dir=tmp_path / "logs", max_retries=1)
    assert log.status == "success" and len(server.records) == 2
    written = [p for p in (isolated_dirs / "inspect-cache").rglob("*") if p.is_file()]
    assert written  # the two answers were cached...
    for path in written:  # ...and no file name or content holds the key
        assert secret not in str(path) and secret.encode() not in path.read_bytes()
