"""``openai/<name>`` against a server without OpenAI's Responses API: the preflight refuses in
one line naming the fix when the server proves it has none, warns when it cannot tell, and a
sample's failure text is recognised as the same riddle (``responses_api_hint``). Real HTTP
servers on loopback (``tests/fakeserver.py``), real inspect model calls."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.harness.preflight import PreflightError, check_model
from m3kit.harness.responses_api import responses_api_hint, responses_fix
from m3kit.harness.sample_state import failure_reason

from ..fakeserver import ScriptedServer

# What a server that answers every POST with a chat completion sends to /v1/responses.
CHAT_BODY = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": "A"}}]}
FIX = ("use --model openai-api/<service>/smollm2 with <SERVICE>_BASE_URL and "
       "<SERVICE>_API_KEY, or keep openai/smollm2 with -M responses_api=false")


def _point_openai(monkeypatch: pytest.MonkeyPatch, server: ScriptedServer, key: str) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)


def test_a_server_without_the_route_is_refused_with_the_fix(tmp_path: Path, monkeypatch,
                                                            scripted, secret) -> None:
    server = scripted()  # 404 on POST /v1/responses, as llama.cpp's server and older vLLM
    _point_openai(monkeypatch, server, secret)
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", "openai/smollm2", log_dir=tmp_path / "logs")
    text = str(info.value)
    assert "\n" not in text and secret not in text
    assert text == (f"model openai/smollm2: inspect's openai/ provider sends its requests to "
                    f"the Responses API, which {server.base_url} does not serve (POST "
                    f"/responses: HTTP 404): {FIX}")
    # one probe, no chat request, no log
    assert server.responses_posts == 1 and server.records == []
    assert not (tmp_path / "logs").exists()


def test_a_base_url_model_argument_is_probed_too(monkeypatch, scripted, secret) -> None:
    """``-M base_url=...`` points ``openai/`` at the server as ``OPENAI_BASE_URL`` does."""
    server = scripted()
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with pytest.raises(PreflightError, match=r"which http://127\.0\.0\.1:\d+/v1 does not serve "
                                             r"\(POST /responses: HTTP 404\)"):
        check_model("openai/smollm2", {"base_url": server.base_url})
    assert server.responses_posts == 1


def test_a_server_that_answers_any_post_is_refused(monkeypatch, scripted, secret) -> None:
    """A 200 to an empty request that is not a Response: the TypeError riddle's server."""
    server = scripted(responses_reply=(200, CHAT_BODY))
    _point_openai(monkeypatch, server, secret)
    with pytest.raises(PreflightError, match=r"\(POST /responses: HTTP 200 with no Response "
                                             r"in it\): use --model openai-api/<service>/"):
        check_model("openai/smollm2")


@pytest.mark.parametrize("reply", [
    (400, {"error": {"message": "missing required parameter: 'model'"}}),
    (422, {"detail": [{"msg": "Field required", "loc": ["body", "input"]}]}),
])
def test_a_server_with_the_route_passes(monkeypatch, scripted, secret, caplog,
                                        reply: tuple[int, Any]) -> None:
    server = scripted(responses_reply=reply)
    _point_openai(monkeypatch, server, secret)
    with caplog.at_level(logging.WARNING):
        check_model("openai/smollm2")
    assert server.responses_posts == 1 and caplog.records == []


def test_an_answer_that_says_neither_way_is_a_warning(monkeypatch, scripted, secret,
                                                      caplog) -> None:
    server = scripted(responses_reply=(500, {"error": {"message": "boom"}}))
    _point_openai(monkeypatch, server, secret)
    with caplog.at_level(logging.WARNING, logger="m3kit.harness.preflight"):
        check_model("openai/smollm2")
    (record,) = caplog.records
    assert record.getMessage() == (
        f"model openai/smollm2: inspect's openai/ provider sends its requests to the Responses "
        f"API; {server.base_url} did not say whether it serves it (POST /responses: HTTP 500): "
        f"if every sample fails, {FIX}")


