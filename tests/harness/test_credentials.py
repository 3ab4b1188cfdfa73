"""No credential reaches a file m3kit writes, whatever carried it: an API key in the environment,
``user:password@`` and signed query parameters in ``-M base_url``, or a server that echoes the
key back (into its answer, or into a 500's error text). Each run is stopped mid-way (its server
drops every connection) and resumed, which must connect with the credentials the log no longer
holds. Every file the runs, a report (HTML), an export and a comparison wrote is read (``.eval``
archives member by member: the caches, inspect's data folder and trace file included), and so is
what the commands printed."""

from __future__ import annotations

import base64
import json
import re
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from m3kit.cli.main import main
from m3kit.schema import write_jsonl

ENV_KEY = "sk-planted-env-key-0123456789"
USER, PASSWORD = "bob", "pw-planted-userinfo-4567"
SIG = "planted-sas-signature-89ab"
TOKEN = "planted-query-token-cdef"
AMZ = "planted-amz-credential-1234"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
PLANTED = (ENV_KEY, PASSWORD, BASIC, SIG, TOKEN, AMZ)
_QID = re.compile(r"qid=(q\d+)")


class EchoServer:
    """An OpenAI-compatible server on loopback that reflects what it was sent: every answer
    quotes the request's ``Authorization`` header and path (query included); the sample named
    in ``failing`` gets HTTP 500 whose error text quotes them, every time. ``armed``: the first
    request of sample ``dies_at`` makes the server drop every connection (a dead server, to
    m3kit) until ``armed`` is cleared."""

    def __init__(self, failing: str, dies_at: str) -> None:
        self.failing, self.dies_at = failing, dies_at
        self.armed = self.dropping = False
        self.seen: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def _json(self, status: int, payload: Any) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def _drop(self) -> bool:
                if server.dropping and server.armed:
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return True
                return False

            def do_GET(self) -> None:
                if self._drop():
                    return
                self._json(200, {"object": "list", "data": [{"id": "echo", "object": "model"}]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                qid = _QID.search(raw.decode("utf-8", "replace"))
                if qid is not None and qid.group(1) == server.dies_at:
                    server.dropping = True
                if self._drop():
                    return
                echo = f"{self.headers.get('Authorization', '')} at {self.path}"
                server.seen.append(echo)
                if qid is not None and qid.group(1) == server.failing:
                    self._json(500, {"error": {"message": f"internal error for key {echo}",
                                               "type": "server"}})
                    return
                self._json(200, {
                    "id": "chatcmpl-echo", "object": "chat.completion", "created": 0,
                    "model": "echo",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant",
                        "content": f"You sent {echo}.\nThe final answer is A"}}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 9, "total_tokens": 14},
                })

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


@pytest.fixture
def echo() -> Iterator[EchoServer]:
    server = EchoServer(failing="q1", dies_at="q2")
    yield server
    server.stop()


def _texts(root: Path) -> Iterator[tuple[str, bytes]]:
    """Every file under ``root`` as bytes, each member of a zip archive (an ``.eval`` log)
    apart, since its members are compressed."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield str(path), data
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as archive:
                for name in archive.namelist():
                    yield f"{path}!{name}", archive.read(name)


def _leaks(root: Path, printed: str) -> list[str]:
    found = [f"{where}: {secret}" for where, data in _texts(root) for secret in PLANTED
             if secret.encode() in data]
    return found + [f"printed: {secret}" for secret in PLANTED if secret in printed]


@pytest.mark.slow
def test_no_planted_credential_in_any_file(tmp_path: Path, isolated_dirs: Path,
                                           monkeypatch: pytest.MonkeyPatch, echo: EchoServer,
                                           probe_video: Path, make_q, capsys) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    write_jsonl(suite / "questions.jsonl", [make_q(i, Path("probe.mp4")) for i in range(3)])
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    monkeypatch.setenv("ECHO_API_KEY", ENV_KEY)
    base = f"127.0.0.1:{echo.port}/v1"
    urls = {"signed": f"http://{base}?token={TOKEN}&sig={SIG}&X-Amz-Credential={AMZ}&sv=2024",
            "userinfo": f"http://{USER}:{PASSWORD}@{base}"}
    sent = {"signed": f"sig={SIG}", "userinfo": f"Basic {BASIC}"}
    printed = []
    for name, url in urls.items():
        args = ["eval", "synth_interference", "--model", "openai-api/echo/echo",
                "-M", f"base_url={url}", "-T", f"suite={suite}", "-T", "frames=1",
                "--log-dir", str(tmp_path / "logs" / name), "--max-retries", "1"]
        echo.armed, echo.dropping = True, False
        assert main(args) == 2  # the server went away mid-run
        echo.armed, before = False, len(echo.seen)
        assert main([*args, "--resume"]) == 0
        # the resumed run connected as the first did, with the credentials the log lacks
        resumed = echo.seen[before:]
        assert resumed and all(sent[name] in line for line in resumed), resumed
        printed.append(capsys.readouterr())
    assert any(ENV_KEY in line for line in echo.seen)

    out = tmp_path / "out"
    assert main(["report", str(tmp_path / "logs"), "--out", str(out / "report")]) == 0
    assert (out / "report" / "index.html").is_file()
    assert main(["export", str(tmp_path / "logs"), "--format", "csv",
                 "--out", str(out / "rows.csv")]) == 0
    for name in urls:
        assert main(["export", str(tmp_path / "logs" / name),
                     "--out", str(out / f"{name}.jsonl")]) == 0
    assert main(["compare", str(tmp_path / "logs" / "signed"),
                 str(tmp_path / "logs" / "userinfo"), "--json"]) == 0
    printed.append(capsys.readouterr())

    # the answers and the failures are there, with the credentials taken out
    for name in urls:
        rows = {r["id"]: r for r in map(json.loads, (out / f"{name}.jsonl").open())}
        assert {i: r["status"] for i, r in rows.items()} == {
            "q0": "correct", "q1": "failed", "q2": "correct"}
        assert rows["q0"]["prediction"].startswith("You sent ")
        assert "internal error for key" in rows["q1"]["reason"]
    text = "\n".join(p.out + p.err for p in printed)
    assert _leaks(tmp_path, text) == []
    assert (isolated_dirs / "inspect-cache").is_dir()  # the response cache was written
