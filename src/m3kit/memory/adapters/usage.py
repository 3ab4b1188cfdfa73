"""What an external memory system's own model calls cost, counted where they leave the process.

A system such as mem0 calls its models through the OpenAI SDK from inside its own code; it
reports no usage. ``UsageMeter`` counts them on the wire instead: ``openai_client`` (or
``async_openai_client``, for a system that awaits its calls) builds the SDK client the system
is given (bounded retries and timeout), whose HTTP client reports each response to the meter.
A chat completion counts a call with the tokens its reply reports, an embeddings response a
call (its tokens are not a model's prompt: kept apart); a failed attempt (an error status,
retried or not) counts as a failure only. ``snapshot`` and subtraction give
what one stretch of work cost: one meter per memory key, whose calls never overlap.
"""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from m3kit.memory.adapters.endpoints import OpenAIEndpoint

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

__all__ = ["ChatReply", "UsageMeter", "UsageSnapshot", "async_openai_client", "openai_client"]


class ChatReply(BaseModel):
    """One chat completion as the meter saw it: whether JSON was asked for
    (``response_format``) and the reply's text."""

    model_config = ConfigDict(frozen=True)

    json_mode: bool
    content: str


class UsageSnapshot(BaseModel):
    """The meter's counts at one moment (or, subtracted, between two)."""

    model_config = ConfigDict(frozen=True)

    chat_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    failed_requests: int = 0
    replies: tuple[ChatReply, ...] = ()

    @property
    def calls(self) -> int:
        """Every model call that answered: chat completions and embeddings."""
        return self.chat_calls + self.embedding_calls

    def __sub__(self, earlier: UsageSnapshot) -> UsageSnapshot:
        counts = {name: getattr(self, name) - getattr(earlier, name)
                  for name in UsageSnapshot.model_fields if name != "replies"}
        return UsageSnapshot(**counts, replies=self.replies[len(earlier.replies):])


class UsageMeter:
    """Counts the responses of the clients made with it (``openai_client``); thread-safe, as
    the system calls from a worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts = UsageSnapshot()

    def snapshot(self) -> UsageSnapshot:
        with self._lock:
            return self._counts

    def on_response(self, response: Any) -> None:
        """The HTTP client's response hook (an httpx response, or httpx2's under the SDK
        releases built on it): read the body (the SDK reads it again from the buffer)."""
        if _kind(response) is not None and response.is_success:
            response.read()
        self._count_response(response)

    async def on_async_response(self, response: Any) -> None:
        """``on_response`` for an async HTTP client (``async_openai_client``)."""
        if _kind(response) is not None and response.is_success:
            await response.aread()
        self._count_response(response)

    def _count_response(self, response: Any) -> None:
        """Count one response whose body, when it is counted, has been read."""
        kind = _kind(response)
        if kind is None:
            return
        if not response.is_success:
            self._add(failed_requests=1)
            return
        try:
            body = json.loads(response.content)
        except ValueError:  # not JSON: the SDK raises on it, the call answered nothing
            self._add(failed_requests=1)
            return
        usage = body.get("usage") if isinstance(body, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        if kind == "embeddings":
            self._add(embedding_calls=1, embedding_tokens=_count(usage, "prompt_tokens"))
            return
        self._add(chat_calls=1, prompt_tokens=_count(usage, "prompt_tokens"),
                  completion_tokens=_count(usage, "completion_tokens"),
                  reply=ChatReply(json_mode=_asks_json(response.request),
                                  content=_reply_text(body)))

    def _add(self, *, reply: ChatReply | None = None, **counts: int) -> None:
        with self._lock:
            now = self._counts
            update = {name: getattr(now, name) + value for name, value in counts.items()}
            if reply is not None:
                update["replies"] = (*now.replies, reply)
            self._counts = now.model_copy(update=update)


def openai_client(endpoint: OpenAIEndpoint, meter: UsageMeter, *, timeout_s: float,
                  max_retries: int) -> OpenAI:
    """An OpenAI SDK client for ``endpoint`` (its key read from the environment now) whose
    responses ``meter`` counts; each request gives up after ``timeout_s`` and is retried at
    most ``max_retries`` times (the SDK's backoff: 429, 5xx, lost connections)."""
    from openai import DefaultHttpxClient, OpenAI

    # the SDK's own client class (httpx's, or httpx2's in later releases), with its defaults
    http = DefaultHttpxClient(timeout=timeout_s, event_hooks={"response": [meter.on_response]})
    return OpenAI(api_key=endpoint.api_key(), base_url=endpoint.base_url, timeout=timeout_s,
                  max_retries=max_retries, http_client=http)


def async_openai_client(endpoint: OpenAIEndpoint, meter: UsageMeter, *, timeout_s: float,
                        max_retries: int) -> AsyncOpenAI:
    """``openai_client`` for a system that awaits its calls: an ``AsyncOpenAI`` client whose
    connections belong to the event loop that first uses it."""
    from openai import AsyncOpenAI, DefaultAsyncHttpxClient

    http = DefaultAsyncHttpxClient(timeout=timeout_s,
                                   event_hooks={"response": [meter.on_async_response]})
    return AsyncOpenAI(api_key=endpoint.api_key(), base_url=endpoint.base_url, timeout=timeout_s,
                       max_retries=max_retries, http_client=http)


def _kind(response: Any) -> str | None:
    """What a response answered: ``"chat"``, ``"embeddings"``, or ``None`` (not counted)."""
    path = response.request.url.path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith("/embeddings"):
        return "embeddings"
    return None


def _count(usage: dict[str, object], name: str) -> int:
    value = usage.get(name)
    return value if isinstance(value, int) and value > 0 else 0


def _asks_json(request: Any) -> bool:
    try:
        sent = json.loads(request.content)
    except ValueError:
        return False
    return isinstance(sent, dict) and sent.get("response_format") is not None


def _reply_text(body: object) -> str:
    try:
        content = body["choices"][0]["message"]["content"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        return ""
    return content if isinstance(content, str) else ""
