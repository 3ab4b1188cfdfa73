"""The Responses API riddle: ``openai/<name>`` against a server that does not speak it.

inspect's ``openai/`` provider sends a model's requests to OpenAI's Responses API
(``POST <base>/responses``) rather than to chat completions for every model name it does not
recognise as an older OpenAI chat model (``smollm2``, ``Qwen/...``: an unknown name is taken
for a new OpenAI model), and for any model with ``-M responses_api=true``. An
OpenAI-compatible server that serves chat completions only (llama.cpp, an older vLLM) then
fails every sample with a riddle: ``NotFoundError: Error code: 404`` where the route is
missing, ``TypeError: 'NoneType' object is not iterable`` where the server answers the POST
with something that is not a Response. The fix is one of two: the ``openai-api/<service>/``
provider (chat completions, at ``<SERVICE>_BASE_URL`` with ``<SERVICE>_API_KEY``), or
``-M responses_api=false``.

``responses_probe`` asks a server whether it has the route, with a request that cannot
generate anything (an empty body: no model, no input), so it never costs a token;
``responses_fix`` is the one line that names the fix; ``responses_api_hint`` recognises a
sample's failure text as this riddle (and only then) and returns the same line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = [
    "OPENAI_HOST",
    "ResponsesProbe",
    "responses_api_hint",
    "responses_fix",
    "responses_probe",
    "uses_responses_api",
]

OPENAI_HOST = "api.openai.com"
# HTTP statuses that say the route is not there: not found, or a path that exists for other
# methods only (a server serving GET /responses/{id} but not the POST).
_MISSING = (404, 405)
# Statuses that say the route is there: it read the empty request and refused it.
_PRESENT = (400, 422)
# A 404 that is about the model, not the route (OpenAI's own "model_not_found").
_MODEL_NOT_FOUND = re.compile(r"model_not_found|model .{0,80}does not exist", re.IGNORECASE)
_NOT_ITERABLE = "'NoneType' object is not iterable"
_HTTP_MISSING = re.compile(r"\b(NotFoundError|Error code: 40[45]\b|HTTP 40[45]\b)")


class ResponsesProbe(BaseModel):
    """What ``POST <base>/responses`` with an empty body said: ``missing`` (404/405, or a
    200 whose body is not a Response: the server answers whatever it is sent), ``present``
    (it refused the empty request as a Responses endpoint would: 400/422, or a 200 Response)
    or ``unknown`` (anything else: the status or the error in ``detail``)."""

    model_config = ConfigDict(frozen=True)

    verdict: Literal["missing", "present", "unknown"]
    detail: str


def _provider_model(model: str) -> tuple[str, str]:
    """``(provider, name)`` of an inspect model name: ``openai/smollm2`` -> (``openai``,
    ``smollm2``)."""
    provider, _, name = model.partition("/")
    return provider, name


def responses_fix(model: str) -> str:
    """The fix for ``model`` (an inspect model name) whose server has no Responses API, one
    line: for ``openai/<name>`` both fixes, for another provider ``-M responses_api=false``."""
    provider, name = _provider_model(model)
    switch = "-M responses_api=false"
    if provider != "openai":
        return f"give {switch} (the server serves chat completions only)"
    return (f"use --model openai-api/<service>/{name} with <SERVICE>_BASE_URL and "
            f"<SERVICE>_API_KEY, or keep {model} with {switch}")


def _openai_host(endpoint: str) -> bool:
    return (urlparse(endpoint).hostname or "").lower() == OPENAI_HOST


def uses_responses_api(model: Model) -> bool:
    """Whether ``model``'s chat requests go to the Responses API of a server other than
    OpenAI's own (Azure and Bedrock flavours aside: their endpoints are OpenAI's)."""
    from m3kit.harness.endpoint import azure_or_bedrock, model_endpoint

    api = model.api
    if getattr(api, "responses_api", None) is not True or azure_or_bedrock(api):
        return False
    endpoint = model_endpoint(model)
    return endpoint is not None and not _openai_host(endpoint)


def responses_probe(endpoint: str, headers: Mapping[str, str], timeout: float) -> ResponsesProbe:
    """``POST <endpoint>/responses`` with an empty JSON body (nothing to generate: no model,
    no input) and what its answer says about the route (``ResponsesProbe``)."""
    import httpx

    url = endpoint.rstrip("/") + "/responses"
    try:
        response = httpx.post(url, json={}, headers=dict(headers), timeout=timeout)
    except httpx.HTTPError as exc:
        return ResponsesProbe(verdict="unknown", detail=type(exc).__name__)
    status = response.status_code
    detail = f"HTTP {status}"
    if status in _MISSING:
        return ResponsesProbe(verdict="missing", detail=detail)
    if status in _PRESENT:
        return ResponsesProbe(verdict="present", detail=detail)
    if 200 <= status < 300:
        try:
            body = response.json()
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("output"), list):
            return ResponsesProbe(verdict="present", detail=detail)
        # a 200 to an empty request, and not a Response: the server answers any POST
        return ResponsesProbe(verdict="missing", detail=f"{detail} with no Response in it")
    return ResponsesProbe(verdict="unknown", detail=detail)


def responses_api_hint(model: str | Model, reason: str) -> str | None:
    """The one-line fix when a sample of ``model`` failed with ``reason`` because its server
    has no Responses API (``'NoneType' object is not iterable``, or a 404/405 that is not
    OpenAI's "model not found"); else ``None``.

    ``model``: the model under evaluation (inspect's ``get_model()`` inside a solver: then
    whether it uses the Responses API, and where, is known exactly), or its name (then any
    ``openai/`` model but the Azure and Bedrock flavours is taken to)."""
    if isinstance(model, str):
        name = model
        provider, rest = _provider_model(model)
        candidate = provider == "openai" and not rest.startswith(("azure/", "bedrock/"))
    else:
        name = str(model)
        candidate = uses_responses_api(model)
    if not candidate:
        return None
    riddle = _NOT_ITERABLE in reason or (
        _HTTP_MISSING.search(reason) is not None and _MODEL_NOT_FOUND.search(reason) is None)
    if not riddle:
        return None
    return (f"inspect's {_provider_model(name)[0]}/ provider sends {name}'s requests to the "
            f"Responses API (POST /responses), which this server does not serve: "
            f"{responses_fix(name)}")
