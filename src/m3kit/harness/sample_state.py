"""The steps every m3kit solver shares around one sample: time a step, ask the model (retrying
unreadable replies), ask a memory, record what happened, or mark the sample failed.

A sample's outcome lives in its metadata as a ``SampleRecord`` (``RECORD_KEY``): frames, usage,
timings and, for a failed sample, the reason. A failed sample gets an empty output carrying the
reason as its error; the run goes on and the scorer counts it wrong. Limits and sample
termination are inspect's business and pass through untouched (``passes_through``).

One failure stops the run instead: a model server that went away. A model call whose attempts
all found the connection refused or reset is followed by ``REFUSAL_PROBES`` probes of the
endpoint (``stop_if_endpoint_down``); refused every time, the sample raises
``EndpointDownError``. inspect then ends the eval at that sample's error (its default
``fail_on_error``), keeps every finished sample in the log and leaves the refused ones unfinished,
so ``--resume`` against the restarted server runs exactly those.

The solvers of ``m3kit.harness.solvers`` and the benchmarks' own build their messages and call
these for everything after.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import anyio

from m3kit.errors import M3kitError
from m3kit.harness.defaults import (
    REFUSAL_PROBE_INTERVAL_S,
    REFUSAL_PROBE_TIMEOUT_S,
    REFUSAL_PROBES,
)
from m3kit.harness.endpoint import (
    EndpointDownError,
    endpoint_refuses,
    is_refusal,
    model_endpoint,
    refused_url,
)
from m3kit.harness.responses_api import responses_api_hint
from m3kit.models.client import provider_error
from m3kit.models.redact import one_line, public_base_url
from m3kit.schema import Usage
from m3kit.schema.evallog import RECORD_KEY, SampleRecord

if TYPE_CHECKING:
    from inspect_ai.solver import Generate, TaskState

    from m3kit.memory.base import Memory, MemoryAnswer

__all__ = [
    "GARBAGE_BACKOFF_S",
    "GARBAGE_RETRIES",
    "answer_from_memory",
    "fail",
    "failure_reason",
    "generate_answer",
    "generate_with_garbage_retries",
    "output_usage",
    "passes_through",
    "resolve_memory",
    "save",
    "stop_if_endpoint_down",
    "timed",
]

T = TypeVar("T")

GARBAGE_RETRIES = 2  # unreadable replies: retried this many times, with exponential backoff
GARBAGE_BACKOFF_S = 1.0


def passes_through(exc: BaseException) -> bool:
    """Exceptions inspect handles itself (limits, sample termination): never a 'failed' answer."""
    from inspect_ai.util import LimitExceededError

    if isinstance(exc, LimitExceededError):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & {"TerminateSampleError", "TerminateTaskError"})


def failure_reason(exc: BaseException) -> str:
    """``Type: message`` of the exception behind ``exc``, on one line and redacted."""
    cause = provider_error(exc)
    message = str(cause) or "no message"
    return one_line(f"{type(cause).__name__}: {message}")


async def stop_if_endpoint_down(exc: BaseException) -> None:
    """Raise ``EndpointDownError`` when ``exc`` is a refused or reset connection and the server
    it was sent to refuses ``REFUSAL_PROBES`` probes in a row too (see the module doc); return
    when it is another failure, no server is known, or something answers.

    The server probed is the one the failed request went to (a memory's reranker or captioner
    may have a server of its own), else the model under evaluation's."""
    if not is_refusal(exc):
        return
    from inspect_ai.model import get_model

    endpoint = model_endpoint(get_model())
    url = refused_url(exc) or (endpoint.rstrip("/") + "/models" if endpoint else None)
    if url is None:
        return
    down = await anyio.to_thread.run_sync(lambda: endpoint_refuses(
        url, REFUSAL_PROBES, REFUSAL_PROBE_INTERVAL_S, REFUSAL_PROBE_TIMEOUT_S))
    if down:
        target = urlsplit(url)
        # named as the user gave it when it is the model's server, else by its origin
        shown = public_base_url(
            endpoint.rstrip("/") if endpoint and urlsplit(endpoint).netloc == target.netloc
            else f"{target.scheme}://{target.netloc}")
        raise EndpointDownError(
            f"the model server at {shown} is down: a request failed ({failure_reason(exc)}) "
            f"and {REFUSAL_PROBES} more connections {REFUSAL_PROBE_INTERVAL_S:g} s apart were "
            "refused: restart the server; the finished samples are kept")


def _is_garbage(exc: BaseException) -> bool:
    """A reply that arrived but could not be read (not JSON, not a completion). inspect retries
    rate limits, server errors, timeouts and dropped connections, but not these."""
    cause = provider_error(exc)
    names = {cls.__name__ for cls in type(cause).__mro__}
    return isinstance(cause, json.JSONDecodeError) or bool(
        names & {"APIResponseValidationError"}
    )


async def generate_with_garbage_retries(
    state: TaskState, generate: Generate, cache: Any
) -> TaskState:
    """``generate``, retried ``GARBAGE_RETRIES`` times when the reply cannot be read."""
    for attempt in range(GARBAGE_RETRIES + 1):
        try:
            return await generate(state, cache=cache)
        except Exception as exc:
            if attempt == GARBAGE_RETRIES or not _is_garbage(exc):
                raise
            await anyio.sleep(GARBAGE_BACKOFF_S * 2**attempt)
    raise AssertionError("unreachable")


