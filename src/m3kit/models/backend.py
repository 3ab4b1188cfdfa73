"""The model-call backend of m3kit's construction pipelines (M3Eval question generation, M3Exam
synthesis): one request (a prompt, images) in, one text out; JSON replies read and validated.

M3Eval generated its questions with Qwen3.5-27B and M3Exam synthesised its conversations with an
LLM; m3kit lets any model do both. ``InspectBackend`` wraps an inspect-ai ``Model`` (an
OpenAI-compatible server, ``m3kit/hf``, a hosted API). A call that fails (a connection error,
HTTP 500, a reply past its ``attempt_timeout``) is retried with exponential backoff up to
``max_attempts`` in total, each retry announced (``notify``), then raises ``BackendError``;
``call_count`` counts what happened (``CallCount.describe``: the pipeline's failure summary), so a
failing server costs a pipeline about a minute and a line per retry, not minutes of silence
under inspect's unbounded retries. Anything with a ``name`` and a ``complete(request)`` method
fits ``TextBackend``; tests replay scripted replies through it. A backend that also has
``async acomplete`` is called concurrently by ``complete_async``, the others from worker
threads.

``extract_json`` reads the JSON a reply carries; ``call_json`` asks for JSON, validates it with
pydantic, retries with the problem appended to the prompt, and raises a typed error naming the
stage and the item when every try failed. ``m3kit.models.call_cache`` keeps finished calls on
disk so a killed run resumes without repeating them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, get_args, runtime_checkable

import numpy as np
from pydantic import TypeAdapter, ValidationError

from m3kit.errors import M3kitError
from m3kit.models.client import client_retries_off, provider_error
from m3kit.models.credentials import keep_credentials, request_lines_redacted
from m3kit.models.noise import inspect_hooks_noise_dropped

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, Model

__all__ = [
    "DEFAULT_CALL_ATTEMPTS",
    "DEFAULT_CALL_TIMEOUT",
    "STRUCTURED_OUTPUTS",
    "BackendError",
    "BackendRequest",
    "CallCount",
    "InspectBackend",
    "MalformedReplyError",
    "StructuredOutput",
    "TextBackend",
    "backend_name",
    "backoff_seconds",
    "call_json",
    "call_json_async",
    "both_or_stop",
    "call_text",
    "complete_async",
    "extract_json",
    "gather_or_stop",
    "reply_schema",
    "json_object_reply",
]

T = TypeVar("T")
U = TypeVar("U")

logger = logging.getLogger(__name__)

# An image a request carries: a file (sent by path) or RGB ``uint8`` pixels (a decoded frame).
Image = Path | np.ndarray

# How a JSON reply's schema reaches the server, which then decodes only text the schema admits:
# ``off`` (the prompt describes the format, nothing more); ``json_schema``: OpenAI's
# ``response_format`` of type ``json_schema`` (OpenAI, vLLM, SGLang; inspect's
# ``GenerateConfig.response_schema``); ``json_object``: ``{"type": "json_object", "schema":
# ...}``, the form llama.cpp's Python server (llama-cpp-python) turns into a grammar.
StructuredOutput = Literal["off", "json_schema", "json_object"]
STRUCTURED_OUTPUTS: tuple[StructuredOutput, ...] = get_args(StructuredOutput)

# A reply wrapped in markdown code fences: the JSON is looked for inside them first.
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
# The strict reading: the whole reply is one object, optionally inside one fence.
_WHOLE_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


class BackendError(M3kitError):
    """The model behind a backend could not be loaded or failed to answer (after inspect's own
    retries): a connection error, a rejected key, a provider error. Names the model; ``field``
    and ``record`` are the request's stage and item when it has them."""


# Attempts of one call in total, and seconds before one attempt is abandoned (a hung server).
DEFAULT_CALL_ATTEMPTS = 4
DEFAULT_CALL_TIMEOUT = 180.0
# The wait before retry k (1, 2, ...) is BACKOFF_BASE * 2**(k-1) seconds, at most BACKOFF_MAX.
BACKOFF_BASE = 2.0
BACKOFF_MAX = 30.0


def backoff_seconds(retry: int, base: float = BACKOFF_BASE, cap: float = BACKOFF_MAX) -> float:
    """The wait before retry number ``retry`` (1 for the first): ``base * 2**(retry-1)``, at
    most ``cap``."""
    return min(cap, base * 2 ** max(0, retry - 1))


