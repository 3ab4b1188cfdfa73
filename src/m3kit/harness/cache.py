"""The response cache: on by default, keyed on everything that changes an answer.

inspect's cache key covers the generate config, the messages (the whole prompt, images
included), the tools and the model API's ``base_url``; its cache folder is per model name. That
``base_url`` is not the endpoint for every provider: ``openai/...`` leaves it empty and lets the
OpenAI client read ``OPENAI_BASE_URL``, so two servers behind one model name shared answers.
Nor does it cover the model arguments (``-M`` options: a quantisation, a device, a local
checkpoint path) or anything m3kit decided before the call (which memory built the prompt, which
frames were sampled). The policy's ``scopes`` therefore hold one stable hash of:

- the model: provider and name, the endpoint its provider resolved
  (``m3kit.harness.endpoint.model_endpoint``: ``-M base_url=…``, ``--model-base-url``,
  ``OPENAI_BASE_URL``, ``<SERVICE>_BASE_URL``), its arguments and its generate config;
- the memory's configuration and the frame policy.

Never a credential: arguments and config entries whose names look like one
(``is_secret_name``), credential query parameters (``is_secret_query``: ``?key=…``, ``?sig=…``)
and ``user:password@`` are left out, so a key is never hashed and a rotated key or signature
keeps the cache. Knobs that change how a request is sent but not its answer
(``max_retries``, timeouts, connections) are left out too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from m3kit.harness.endpoint import model_endpoint
from m3kit.models.redact import is_secret_name, is_secret_query

if TYPE_CHECKING:
    from inspect_ai.model import CachePolicy, Model

__all__ = [
    "DEFAULT_EXPIRY",
    "cache_scope",
    "model_identity",
    "public_url",
    "response_cache",
    "stable_hash",
]

DEFAULT_EXPIRY = "1M"
# how a request is sent, not what it answers (inspect leaves the same out of its own key)
_TRANSPORT = frozenset({
    "adaptive_connections", "attempt_timeout", "batch", "cache", "cache_prompt", "http_client",
    "max_connections", "max_retries", "stream_idle_timeout", "timeout",
})


def _public(value: Any, drop: frozenset[str] = frozenset()) -> Any:
    """``value`` with every mapping entry whose name looks like a credential left out, at any
    depth; top-level entries named in ``drop`` too."""
    if isinstance(value, Mapping):
        return {str(k): _public(v) for k, v in value.items()
                if not is_secret_name(str(k)) and str(k) not in drop}
    if isinstance(value, list | tuple):
        return [_public(v) for v in value]
    return value


def public_url(url: str) -> str:
    """``url`` without credentials (no ``user:password@``, no credential query parameter such
    as ``?key=…`` or ``?sig=…``) and without a trailing slash."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if not is_secret_query(k)])
    return urlunsplit((parts.scheme.lower(), host, parts.path.rstrip("/"), query, ""))


def stable_hash(value: Any) -> str:
    """A short hash of ``value`` that is the same in every process (sorted JSON, sha256)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def model_identity(model: Model) -> dict[str, Any]:
    """What about ``model`` changes its answers: ``provider/name``, the resolved endpoint
    (credentials removed), its arguments and its generate config (credentials and transport
    knobs left out)."""
    endpoint = model_endpoint(model)
    return {
        "model": str(model),
        "endpoint": public_url(endpoint) if endpoint else None,
        "model_args": _public(dict(model.model_args), _TRANSPORT),
        "config": _public(model.config.model_dump(mode="json", exclude_none=True), _TRANSPORT),
    }


def cache_scope(
    model: Model,
    *,
    memory: Mapping[str, Any] | None = None,
    frames: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The ``CachePolicy.scopes`` for one call to ``model``: a hash of ``model_identity``, the
    memory configuration and the frame policy, plus the memory's name for reading."""
    payload = {
        "model": model_identity(model),
        "memory": _public(dict(memory or {})),
        "frames": dict(frames or {}),
    }
    scope = {"m3kit": stable_hash(payload)}
    if memory and "name" in memory:
        scope["memory"] = str(memory["name"])
    return scope


def response_cache(
    enabled: bool, scope: Mapping[str, str], expiry: str | None = DEFAULT_EXPIRY
) -> CachePolicy | bool:
    """The ``cache`` argument for ``generate``: a scoped policy, or ``False`` when disabled."""
    if not enabled:
        return False
    from inspect_ai.model import CachePolicy

    return CachePolicy(expiry=expiry, per_epoch=True, scopes=dict(scope))
