"""Preflight: is the model usable, before any work is done with it?

``check_model`` constructs the model (a missing API key or an unknown provider fails here),
turns its SDK client's own retries off (inspect retries each request ``max_retries`` times; an
OpenAI client retrying each attempt twice more would triple that) and, for a model served over
HTTP, asks ``<endpoint>/models`` with a short timeout (an unreachable server or a rejected key
fails here). The endpoint is the one the provider resolved (``m3kit.harness.endpoint``), so
``openai/...`` pointed elsewhere by ``OPENAI_BASE_URL`` is checked where it points. A model
whose requests go to the Responses API of a server other than OpenAI's (inspect's ``openai/``
provider does that for every model name it does not know: ``m3kit.harness.responses_api``)
gets ``POST <endpoint>/responses`` with an empty body too: a 404/405, or a 200 that is not a
Response, fails with the fix in the same line; an answer that says neither way is a warning
with the fix. Each failure is one ``PreflightError`` line with every secret redacted. Nothing
is generated.

What each provider gets:

- endpoint and key: ``openai/...`` (``OPENAI_BASE_URL`` or ``https://api.openai.com/v1``),
  ``openai-api/<service>/...`` and every provider inspect builds on its OpenAI-compatible API
  (``together``, ``openrouter``, ``fireworks``, ``deepseek``, ``perplexity``, ``ollama``,
  ``sambanova``, ``moonshot``, ``cloudflare``, ``hf-inference-providers``, ``vllm`` and
  ``sglang`` servers): unreachable, HTTP 401 or 403 fail;
- endpoint only: other providers whose client exposes an HTTP base URL (``anthropic``,
  ``mistral``, ``groq``...) and the Azure and Bedrock flavours of ``openai`` (their keys are
  not bearer tokens): unreachable fails; a key's presence is checked when the model is
  constructed, its validity on the first request;
- construction only, nothing to reach: models that run in this process (``m3kit/builtin``,
  ``m3kit/hf``, ``hf``, ``llama-cpp-python``, ``transformer_lens``, ``nnterp``, ``mockllm``,
  ``none``), and providers whose API exposes no HTTP endpoint (``bedrock`` through boto,
  ``google``/``vertex`` through their SDK): a missing key or package fails, an unreachable
  service or a rejected key only on the first request.

Called by ``run_eval`` (``m3kit eval``), ``m3kit m3eval generate`` and the M3Exam judge, so
that an unreachable server fails in seconds instead of hanging in retries.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from m3kit.errors import M3kitError
from m3kit.harness.endpoint import azure_or_bedrock, model_endpoint
from m3kit.harness.responses_api import responses_fix, responses_probe, uses_responses_api
from m3kit.models.client import client_retries_off
from m3kit.models.credentials import keep_credentials
from m3kit.models.redact import one_line

if TYPE_CHECKING:
    from inspect_ai.model import Model

__all__ = ["PREFLIGHT_TIMEOUT_S", "PreflightError", "check_model"]

logger = logging.getLogger(__name__)

PREFLIGHT_TIMEOUT_S = 5.0


class PreflightError(M3kitError):
    """The model cannot be used: a missing API key, an unreachable server, a rejected key."""


def _flatten(message: str) -> str:
    # inspect's prerequisite errors are rich-markup paragraphs: make them one plain line.
    text = re.sub(r"\[/?[a-z ]+\]", "", message)
    text = text.replace("ERROR: ", "")
    return one_line(text)


def check_model(model: str | Model, model_args: Mapping[str, Any] | None = None) -> Model:
    """The model, constructed, with its client's own retries off and (when it is served over
    HTTP) answering, and recorded without credentials (``keep_credentials``: every model m3kit
    runs, judges included, passes here); else ``PreflightError`` naming the model."""
    from inspect_ai.model import Model, get_model

    if isinstance(model, Model):
        resolved = model
    else:
        try:
            # not memoized: a model whose server moved (a new port in the same process) must
            # not be served from inspect's model cache
            resolved = get_model(model, memoize=False, **dict(model_args or {}))
        except Exception as exc:  # noqa: BLE001 (PrerequisiteError, unknown provider, bad args)
            raise PreflightError(f"model {model}: {_flatten(str(exc))}") from None
    client_retries_off(resolved)
    _check_server(resolved)
    return keep_credentials(resolved)


def _openai_bearer(api: object) -> bool:
    """Whether ``api`` sends its key as an OpenAI bearer token (not Azure's or Bedrock's)."""
    names = {cls.__name__ for cls in type(api).__mro__}
    if not names & {"OpenAICompatibleAPI", "OpenAIAPI"}:
        return False
    return not azure_or_bedrock(api)


def _check_server(model: Model) -> None:
    """GET ``<endpoint>/models``: connection failures and (for OpenAI bearer keys) rejected keys
    fail; any other answer means a server is there."""
    import httpx

    endpoint = model_endpoint(model)
    if endpoint is None:
        return
    api = model.api
    api_key = getattr(api, "api_key", None)
    check_key = bool(api_key) and _openai_bearer(api)
    headers = {"Authorization": f"Bearer {api_key}"} if check_key else {}
    shown = one_line(endpoint.rstrip("/"), extra=[api_key])
    try:
        response = httpx.get(endpoint.rstrip("/") + "/models", headers=headers,
                             timeout=PREFLIGHT_TIMEOUT_S)
    except httpx.HTTPError as exc:
        reason = one_line(str(exc), extra=[api_key]) or type(exc).__name__
        raise PreflightError(f"model {model}: cannot reach {shown} ({reason})") from None
    if check_key and response.status_code in (401, 403):
        raise PreflightError(
            f"model {model}: {shown} rejected the API key (HTTP {response.status_code})"
        )
    if uses_responses_api(model):
        _check_responses(model, endpoint, headers, shown)


def _check_responses(model: Model, endpoint: str, headers: Mapping[str, str],
                     shown: str) -> None:
    """The model's requests go to the Responses API of a server that is not OpenAI's: fail
    when the server proves it has none, warn when its answer says neither way."""
    probe = responses_probe(endpoint, headers, PREFLIGHT_TIMEOUT_S)
    if probe.verdict == "present":
        return
    name = str(model)
    what = (f"model {name}: inspect's {name.split('/', 1)[0]}/ provider sends its requests to "
            f"the Responses API")
    if probe.verdict == "missing":
        raise PreflightError(f"{what}, which {shown} does not serve (POST /responses: "
                             f"{probe.detail}): {responses_fix(name)}")
    logger.warning("%s; %s did not say whether it serves it (POST /responses: %s): if every "
                   "sample fails, %s", what, shown, probe.detail, responses_fix(name))
