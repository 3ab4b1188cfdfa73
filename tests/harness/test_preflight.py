"""A missing API key, an unreachable server or a rejected key fail before any work, in one
line that never shows the key."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from m3kit.harness.run import PreflightError, run_eval


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
        run_eval("synth_nback", model, log_dir=tmp_path / "logs")
    text = _assert_one_line_without(info.value)
    assert "NOKEY_API_KEY" in text
    assert not (tmp_path / "logs").exists() and server.records == []


def test_unreachable_server_fails_fast(tmp_path, monkeypatch, secret):
    monkeypatch.setenv("GONE_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("GONE_API_KEY", secret)
    start = time.perf_counter()
    with pytest.raises(PreflightError) as info:
        run_eval("synth_nback", "openai-api/gone/model", log_dir=tmp_path / "logs")
    assert time.perf_counter() - start < 10
    text = _assert_one_line_without(info.value, secret)
    assert "cannot reach http://127.0.0.1" in text
    assert not (tmp_path / "logs").exists()


def test_rejected_key(tmp_path, scripted, serve, secret):
    server = scripted(api_key=secret)
    wrong = "sk-wrong-key-abcdef0123"
    model = serve("wrongkey", server, key=wrong)
    with pytest.raises(PreflightError) as info:
        run_eval("synth_nback", model, log_dir=tmp_path / "logs")
    text = _assert_one_line_without(info.value, secret, wrong)
    assert "rejected the API key (HTTP 401)" in text
    assert server.records == []  # no chat request was made


def test_cli_prints_one_line_and_exits_2(tmp_path, monkeypatch, secret):
    """Through the real ``m3kit`` command: one line on stderr, no traceback, no key."""
    from m3kit.cli.main import app

    if "eval" not in {c.name for c in app.registered_commands}:
        pytest.skip("`eval` is not wired into m3kit.cli.main yet (the lead adds "
                    "app.command('eval')(eval.eval_command))")
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
