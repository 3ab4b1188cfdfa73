"""The response cache: on by default, keyed on everything that changes an answer.

inspect's cache key covers the model name, the generate config, the messages and the base URL,
but not the model arguments (``-M`` options: a quantisation, a device, a local checkpoint path)
nor anything m3kit decided before the call (which memory built the prompt, which frames were
sampled). Those go in the policy's ``scopes`` as one stable hash, so changing any of them misses
the cache instead of replaying an answer computed under other settings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_ai.model import CachePolicy

__all__ = ["DEFAULT_EXPIRY", "cache_scope", "is_secret_name", "response_cache", "stable_hash"]

DEFAULT_EXPIRY = "1M"
_SECRET_PARTS = ("key", "token", "secret", "password", "auth", "credential")


def is_secret_name(name: str) -> bool:
    """Whether an argument name looks like a credential (never hashed, logged or shown)."""
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_PARTS)


def _public(args: Mapping[str, Any]) -> dict[str, Any]:
    # A rotated API key must not invalidate the cache, and a key must not shape a logged value.
    return {k: v for k, v in args.items() if not is_secret_name(k)}


def stable_hash(value: Any) -> str:
    """A short hash of ``value`` that is the same in every process (sorted JSON, sha256)."""
    text = json.dumps(value, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def cache_scope(
    *,
    model_args: Mapping[str, Any] | None = None,
    memory: Mapping[str, Any] | None = None,
    frames: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The ``CachePolicy.scopes`` for one run: a hash of the model arguments (credentials left
    out), the memory configuration and the frame policy, plus the memory's name for reading."""
    payload = {
        "model_args": _public(model_args or {}),
        "memory": dict(memory or {}),
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