@dataclass
class CallCount:
    """What a backend's calls came to: answered, retried attempts, failed calls (after every
    attempt), the failures by kind (exception type, most common first in ``describe``), the
    tokens of the answered calls (where the provider reports usage)."""

    answered: int = 0
    retried: int = 0
    failed: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    # tokens of the answered calls, where the provider reports them
    input_tokens: int = 0
    output_tokens: int = 0

    def describe(self) -> str:
        """``model calls: 12 answered, 3 retried, 1 failed (4× InternalServerError)``: every
        failed attempt counted by kind."""
        text = f"model calls: {self.answered} answered, {self.retried} retried, " \
               f"{self.failed} failed"
        if self.kinds:
            kinds = "; ".join(f"{n}× {kind}" for kind, n in self.kinds.most_common())
            text += f" (failed attempts: {kinds})"
        return text


class MalformedReplyError(M3kitError):
    """A reply stayed malformed (not JSON, not the schema, rejected by a check) after every
    retry. ``field`` is the stage, ``record`` the item."""


@dataclass(frozen=True)
class BackendRequest:
    """One model call. ``stage`` and ``item`` name it in errors and caches; ``attempt`` counts
    retries, so a cache never replays a rejected reply to a retry, and a greedy backend samples
    on a retry instead of repeating itself."""

    stage: str
    item: str
    prompt: str
    images: tuple[Image, ...] = field(default=())
    attempt: int = 0
    # the JSON schema the reply must follow (``call_json`` sets it): a backend that constrains
    # its server's decoding (``InspectBackend(structured=...)``) sends it. Not part of ``key``:
    # it follows from the stage, and the backend's settings say whether it was sent.
    schema: Mapping[str, Any] | None = field(default=None, compare=False)

    def key(self) -> str:
        """The hash of everything that makes the request (images by path or by pixels)."""
        digest = hashlib.sha256()
        for part in (self.stage, self.item, str(self.attempt), self.prompt):
            digest.update(part.encode("utf-8"))
            digest.update(b"\0")
        for image in self.images:
            if isinstance(image, np.ndarray):
                digest.update(f"{image.shape}|{image.dtype}".encode())
                digest.update(np.ascontiguousarray(image).tobytes())
            else:
                digest.update(str(image).encode("utf-8"))
            digest.update(b"\0")
        return digest.hexdigest()

    def retry(self, prompt: str, attempt: int) -> BackendRequest:
        """The same request, asked again with ``prompt`` as try number ``attempt``."""
        return BackendRequest(self.stage, self.item, prompt, self.images, attempt, self.schema)


@runtime_checkable
class TextBackend(Protocol):
    """Anything that turns a request into text; ``name`` is the model, as caches key it."""

    name: str

    def complete(self, request: BackendRequest) -> str: ...