@pytest.mark.slow
def test_chat_completions_models_are_not_probed(tmp_path: Path, monkeypatch, scripted,
                                                secret) -> None:
    """``-M responses_api=false`` (the fix) and a name inspect sends to chat completions
    (``gpt-4o``) get no probe; with the fix the run answers through chat completions."""
    server = scripted()
    _point_openai(monkeypatch, server, secret)
    check_model("openai/gpt-4o")
    assert server.responses_posts == 0
    log = run_benchmark_task("synth_nback", "openai/smollm2", model_args={"responses_api": False},
                             limit=2, log_dir=tmp_path / "logs", cache=False)
    assert server.responses_posts == 0
    assert log.samples is not None and len(log.samples) == 2
    assert all(not s.output.error for s in log.samples) and len(server.answered_keys()) == 2


def test_openai_itself_is_not_probed(monkeypatch, secret) -> None:
    """No base URL: the requests go to api.openai.com, which has the Responses API; nothing is
    sent to it (preflight's GET /models aside) that could cost anything."""
    from inspect_ai.model import get_model

    from m3kit.harness.responses_api import uses_responses_api

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    model = get_model("openai/smollm2", memoize=False)
    assert model.api.responses_api is True and not uses_responses_api(model)


def test_the_cli_says_it_in_one_line(tmp_path: Path, monkeypatch, scripted, secret) -> None:
    server = scripted()
    _point_openai(monkeypatch, server, secret)
    proc = subprocess.run(
        [sys.executable, "-m", "m3kit", "eval", "synth_nback", "--model", "openai/smollm2",
         "--log-dir", str(tmp_path / "logs")],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("m3kit: error: model openai/smollm2: ")
    assert lines[0].endswith(FIX) and secret not in proc.stderr + proc.stdout


# -- the first sample's failure, as the solver records it --------------------------------------


def _failure(model: Any) -> str:
    """The failure text a sample of ``model`` gets (``m3kit.harness.sample_state``'s form)."""
    import anyio

    async def ask() -> None:
        await model.generate("hello")

    with pytest.raises(Exception) as info:  # the provider's own error types
        anyio.run(ask)
    return f"model: {failure_reason(info.value)}"


def test_the_failure_texts_are_recognised(monkeypatch, scripted, secret) -> None:
    from inspect_ai.model import GenerateConfig, get_model

    hint = ("inspect's openai/ provider sends openai/smollm2's requests to the Responses API "
            f"(POST /responses), which this server does not serve: {FIX}")
    for reply, riddle in ((None, "NotFoundError: Error code: 404"),
                          ((200, CHAT_BODY), "TypeError: 'NoneType' object is not iterable")):
        server = scripted(responses_reply=reply)
        _point_openai(monkeypatch, server, secret)
        model = get_model("openai/smollm2", memoize=False,
                          config=GenerateConfig(max_retries=1), max_retries=0)
        reason = _failure(model)
        assert reason.startswith(f"model: {riddle}")
        # by the model itself (inside a solver: get_model()), and by its name
        assert responses_api_hint(model, reason) == hint
        assert responses_api_hint("openai/smollm2", reason) == hint


@pytest.mark.parametrize(("model", "reason"), [
    # another failure of the same model
    ("openai/smollm2", "model: InternalServerError: Error code: 500 - scripted failure"),
    # OpenAI's own 404 about the model, not the route
    ("openai/gpt-4o-mini", ("model: NotFoundError: Error code: 404 - {'error': {'message': "
                            "'The model `gpt-4o-mini` does not exist or you do not have "
                            "access to it.', 'code': 'model_not_found'}}")),
    # providers that do not speak the Responses API by default
    ("openai-api/llamacpp/smollm2", "model: NotFoundError: Error code: 404 - not found"),
    ("openai/azure/gpt-4o", "model: NotFoundError: Error code: 404 - not found"),
])
def test_other_failures_get_no_hint(model: str, reason: str) -> None:
    assert responses_api_hint(model, reason) is None


def test_a_model_sent_to_chat_completions_gets_no_hint(monkeypatch, scripted, secret) -> None:
    from inspect_ai.model import get_model

    server = scripted()
    _point_openai(monkeypatch, server, secret)
    model = get_model("openai/smollm2", memoize=False, responses_api=False)
    assert responses_api_hint(model, "model: NotFoundError: Error code: 404 - x") is None


def test_the_fix_for_another_provider() -> None:
    assert responses_fix("openai-api/vllm/qwen") == (
        "give -M responses_api=false (the server serves chat completions only)")
