"""Where a model's requests go: the endpoint its provider resolved, for preflight and the cache.

inspect resolves a base URL differently per provider: ``openai-api/<service>/...`` stores the
resolved value (``-M base_url=…``, ``--model-base-url``, ``<SERVICE>_BASE_URL``) on the model API,
but ``openai/...`` stores only an explicit one and lets the OpenAI client read
``OPENAI_BASE_URL`` (or fall back to ``https://api.openai.com/v1``) itself. The client's own
``base_url`` is therefore the one value that is right for every provider built on an SDK client;
the model API's ``base_url`` is the fallback for the others.

Whether an endpoint is down: a request that failed with a refused or reset connection
(``is_refusal``) is followed by a few probes of the endpoint (``endpoint_refuses``); refused every
time, the server is gone and a run stops instead of failing every remaining sample against it
(``m3kit.harness.sample_state``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from m3kit.errors import M3kitError
from m3kit.models.client import provider_error

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = ["EndpointDownError", "azure_or_bedrock", "endpoint_refuses", "is_refusal",
           "model_endpoint", "refused_url"]


class EndpointDownError(M3kitError):
    """The model's server stopped answering during a run: its connections are refused."""

    @property
    def message(self) -> str:
        # what inspect records as the eval's error (``exception_message``): the line itself,
        # not the exception's repr
        return str(self)


def azure_or_bedrock(api: object) -> bool:
    """Whether an OpenAI provider's ``api`` is its Azure or Bedrock flavour (OpenAI's API at
    another vendor's endpoint, keys that are not bearer tokens)."""
    flavours = (getattr(api, "is_azure", None), getattr(api, "is_bedrock", None))
    return any(callable(f) and f() for f in flavours)


def model_endpoint(model: Model) -> str | None:
    """The URL ``model``'s requests are sent to, as its provider resolved it; ``None`` for a
    model that runs in this process (no server)."""
    api = model.api
    client = getattr(api, "client", None)
    resolved = getattr(client, "base_url", None) if client is not None else None
    if not resolved:
        resolved = getattr(api, "base_url", None)
    if not resolved:
        return None
    text = str(resolved)
    return text if text.startswith(("http://", "https://")) else None


# Exception class names (anywhere in the MRO of the cause) that mean the request never reached a
# server that answers: the connection was refused, reset or closed without a reply. The SDKs'
# ``APIConnectionError`` wraps httpx's ``ConnectError`` / ``RemoteProtocolError`` / ``ReadError``.
_REFUSAL_NAMES = frozenset({
    "APIConnectionError", "ConnectError", "ConnectionRefusedError", "ConnectionResetError",
    "RemoteProtocolError", "ReadError", "ServerDisconnectedError",
})
# A timeout is a slow or hung server, not a dead one: inspect's attempt timeout handles it.
_TIMEOUT_NAMES = frozenset({"APITimeoutError", "TimeoutException", "TimeoutError"})


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then each exception behind it: the provider's error under a retry wrapper
    (``provider_error``), else the one it was raised from or during; each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        inner = provider_error(current)
        current = inner if inner is not current else current.__cause__ or current.__context__


def is_refusal(exc: BaseException) -> bool:
    """Whether ``exc`` (or the exception it was raised from) says the connection to the model's
    server was refused or reset (not a timeout, not an HTTP error reply)."""
    for current in _chain(exc):
        names = {cls.__name__ for cls in type(current).__mro__}
        if names & _TIMEOUT_NAMES:
            return False
        if names & _REFUSAL_NAMES:
            return True
    return False


def refused_url(exc: BaseException) -> str | None:
    """The URL of the request whose connection failed in ``exc`` (the SDKs' and httpx's errors
    carry it), ``None`` when no exception in the chain names one."""
    for current in _chain(exc):
        try:
            request = getattr(current, "request", None)
        except RuntimeError:  # httpx: "The .request property has not been set"
            request = None
        url = getattr(request, "url", None)
        if url is not None and str(url).startswith(("http://", "https://")):
            return str(url)
    return None


def endpoint_refuses(url: str, probes: int, interval_s: float, timeout_s: float) -> bool:
    """Whether ``probes`` GET requests to ``url``, ``interval_s`` apart, are all refused or
    reset. Any HTTP reply (even 401, 404 or 405) or a timeout means something is there. No
    credential is sent: whether a server answers is all that is asked."""
    import time

    import httpx

    for probe in range(probes):
        if probe:
            time.sleep(interval_s)
        try:
            httpx.get(url, timeout=timeout_s)
        except httpx.TimeoutException:
            return False
        except (httpx.ConnectError, httpx.RemoteProtocolError, httpx.ReadError,
                httpx.WriteError, OSError):
            continue
        except httpx.HTTPError:
            return False
        return False
    return True
