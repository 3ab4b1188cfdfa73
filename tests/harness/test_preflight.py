"""A missing API key, an unreachable server or a rejected key fail before any work, in one
line that never shows the key."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.harness.run import PreflightError

from ..waits import FAST_S


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _assert_one_line_without(exc: BaseException, *secrets: str) -> str:
    text = str(exc)
    assert "\n" not in text and text.strip()
    for secret in secrets:
        assert secret not in text
    return text


def test_missing_api_key(tmp_path, scripted, serve):
    server = scripted()
    model = serve("nokey", server, key=None)
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", model, log_dir=tmp_path / "logs")
    text = _assert_one_line_without(info.value)
    assert "NOKEY_API_KEY" in text
    assert not (tmp_path / "logs").exists() and server.records == []


def test_unreachable_server_fails_fast(tmp_path, monkeypatch, secret):
    monkeypatch.setenv("GONE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("GONE_API_KEY", secret)
    start = time.perf_counter()
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", "openai-api/gone/model", log_dir=tmp_path / "logs")
    assert time.perf_counter() - start < FAST_S
    text = _assert_one_line_without(info.value, secret)
    assert "cannot reach http://127.0.0.1" in text
    assert not (tmp_path / "logs").exists()


def test_rejected_key(tmp_path, scripted, serve, secret):
    server = scripted(api_key=secret)
    wrong = "sk-wrong-key-abcdef0123"
    model = serve("wrongkey", server, key=wrong)
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", model, log_dir=tmp_path / "logs")
    text = _assert_one_line_without(info.value, secret, wrong)
    assert "rejected the API key (HTTP 401)" in text
    assert server.records == []  # no chat request was made


def _point_openai(monkeypatch, base_url: str, key: str) -> str:
    """``openai/...`` at ``base_url`` through ``OPENAI_BASE_URL``: inspect's ``openai`` provider
    keeps no base URL of its own then (its client reads the variable)."""
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", key)
    return "openai/gpt-4o"  # chat completions: the scripted server has no Responses API


def test_openai_unreachable_through_openai_base_url_fails_fast(tmp_path, monkeypatch, secret):
    model = _point_openai(monkeypatch, f"http://127.0.0.1:{_closed_port()}/v1", secret)
    start = time.perf_counter()
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", model, log_dir=tmp_path / "logs")
    assert time.perf_counter() - start < FAST_S
    text = _assert_one_line_without(info.value, secret)
    assert text.startswith("model openai/gpt-4o: cannot reach http://127.0.0.1:")
    assert not (tmp_path / "logs").exists()


def test_openai_rejected_key_through_openai_base_url(tmp_path, monkeypatch, scripted, secret):
    server = scripted(api_key=secret)
    wrong = "sk-wrong-key-abcdef0123"
    model = _point_openai(monkeypatch, server.base_url, wrong)
    with pytest.raises(PreflightError) as info:
        run_benchmark_task("synth_nback", model, log_dir=tmp_path / "logs")
    text = _assert_one_line_without(info.value, secret, wrong)
    assert text == (f"model openai/gpt-4o: {server.base_url} rejected the API key (HTTP 401)")
    assert server.records == [] and not (tmp_path / "logs").exists()


@pytest.mark.slow
def test_openai_cli_exits_2_before_any_work(tmp_path, monkeypatch, secret):
    model = _point_openai(monkeypatch, f"http://127.0.0.1:{_closed_port()}/v1", secret)
    proc = subprocess.run(
        [sys.executable, "-m", "m3kit", "eval", "synth_nback", "--model", model,
         "--log-dir", str(tmp_path / "logs")],
        check=False, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach http://127.0.0.1" in lines[0]
    assert secret not in proc.stderr + proc.stdout and not (tmp_path / "logs").exists()


def test_the_client_does_not_retry_on_its_own(monkeypatch, scripted, serve, secret):
    """inspect retries a failing request; the OpenAI client it builds would retry each attempt
    twice more. check_model turns the client's retries off, in the model arguments too (a resumed
    run rebuilds its model from them); an explicit ``max_retries`` model argument is kept."""
    from m3kit.harness.preflight import check_model

    server = scripted()
    for model in (serve("svc", server), _point_openai(monkeypatch, server.base_url, secret)):
        resolved = check_model(model)
        assert resolved.api.client.max_retries == 0
        assert resolved.model_args == {"max_retries": 0}
        kept = check_model(model, {"max_retries": 3})
        assert kept.api.client.max_retries == 3 and kept.model_args == {"max_retries": 3}


def test_cli_prints_one_line_and_exits_2(tmp_path, monkeypatch, secret):
    """Through the real ``m3kit`` command: one line on stderr, no traceback, no key."""
    monkeypatch.setenv("GONE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("GONE_API_KEY", secret)
    proc = subprocess.run(
        [sys.executable, "-m", "m3kit", "eval", "synth_nback", "--model",
         "openai-api/gone/model", "--log-dir", str(tmp_path / "logs")],
        check=False, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("m3kit: error: ")
    assert "Traceback" not in proc.stderr and secret not in proc.stderr + proc.stdout


def test_check_model_is_the_public_preflight(monkeypatch, secret):
    from m3kit.harness.preflight import PreflightError as Public
    from m3kit.harness.preflight import check_model

    assert Public is PreflightError  # one error type, whichever module it is imported from
    monkeypatch.setenv("GONE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("GONE_API_KEY", secret)
    with pytest.raises(PreflightError) as info:
        check_model("openai-api/gone/model")
    assert "cannot reach http://127.0.0.1" in _assert_one_line_without(info.value, secret)


def test_m3eval_generate_fails_fast_on_an_unreachable_server(tmp_path, monkeypatch, secret,
                                                             capsys):
    """``m3kit m3eval generate`` checks the model before touching the root."""
    from m3kit.cli.main import main

    monkeypatch.setenv("GONE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("GONE_API_KEY", secret)
    start = time.perf_counter()
    code = main(["m3eval", "generate", str(tmp_path / "root"), "--model",
                 "openai-api/gone/model", "--batches", "1", "--attempts", "1"])
    assert code == 2 and time.perf_counter() - start < FAST_S
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach http://127.0.0.1" in lines[0]
    assert secret not in err and "Traceback" not in err


@pytest.mark.slow
def test_backend_errors_are_typed_and_name_the_model(scripted, serve, secret):
    """A provider error during generation (here: the server rejects the key after preflight)
    is one typed line naming the model, not the provider's traceback."""
    from m3kit.errors import M3kitError
    from m3kit.models.backend import BackendError, BackendRequest, InspectBackend

    server = scripted(api_key="sk-the-right-key-0000000")
    model = serve("wrongkey", server, key=secret)
    backend = InspectBackend(model, max_retries=0)
    try:
        with pytest.raises(BackendError) as info:
            backend.complete(BackendRequest("questions", "q0", "hello qid=q0"))
    finally:
        backend.close()
    assert isinstance(info.value, M3kitError)
    text = _assert_one_line_without(info.value, secret)
    # the request's item and stage, then the model
    assert text.startswith(f"record q0: field 'questions': model {model}: ")
    assert info.value.reason.startswith(f"model {model}: ")