async def timed(record: SampleRecord, name: str, work: Awaitable[T]) -> T:
    """Await ``work``, adding its wall time to ``record.seconds[name]`` (also when it fails)."""
    start = time.perf_counter()
    try:
        return await work
    finally:
        record.seconds[name] = round(record.seconds.get(name, 0.0) + time.perf_counter() - start, 6)


def save(state: TaskState, record: SampleRecord,
         extra: Mapping[str, Any] | None = None) -> TaskState:
    """Store ``record`` (and a benchmark's ``extra`` metadata entries) in the sample."""
    state.metadata[RECORD_KEY] = record.model_dump(mode="json")
    state.metadata.update(extra or {})
    return state


def fail(state: TaskState, record: SampleRecord, reason: str,
         extra: Mapping[str, Any] | None = None) -> TaskState:
    """Mark the sample failed: an empty output whose error is ``reason``, recorded."""
    from inspect_ai.model import ModelOutput

    record.failure = one_line(reason)
    state.output = ModelOutput.from_content(model=str(state.model), content="", error=reason)
    return save(state, record, extra)


def output_usage(output: Any, images: int) -> Usage:
    """What the model call cost, from inspect's ``ModelOutput`` (``None``: nothing known)."""
    usage = output.usage if output is not None else None
    if usage is None:
        return Usage(images_sent=images)
    # inspect's input_tokens leaves out cached tokens; the prompt's size includes them
    prompt = (usage.input_tokens + (usage.input_tokens_cache_read or 0)
              + (usage.input_tokens_cache_write or 0))
    return Usage(prompt_tokens=prompt, completion_tokens=usage.output_tokens or 0,
                 images_sent=images)


async def generate_answer(
    state: TaskState,
    generate: Generate,
    record: SampleRecord,
    *,
    cache: Any,
    images: int,
    extra: Mapping[str, Any] | None = None,
) -> TaskState:
    """Send ``state.messages`` to the model under evaluation (``cache``: inspect's cache policy
    or ``False``), timed as ``answer``; record usage with ``images`` sent, or fail the sample."""
    try:
        state = await timed(record, "answer", generate_with_garbage_retries(
            state, generate, cache
        ))
    except Exception as exc:
        if passes_through(exc):
            raise
        await stop_if_endpoint_down(exc)
        return fail(state, record, _with_hint(f"model: {failure_reason(exc)}"), extra)
    if state.output is not None and state.output.error:
        return fail(state, record, _with_hint(f"model: {one_line(state.output.error)}"), extra)
    record.usage = output_usage(state.output, images)
    return save(state, record, extra)


def _with_hint(reason: str) -> str:
    """``reason``, led by the fix where it is the Responses API riddle
    (``m3kit.harness.responses_api``: ``openai/<name>`` against a chat-completions server):
    ``model: TypeError: <fix> ('NoneType' object is not iterable)``, so the fix survives the
    cut of a long reason and failures count under ``model: TypeError`` as before."""
    from inspect_ai.model import get_model

    hint = responses_api_hint(get_model(), reason)
    if not hint:
        return reason
    parts = reason.split(": ", 2)
    if len(parts) < 3:
        return f"{reason}: {hint}"
    step, kind, detail = parts
    return f"{step}: {kind}: {hint} ({detail})"


async def answer_from_memory(
    state: TaskState,
    record: SampleRecord,
    memory: Memory,
    key: str,
    prompt: str,
    *,
    query: str,
    time: float | None,
    cache: Any,
    extra: dict[str, Any] | None = None,
) -> tuple[TaskState, MemoryAnswer | None]:
    """Have ``memory`` answer ``prompt`` about ``key`` with the model under evaluation; ``query``
    is the bare question (what the memory retrieves with, not the whole instruction prompt).
    Timed as ``answer``; the reply becomes the sample's output, or the sample fails. Returns the
    memory's answer (``None`` when it raised) so a benchmark can record more of it."""
    from inspect_ai.model import ChatMessageAssistant, ModelOutput, get_model

    model = get_model()
    try:
        result = await timed(record, "answer", memory.answer(
            key, prompt, model, time=time, cache=cache, query=query,
        ))
    except Exception as exc:
        if passes_through(exc):
            raise
        await stop_if_endpoint_down(exc)
        return fail(state, record, f"memory answer: {failure_reason(exc)}", extra), None
    record.usage = result.usage
    if result.error:
        return fail(state, record, f"memory answer: {one_line(result.error)}", extra), result
    state.output = ModelOutput.from_content(model=model.name, content=result.output)
    state.messages.append(ChatMessageAssistant(content=result.output))
    return save(state, record, extra), result


def resolve_memory(memory: str | Memory, config: dict[str, Any] | None, *,
                   none_hint: str, error: type[M3kitError] = M3kitError) -> Memory:
    """A ``Memory`` as given, or made by name with ``config`` (``m3kit.memory.registry``);
    an unknown name, bad settings or ``none`` (``none_hint`` says what to use instead) raise
    ``error`` naming the ``memory`` field."""
    if not isinstance(memory, str):
        return memory
    from m3kit.memory.registry import make_memory

    try:
        made = make_memory(memory, **(config or {}))
    except (ValueError, TypeError) as exc:  # unknown name, bad settings
        raise error(one_line(str(exc)), field="memory") from None
    if made is None:
        raise error(f"memory 'none' is no memory: {none_hint}", field="memory")
    return made
