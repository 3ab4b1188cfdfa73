"""The provider's own SDK client, made to leave retries to m3kit.

The OpenAI and Anthropic SDK clients retry a failed request twice by default, silently and with
their own backoff: a count of attempts set anywhere else (``m3kit eval --max-retries``, a
construction pipeline's ``--call-attempts``) would then be three times as many requests, and a
failing server quiet for longer than it says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = ["client_retries_off", "provider_error"]


def provider_error(exc: BaseException) -> BaseException:
    """The provider's own error under a retry wrapper: tenacity's ``RetryError`` (which
    inspect raises even with its retries off) holds it as its last attempt's exception;
    ``exc`` itself when it is no such wrapper or its last attempt did not fail."""
    last = getattr(exc, "last_attempt", None)
    failed = getattr(last, "failed", True)
    inner = last.exception() if last is not None and failed and hasattr(last, "exception") else None
    return inner if isinstance(inner, BaseException) else exc


def client_retries_off(model: Model) -> None:
    """Rebuild the provider's SDK client with ``max_retries=0`` (the OpenAI and Anthropic
    clients retry twice by default), so that inspect's ``max_retries`` alone decides how many
    requests a failing call makes. The setting goes into the model's arguments too, so a run
    resumed from its log (which rebuilds the model from them) has it as well. An explicit
    ``-M max_retries=…`` is kept."""
    api = model.api
    client = getattr(api, "client", None)
    retries = getattr(client, "max_retries", None)
    provider_args = getattr(api, "model_args", None)
    if (not isinstance(retries, int) or retries == 0 or "max_retries" in model.model_args
            or not isinstance(provider_args, dict)):
        return
    provider_args["max_retries"] = 0
    api.initialize()  # inspect's providers build their client from their model_args here
    if getattr(getattr(api, "client", None), "max_retries", None) == 0:
        model.model_args["max_retries"] = 0
    else:  # this provider does not pass its arguments to its client
        del provider_args["max_retries"]