class InspectBackend:
    """An inspect-ai model as a ``TextBackend``.

    ``model`` is a model name (``openai-api/vllm/Qwen/...``, ``m3kit/hf/<path>``,
    ``mockllm/model``) or a ``Model``; ``model_args`` (and further keywords) go to
    ``get_model``. ``config`` is the generate config of every call (``None``: the provider's
    defaults). With ``seed``, calls are greedy (temperature 0) and seeded, so a backend that
    honours both is deterministic; a retry (``attempt`` > 0) then samples at
    ``retry_temperature`` with ``seed + attempt``: still reproducible, no longer stuck on the
    answer it gave. ``max_tokens`` caps each reply. One event loop serves every synchronous
    call: providers keep async HTTP clients bound to the loop they were first used on.

    A call is tried ``max_attempts`` times in total, each attempt abandoned after
    ``attempt_timeout`` seconds, with ``backoff_seconds`` between attempts (from
    ``backoff_base`` seconds, doubling; inspect's own
    retries are off, so an attempt is one request); ``notify`` receives one line per retry
    (default: a logged warning). ``call_count`` counts every call's outcome.
    """

    def __init__(
        self,
        model: Model | str,
        *,
        config: GenerateConfig | None = None,
        seed: int | None = None,
        max_tokens: int | None = None,
        retry_temperature: float = 0.7,
        max_attempts: int = DEFAULT_CALL_ATTEMPTS,
        attempt_timeout: float | None = DEFAULT_CALL_TIMEOUT,
        backoff_base: float = BACKOFF_BASE,
        notify: Callable[[str], None] | None = None,
        model_args: Mapping[str, Any] | None = None,
        structured: StructuredOutput = "off",
        **more_model_args: Any,
    ) -> None:
        from inspect_ai.model import GenerateConfig, Model, get_model

        if max_attempts < 1:
            raise M3kitError(f"max_attempts counts attempts in total and must be at least 1, "
                             f"got {max_attempts}", field="max_attempts")
        if attempt_timeout is not None and attempt_timeout <= 0:
            raise M3kitError(f"attempt_timeout must be > 0 seconds, got {attempt_timeout}",
                             field="attempt_timeout")

        if isinstance(model, Model):
            self.model = model
        else:
            try:
                self.model = get_model(model, **{**(model_args or {}), **more_model_args})
            except Exception as exc:  # noqa: BLE001 (unknown provider, missing key: one line)
                raise BackendError(f"cannot load the model: {_one_line(exc)}",
                                   record=str(model), field="backend") from None
        # the SDK client's own retries would multiply the attempts, silently (models.client)
        client_retries_off(self.model)
        # no credential in its replies, errors or what inspect records (models.credentials)
        keep_credentials(self.model)
        base = config if config is not None else GenerateConfig()
        update: dict[str, Any] = {}
        if seed is not None:
            update.update(temperature=0.0, seed=seed)
        if max_tokens is not None:
            update["max_tokens"] = max_tokens
        # m3kit retries (below), so each of inspect's calls is one request
        update["max_retries"] = 0
        self.config: GenerateConfig = base.model_copy(update=update)
        self.retry_temperature = retry_temperature
        self.max_attempts = max_attempts
        self.attempt_timeout = attempt_timeout
        self.backoff_base = backoff_base
        self.notify = notify if notify is not None else logger.warning
        self.call_count = CallCount()
        self._greedy = seed is not None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.name = str(self.model)
        if structured not in STRUCTURED_OUTPUTS:
            raise M3kitError(f"structured output is one of {', '.join(STRUCTURED_OUTPUTS)}, "
                             f"got {structured!r}", field="structured")
        self.structured = structured

    def settings(self) -> dict[str, Any]:
        """What besides the prompt decides a reply: the generate config and how replies are
        constrained (for cache keys; ``max_retries``, how failures are handled, is not part of
        it)."""
        settings = self.config.model_dump(mode="json", exclude_none=True)
        settings.pop("max_retries", None)
        if self.structured != "off":
            settings["structured"] = self.structured
        return settings

    def _constrained(self, config: GenerateConfig, request: BackendRequest) -> GenerateConfig:
        """``config`` carrying the request's reply schema as ``structured`` says."""
        from inspect_ai.model import ResponseSchema
        from inspect_ai.util import JSONSchema

        if request.schema is None or self.structured == "off":
            return config
        if self.structured == "json_schema":
            return config.model_copy(update={"response_schema": ResponseSchema(
                name=re.sub(r"[^A-Za-z0-9_-]", "_", request.stage) or "reply",
                json_schema=JSONSchema.model_validate(request.schema))})
        body = {**(config.extra_body or {}),
                "response_format": {"type": "json_object", "schema": dict(request.schema)}}
        return config.model_copy(update={"extra_body": body})

    def complete(self, request: BackendRequest) -> str:
        if self._loop is None or self._loop.is_closed():
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(self.acomplete(request))

    async def acomplete(self, request: BackendRequest) -> str:
        """The completion on the running event loop (what concurrent pipelines await)."""
        from inspect_ai.model import ChatMessageUser, ContentImage, ContentText

        from m3kit.models.content import image_content

        content: list[Any] = [ContentText(text=request.prompt)]
        for image in request.images:
            content.append(image_content(image) if isinstance(image, np.ndarray)
                           else ContentImage(image=str(image)))
        message = ChatMessageUser(content=content if request.images else request.prompt)
        config = self.config
        if request.attempt and self._greedy:
            # a greedy model answers an unchanged prompt the same way every time
            config = config.model_copy(update={"temperature": self.retry_temperature,
                                               "seed": (config.seed or 0) + request.attempt})
        config = self._constrained(config, request)
        for attempt in range(1, self.max_attempts + 1):
            try:
                with inspect_hooks_noise_dropped(), request_lines_redacted():
                    output = await asyncio.wait_for(
                        self.model.generate([message], config=config),
                        timeout=self.attempt_timeout)
            except M3kitError:
                raise
            except Exception as raised:  # noqa: BLE001 (retried, then one typed line)
                exc = provider_error(raised)
                if isinstance(exc, TimeoutError):
                    exc = TimeoutError(f"no reply within {self.attempt_timeout:g} s")
                kind = type(exc).__name__
                self.call_count.kinds[kind] += 1
                if attempt == self.max_attempts:
                    self.call_count.failed += 1
                    raise _call_error(self.model, exc, request, attempts=attempt) from None
                wait = backoff_seconds(attempt, self.backoff_base)
                self.call_count.retried += 1
                where = f"{request.stage} {request.item}".strip()
                self.notify(f"model {self.model}: {kind} on {where or 'a call'} (attempt "
                            f"{attempt} of {self.max_attempts}), retrying in {wait:g} s")
                await asyncio.sleep(wait)
                continue
            if output.error:
                self.call_count.failed += 1
                raise BackendError(f"model {self.model}: {_one_line(output.error)}",
                                   record=request.item or None, field=request.stage or None)
            self.call_count.answered += 1
            if output.usage is not None:
                self.call_count.input_tokens += output.usage.input_tokens
                self.call_count.output_tokens += output.usage.output_tokens
            return output.completion
        raise AssertionError("unreachable: the last attempt returns or raises")

    def close(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()


def _one_line(detail: object) -> str:
    from m3kit.models.redact import one_line

    return one_line(str(detail))


def _call_error(model: object, exc: BaseException, request: BackendRequest,
                attempts: int = 1) -> BackendError:
    detail = _one_line(exc)
    kind = type(exc).__name__
    tries = f" (after {attempts} attempts)" if attempts > 1 else ""
    text = f"model {model}: {kind}: {detail}" if detail else f"model {model}: {kind}"
    return BackendError(text + tries, record=request.item or None, field=request.stage or None)


def backend_name(backend: TextBackend) -> str:
    """The model behind a backend, as caches key it."""
    return str(getattr(backend, "name", None) or type(backend).__qualname__)


async def gather_or_stop(*calls: Awaitable[T]) -> list[T]:
    """Await ``calls`` concurrently and return their results in order, as ``asyncio.gather``;
    the first one that raises cancels every other before its error is raised (as itself, not
    in an ``ExceptionGroup``). A construction run that stops at a failed call then sends no
    further request, and its call summary counts only what happened before the stop, however
    busy the machine (``asyncio.gather`` left the others running until the event loop ended)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_awaited(call)) for call in calls]
    except BaseExceptionGroup as failed:
        first: BaseException = failed
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise first from None
    return [task.result() for task in tasks]


async def both_or_stop(first: Awaitable[T], second: Awaitable[U]) -> tuple[T, U]:
    """``gather_or_stop`` of two calls whose results differ in type."""
    results: list[Any] = await gather_or_stop(first, second)
    return results[0], results[1]


async def _awaited(call: Awaitable[T]) -> T:
    return await call


async def complete_async(backend: TextBackend, request: BackendRequest) -> str:
    """``backend``'s completion without blocking the event loop."""
    acomplete = getattr(backend, "acomplete", None)
    if acomplete is not None:
        return await acomplete(request)
    return await asyncio.to_thread(backend.complete, request)


def extract_json(text: str, *, strict: bool = False) -> Any:
    """The JSON a reply carries, else ``ValueError`` saying why.

    Lenient (the default): the first JSON object or array, inside a markdown fence if there is
    one, else from the first ``{`` or ``[``: models wrap JSON in prose and fences. ``strict``:
    the whole reply must be one JSON object, optionally inside one fence (for prompts that ask
    for the object and nothing else, where any other text marks a malformed reply).
    """
    if strict:
        body = text.strip()
        fenced = _WHOLE_FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not one JSON object ({exc.msg})") from None
        if not isinstance(value, dict):
            raise ValueError("the JSON is not an object")
        return value
    candidates = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    decoder = json.JSONDecoder()
    last_error = "no JSON object or array found"
    for candidate in candidates:
        for start, char in enumerate(candidate):
            if char in "[{":
                try:
                    value, _ = decoder.raw_decode(candidate, start)
                    return value
                except json.JSONDecodeError as exc:
                    last_error = f"invalid JSON: {exc.msg} at char {exc.pos}"
                    break
    raise ValueError(last_error)


def json_object_reply(
    text: str,
    error: type[M3kitError],
    *,
    path: str | Path | None = None,
    record: str | int | None = None,
) -> dict[str, Any]:
    """The one JSON object a reply must be (``extract_json`` strict), else ``error`` naming
    ``path`` and ``record``."""
    try:
        return extract_json(text, strict=True)
    except ValueError as exc:
        raise error(str(exc), path=path, record=record) from None


def _validated(adapter: TypeAdapter[T], text: str, check: Callable[[T], None] | None) -> T:
    """The reply's JSON validated and ``check``-ed, else ``ValueError`` naming the problem."""
    try:
        value = adapter.validate_python(extract_json(text))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "value"
        raise ValueError(f"{where}: {first['msg']}") from None
    if check is not None:
        check(value)
    return value


def reply_schema(adapter: TypeAdapter[Any]) -> dict[str, Any]:
    """The JSON schema a reply of ``adapter``'s type follows, every property of every object
    required in declared order: a server that decodes by the schema then writes each field,
    reasons before what they justify, instead of stopping at the ones without a default."""
    raw = adapter.json_schema()
    defs = raw.pop("$defs", {})

    def strict(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                # inlined: inspect's ``JSONSchema`` (the json_schema path) drops ``$defs``
                return strict(defs[ref.removeprefix("#/$defs/")])
            node = {k: strict(v) for k, v in node.items()}
            if isinstance(node.get("properties"), dict):
                node["required"] = list(node["properties"])
            return node
        if isinstance(node, list):
            return [strict(v) for v in node]
        return node

    schema: dict[str, Any] = strict(raw)
    return schema


def _retry_prompt(request: BackendRequest, problem: str) -> str:
    return (f"{request.prompt}\n\nYour previous answer was rejected ({problem}). "
            "Answer again with valid JSON only, following the format exactly.")


def call_json(
    backend: TextBackend,
    request: BackendRequest,
    schema: type[T],
    *,
    retries: int = 2,
    check: Callable[[T], None] | None = None,
    error: type[M3kitError] = MalformedReplyError,
    reply_format: Mapping[str, Any] | None = None,
) -> T:
    """Ask for JSON matching ``schema`` (a pydantic model or type); retry with the problem.

    ``check`` adds the caller's own rules: it raises ``ValueError`` to reject. After
    ``retries`` extra tries, ``error`` names the stage, the item and the last problem.
    ``reply_format``: the JSON schema sent to a constraining server instead of the one
    ``schema`` gives (``reply_schema``), e.g. with a field narrowed to the values that exist.
    """
    adapter: TypeAdapter[T] = TypeAdapter(schema)
    request = replace(request, schema=reply_format or reply_schema(adapter))
    prompt, problem = request.prompt, ""
    for attempt in range(retries + 1):
        try:
            return _validated(adapter, backend.complete(request.retry(prompt, attempt)), check)
        except ValueError as exc:
            problem = str(exc)
        prompt = _retry_prompt(request, problem)
    raise error(f"malformed backend output after {retries + 1} tries: {problem}",
                record=request.item, field=request.stage)


async def call_json_async(
    backend: TextBackend,
    request: BackendRequest,
    schema: type[T],
    *,
    retries: int = 2,
    check: Callable[[T], None] | None = None,
    error: type[M3kitError] = MalformedReplyError,
    reply_format: Mapping[str, Any] | None = None,
) -> T:
    """``call_json`` on the running event loop (``complete_async``): concurrent pipelines."""
    adapter: TypeAdapter[T] = TypeAdapter(schema)
    request = replace(request, schema=reply_format or reply_schema(adapter))
    prompt, problem = request.prompt, ""
    for attempt in range(retries + 1):
        text = await complete_async(backend, request.retry(prompt, attempt))
        try:
            return _validated(adapter, text, check)
        except ValueError as exc:
            problem = str(exc)
        prompt = _retry_prompt(request, problem)
    raise error(f"malformed backend output after {retries + 1} tries: {problem}",
                record=request.item, field=request.stage)


def call_text(
    backend: TextBackend,
    request: BackendRequest,
    *,
    retries: int = 2,
    min_chars: int = 1,
    error: type[M3kitError] = MalformedReplyError,
) -> str:
    """Ask for free text; an empty or too-short reply is retried, then ``error``."""
    for attempt in range(retries + 1):
        text = backend.complete(request.retry(request.prompt, attempt)).strip()
        if len(text) >= min_chars:
            return text
    raise error(f"empty backend output after {retries + 1} tries", record=request.item,
                field=request.stage)
