"""Where a model's requests go: the endpoint its provider resolved, for preflight and the cache.

inspect resolves a base URL differently per provider: ``openai-api/<service>/...`` stores the
resolved value (``-M base_url=…``, ``--model-base-url``, ``<SERVICE>_BASE_URL``) on the model API,
but ``openai/...`` stores only an explicit one and lets the OpenAI client read
``OPENAI_BASE_URL`` (or fall back to ``https://api.openai.com/v1``) itself. The client's own
``base_url`` is therefore the one value that is right for every provider built on an SDK client;
the model API's ``base_url`` is the fallback for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = ["model_endpoint"]


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
