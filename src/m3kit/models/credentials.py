"""A model's credentials kept to its connection: never in what inspect records of it.

inspect writes a model's ``explicit_base_url`` and ``model_args`` into every eval log's header
and journal, and whatever its provider returns (the reply, the raw call, the error) into the
log's events, the sample's messages and output, the response cache and its trace file. A key
can reach each: ``-M base_url=http://user:password@host/v1?sig=…``, a credential-named model
argument, or a server that quotes the ``Authorization`` header it was sent (in its reply, or in
a 500's error text).

``keep_credentials`` makes a constructed model safe to record: its recorded base URL and
arguments become the public ones (``m3kit.models.redact``), while its provider keeps the real
ones to connect with; and every secret value the model uses (``model_secrets``) is taken out of
what its provider returns or raises, before inspect sees it. ``serve_on_retry``: a resumed run
(inspect's ``eval_retry``) rebuilds its model from the log header, where the credentials no
longer are; the live model is handed to it instead.
"""

from __future__ import annotations

import functools
import json
import logging
from contextlib import AbstractContextManager, suppress
from typing import TYPE_CHECKING, Any

from m3kit.models.noise import inspect_hooks_filtered
from m3kit.models.redact import model_secrets, public_base_url, public_model_args, redact, scrub

if TYPE_CHECKING:
    from inspect_ai.log import EvalSpec
    from inspect_ai.model import Model

__all__ = ["keep_credentials", "request_lines_redacted", "scrub_exception", "scrub_record",
           "serve_on_retry"]

# set on a provider whose replies are already scrubbed (a model is guarded once)
_GUARDED = "_m3kit_credentials_kept"
# attributes of a provider's exception that inspect records (``message``: its event's error;
# ``body``: the call's response)
_RECORDED_ATTRS = ("message", "body")


def keep_credentials(model: Model) -> Model:
    """``model`` (changed in place, and returned) recorded without credentials: its recorded
    base URL and arguments public, its provider's replies and errors scrubbed of every secret
    it uses. A model already guarded is returned as it is."""
    api = model.api
    if getattr(api, _GUARDED, False):
        return model
    secrets = model_secrets(model.model_args, [getattr(api, "base_url", None),
                                               model.explicit_base_url],
                            [getattr(api, "api_key", None)])
    # what inspect writes into the log header (``EvalSpec.model_base_url``, ``model_args``);
    # the provider was built from the real ones and keeps them
    model._explicit_base_url = public_base_url(model.explicit_base_url)
    model.model_args = _public_args(model.model_args, secrets)
    generate = api.generate

    @functools.wraps(generate)
    async def scrubbed_generate(*args: Any, **kwargs: Any) -> Any:
        try:
            result = await generate(*args, **kwargs)
        except Exception as exc:
            scrub_exception(exc, secrets)
            raise
        if isinstance(result, tuple):
            return tuple(scrub_exception(part, secrets) if isinstance(part, BaseException)
                         else scrub_record(part, secrets) for part in result)
        return scrub_record(result, secrets)

    # wrapped on this one provider instance, not its class: mypy refuses any method assignment
    api.generate = scrubbed_generate  # type: ignore[method-assign]
    setattr(api, _GUARDED, True)
    return model


def _public_args(model_args: dict[str, Any], secrets: list[str]) -> dict[str, Any]:
    """``model_args`` as ``public_model_args`` has them, ``secrets`` scrubbed too; objects
    (an ``http_client``) kept as they are."""
    public = scrub(public_model_args(model_args), secrets)
    return {k: public[k] if _plain(v) else v for k, v in model_args.items()}


def _plain(value: Any) -> bool:
    """Whether ``value`` is data (text, numbers, mappings and lists of them), not an object."""
    if value is None or isinstance(value, str | bool | int | float):
        return True
    if isinstance(value, dict):
        return all(_plain(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_plain(v) for v in value)
    return False


def scrub_record(record: Any, secrets: list[str]) -> Any:
    """``record`` (a pydantic model such as inspect's ``ModelOutput`` or ``ModelCall``, or
    ``None``) with each of ``secrets`` replaced in its text fields, at any depth, in place.
    Untouched (and not walked) when its JSON holds none of them."""
    from pydantic import BaseModel

    if not isinstance(record, BaseModel) or not secrets:
        return record
    text = record.model_dump_json()
    if not any(s in text or json.dumps(s)[1:-1] in text for s in secrets):
        return record
    _scrub_fields(record, secrets)
    return record


def _scrub_fields(value: Any, secrets: list[str]) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            current = getattr(value, name, None)
            cleaned = _scrub_fields(current, secrets)
            if cleaned is not current:
                object.__setattr__(value, name, cleaned)
        return value
    if isinstance(value, list):
        value[:] = [_scrub_fields(v, secrets) for v in value]
        return value
    if isinstance(value, dict):
        for key in list(value):
            value[key] = _scrub_fields(value[key], secrets)
        return value
    if isinstance(value, str | tuple):
        cleaned = scrub(value, secrets)
        return value if cleaned == value else cleaned
    return value


def scrub_exception(exc: BaseException, secrets: list[str]) -> BaseException:
    """``exc`` and the exceptions it was raised from, each with ``secrets`` replaced in its
    arguments and in what inspect records of it (``message``, ``body``), in place: the type
    stays (inspect's retry decisions and m3kit's failure kinds read it)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        current.args = scrub(tuple(current.args), secrets)
        for name in _RECORDED_ATTRS:
            value = getattr(current, name, None)
            if isinstance(value, str | dict | list):
                with suppress(AttributeError):  # a read-only property
                    setattr(current, name, scrub(value, secrets))
        current = current.__cause__ or current.__context__
    return exc


def serve_on_retry(model: Model, spec: EvalSpec) -> None:
    """Have inspect's ``eval_retry`` of the log whose header is ``spec`` run ``model``.

    ``eval_retry`` rebuilds its model from the header (``get_model`` with the header's model,
    config, base URL and arguments, memoized): with credentials kept out of the header, that
    model would connect without them and record its replies unscrubbed. The same memoized
    ``get_model`` call is made here first, and the model it returns takes ``model``'s provider
    (which connects with the real URL and scrubs its replies); eval_retry's lookup then finds
    it. The header's config, base URL and arguments stay that model's own, so the resumed log
    records them as the first run did."""
    from inspect_ai.model import get_model

    stand_in = get_model(spec.model, config=spec.model_generate_config,
                         base_url=spec.model_base_url, **dict(spec.model_args or {}))
    if stand_in is not model:
        stand_in.api = model.api


class _RedactRequestLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        return True


def request_lines_redacted() -> AbstractContextManager[None]:
    """While the block runs, the request lines inspect's HTTP hooks log (and its trace file
    keeps) carry no URL credential or known secret."""
    return inspect_hooks_filtered(_RedactRequestLine())
