"""A scripted OpenAI-compatible chat server on loopback, for fault tests and overhead timing.

It answers ``GET /v1/models``, ``POST /v1/chat/completions`` (plain and streamed) and
``POST /v1/embeddings`` (``bag_of_words_vector``: texts that share words are near) and, per
sample, plays a script of chat faults before answering: ``rate_limit`` (429),
``server_error`` (500), ``garbage`` (200 with a body that is not JSON), ``hang`` (no reply
for ``hang_s``, or until the server stops), ``down`` (the connection is dropped without a
reply). A request belongs to the sample whose key ``key_of(prompt)`` finds in its last user
message (default: the ``qid=<id>`` marker).

Standard library only; every request is recorded so a test can count retries.

    with ScriptedServer(faults={"q1": ["rate_limit", "server_error"]}) as server:
        server.base_url  # http://127.0.0.1:<port>/v1
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal, Self

__all__ = ["DEFAULT_ANSWER", "Fault", "RequestRecord", "ScriptedServer", "bag_of_words_vector",
           "minimal_instance", "qid_marker"]

Fault = Literal["rate_limit", "server_error", "garbage", "hang", "down"]
DEFAULT_ANSWER = "The final answer is A"
_QID = re.compile(r"\bqid=([A-Za-z0-9_.:-]+)")


def bag_of_words_vector(text: str, dims: int) -> list[float]:
    """What ``POST /v1/embeddings`` answers for ``text``: its lower-cased words hashed into
    ``dims`` buckets, counted, L2-normalised (all zeros for a text without words).
    Deterministic, and texts that share words have a positive cosine."""
    vector = [0.0] * dims
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        vector[int.from_bytes(hashlib.blake2b(word.encode()).digest()[:4], "big") % dims] += 1.0
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm else vector


def qid_marker(prompt: str) -> str:
    """The sample key written into a prompt as ``qid=<id>`` (the whole prompt when absent)."""
    match = _QID.search(prompt)
    return match.group(1) if match else prompt


@dataclass(frozen=True)
class RequestRecord:
    """One chat request as the server saw it."""

    key: str
    outcome: str  # a fault name, or "answer"
    images: int
    model: str
    authorized: bool
    prompt: str = ""  # the last user message's text
    image_urls: tuple[str, ...] = ()  # every image of the request (data URIs, links), in order
    response_format: Any = None  # the request's ``response_format`` as sent (a constrained reply)
    max_tokens: int | None = None  # the request's bound on its reply, as sent


class ScriptedServer:
    """The server; a context manager that starts it on a free port and stops it.

    ``faults[key]`` is the script for the requests of sample ``key``: request i plays fault i,
    requests past the script are answered. ``answers[key]`` (or ``answer(prompt)``) is the reply
    text. ``api_key``: requests without ``Authorization: Bearer <api_key>`` get 401.
    ``block_after``: after that many answers, further chat requests wait until ``release()``
    or ``stop()`` (a run can then be killed mid-flight; set it to ``None`` to let new requests
    through while held ones stay held). ``delay_s``: added to every answer.
    ``responses_reply``: what ``POST /v1/responses`` answers, ``(status, JSON body)`` (a
    server that answers every POST alike, or one with a Responses API); ``None``: 404, as
    every path the server does not serve. Each such request is counted in ``responses_posts``.
    ``embedding_dims``: the length of the vectors ``POST /v1/embeddings`` answers; each such
    request is counted in ``embedding_posts`` and every text it embeds kept in ``embedded``.
    ``structured(prompt, schema)``: the reply text of a chat request that asks for JSON of a
    schema (``response_format`` ``json_schema``, or ``json_object`` with a ``schema`` as
    llama-cpp-python takes it; ``answers[key]`` still comes first); ``None``: such a request is
    answered as any other.
    """

    def __init__(
        self,
        *,
        faults: Mapping[str, Sequence[Fault]] | None = None,
        answers: Mapping[str, str] | None = None,
        answer: Callable[[str], str] | None = None,
        key_of: Callable[[str], str] = qid_marker,
        api_key: str | None = None,
        hang_s: float = 30.0,
        delay_s: float = 0.0,
        block_after: int | None = None,
        model: str = "scripted",
        responses_reply: tuple[int, Any] | None = None,
        embedding_dims: int = 64,
        structured: Callable[[str, Mapping[str, Any]], str] | None = None,
    ) -> None:
        self.faults = {k: list(v) for k, v in (faults or {}).items()}
        self.answers = dict(answers or {})
        self.answer = answer
        self.key_of = key_of
        self.api_key = api_key
        self.hang_s = hang_s
        self.delay_s = delay_s
        self.block_after = block_after
        self.model = model
        self.responses_reply = responses_reply
        self.responses_posts = 0
        self.embedding_dims = embedding_dims
        self.structured = structured
        self.embedded: list[str] = []
        self.embedding_posts = 0
        self.records: list[RequestRecord] = []
        self.answered = threading.Event()  # set when ``block_after`` answers were given
        self._release = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._seen: Counter[str] = Counter()
        self._answers_given = 0
        self._holding = 0  # requests held by ``block_after`` and not yet recorded
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, port: int = 0) -> Self:
        """Serve on ``port`` (0: a free one; a given port lets a test restart a server where a
        run's log says it was)."""
        handler = _handler_for(self)
        self._httpd = _QuietServer(("127.0.0.1", port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="m3kit-scripted-server")
        self._thread.start()
        return self

    def stop(self) -> None:
        self._release.set()
        self._stopped.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def release(self) -> None:
        """Let requests held by ``block_after`` go on."""
        self._release.set()

    def settle(self, timeout: float = 30.0) -> bool:
        """After ``release``: wait until every request that was held is recorded (a held
        request of a client that is gone is recorded late, under load after the test has moved
        on); ``False`` when ``timeout`` passed first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._holding == 0:
                    return True
            time.sleep(0.01)
        return False

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- what happened -------------------------------------------------------------------------

    def requests_for(self, key: str) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.records if r.key == key]

    def answered_keys(self) -> list[str]:
        with self._lock:
            return [r.key for r in self.records if r.outcome == "answer"]

    def reset(self) -> None:
        """Forget what was seen (scripts start over), keep the configuration."""
        with self._lock:
            self.records.clear()
            self._seen.clear()
            self._answers_given = 0
        self.answered.clear()
        self._release.clear()

    # -- deciding a reply (called from handler threads) -----------------------------------------

    def _plan(self, key: str) -> str:
        with self._lock:
            i = self._seen[key]
            self._seen[key] += 1
            script = self.faults.get(key, [])
            return script[i] if i < len(script) else "answer"

    def _record(self, record: RequestRecord) -> None:
        with self._lock:
            self.records.append(record)

    def _reply_text(self, key: str, prompt: str, response_format: Any = None) -> str:
        if key in self.answers:
            return self.answers[key]
        schema = _json_schema(response_format)
        if schema is not None and self.structured is not None:
            return self.structured(prompt, schema)
        return self.answer(prompt) if self.answer is not None else DEFAULT_ANSWER

    def _gate(self) -> bool:
        """Hold the request once ``block_after`` answers have been given; whether it was held
        (the caller then calls ``_recorded_held`` once it recorded it)."""
        if self.block_after is None:
            return False
        with self._lock:
            given = self._answers_given
            held = given >= self.block_after
            self._holding += held
        if held:
            self.answered.set()
            self._release.wait()
        return held

    def _recorded_held(self) -> None:
        with self._lock:
            self._holding -= 1

    def _count_answer(self) -> None:
        with self._lock:
            self._answers_given += 1


def minimal_instance(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """The smallest value a JSON schema accepts, deterministically: an object with its
    required properties, an empty array, ``""``, the minimum number (else 0), ``False``, the
    first of an ``enum``, ``None`` where null is allowed (``$ref`` read from the root's
    ``$defs``). What a constrained-decoding server could answer with the least content."""
    root = schema if root is None else root
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return minimal_instance(root.get("$defs", {})[name], root)
    if "enum" in schema:
        return schema["enum"][0]
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        if any(option.get("type") == "null" for option in options):
            return None
        return minimal_instance(options[0], root)
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: minimal_instance(properties[name], root)
                for name in schema.get("required", []) if name in properties}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return ""


def _json_schema(response_format: Any) -> Mapping[str, Any] | None:
    """The schema a ``response_format`` asks for (``json_schema``'s, or the ``schema`` beside
    ``json_object``), else ``None``."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        schema = (response_format.get("json_schema") or {}).get("schema")
    else:
        schema = response_format.get("schema")
    return schema if isinstance(schema, dict) else None


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that give up (attempt timeouts) and dropped connections are part of the
        # script, not errors worth a traceback on stderr.
        return


def _last_user_text(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The text of the last user message, and the number of images in the whole request."""
    text, images = "", 0
    for message in messages:
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        texts = []
        for part in parts:
            if part.get("type") == "image_url":
                images += 1
            elif part.get("type") == "text":
                texts.append(str(part.get("text", "")))
        if message.get("role") == "user":
            text = "\n".join(texts)
    return text, images


def _image_urls(messages: list[dict[str, Any]]) -> tuple[str, ...]:
    """The image URLs (data URIs or links) of every message of a request, in order."""
    return tuple(
        str((part.get("image_url") or {}).get("url", ""))
        for message in messages if isinstance(message.get("content"), list)
        for part in message["content"] if part.get("type") == "image_url"
    )


def _handler_for(server: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _authorized(self) -> bool:
            if server.api_key is None:
                return True
            return self.headers.get("Authorization", "") == f"Bearer {server.api_key}"

        def _send(self, status: int, body: bytes, content_type: str = "application/json",
                  headers: Mapping[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)

        def _json(self, status: int, payload: Any, headers: Mapping[str, str] | None = None
                  ) -> None:
            self._send(status, json.dumps(payload).encode(), headers=headers)

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                if not self._authorized():
                    self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
                    return
                self._json(200, {"object": "list", "data": [
                    {"id": server.model, "object": "model", "owned_by": "m3kit"}
                ]})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if self.path.rstrip("/").endswith("/responses"):
                with server._lock:
                    server.responses_posts += 1
                status, body = server.responses_reply or (404, {"error": {"message":
                                                                          "not found"}})
                self._json(status, body)
                return
            if self.path.rstrip("/").endswith("/embeddings"):
                self._embeddings(raw)
                return
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._json(404, {"error": {"message": "not found"}})
                return
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, {"error": {"message": "request is not JSON"}})
                return
            prompt, images = _last_user_text(request.get("messages", []))
            key = server.key_of(prompt)
            authorized = self._authorized()
            outcome = server._plan(key) if authorized else "unauthorized"
            # a held request is recorded only once it is answered
            held = outcome == "answer" and server._gate()
            server._record(RequestRecord(key, outcome, images, str(request.get("model")),
                                         authorized, prompt,
                                         _image_urls(request.get("messages", [])),
                                         request.get("response_format"),
                                         request.get("max_tokens")))
            if held:
                server._recorded_held()
            if outcome == "unauthorized":
                self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
            elif outcome == "rate_limit":
                self._json(429, {"error": {"message": "slow down", "type": "rate_limit"}},
                           headers={"Retry-After": "0"})
            elif outcome == "server_error":
                self._json(500, {"error": {"message": "scripted failure", "type": "server"}})
            elif outcome == "garbage":
                self._send(200, b"<html>this is not json", content_type="application/json")
            elif outcome == "hang":
                server._stopped.wait(server.hang_s)  # a stopped server lets it go at once
                self._json(504, {"error": {"message": "hung"}})
            elif outcome == "down":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(2)
            else:
                if server.delay_s:
                    time.sleep(server.delay_s)
                text = server._reply_text(key, prompt, request.get("response_format"))
                server._count_answer()
                if request.get("stream"):
                    self._stream(text)
                else:
                    self._json(200, _completion(server.model, text, prompt))

        def _embeddings(self, raw: bytes) -> None:
            if not self._authorized():
                self._json(401, {"error": {"message": "invalid api key", "type": "auth"}})
                return
            try:
                request = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                self._json(400, {"error": {"message": "request is not JSON"}})
                return
            texts = request.get("input")
            texts = [texts] if isinstance(texts, str) else texts
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                self._json(400, {"error": {"message": "input must be a string or strings"}})
                return
            with server._lock:
                server.embedded.extend(texts)
                server.embedding_posts += 1
            tokens = sum(max(1, len(t.split())) for t in texts)
            self._json(200, {
                "object": "list", "model": str(request.get("model")),
                "data": [{"object": "embedding", "index": i,
                          "embedding": bag_of_words_vector(t, server.embedding_dims)}
                         for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            })

        def _stream(self, text: str) -> None:
            chunks = [
                {"choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                              "finish_reason": None}]},
                {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                 "usage": _usage(text, "")},
            ]
            body = b"".join(
                b"data: " + json.dumps({"id": "chatcmpl-m3kit", "object": "chat.completion.chunk",
                                        "created": 0, "model": server.model, **c}).encode()
                + b"\n\n"
                for c in chunks
            ) + b"data: [DONE]\n\n"
            self._send(200, body, content_type="text/event-stream")

    return Handler


def _usage(text: str, prompt: str) -> dict[str, int]:
    prompt_tokens, completion_tokens = max(1, len(prompt.split())), max(1, len(text.split()))
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _completion(model: str, text: str, prompt: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-m3kit",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": _usage(text, prompt),
    }
