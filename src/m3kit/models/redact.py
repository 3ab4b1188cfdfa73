"""Keep credentials out of what m3kit prints and records.

An API key reaches m3kit only through the environment (or a model argument); any message that
might quote it (a provider's error text, a URL with credentials) passes through ``redact``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "is_secret_name", "one_line", "public_base_url", "public_model_args",
           "redact", "secret_values"]

# words of an argument or variable name that mark a credential: ``api_key``, ``HF_TOKEN``,
# ``x-api-key``, ``AWS_SECRET_ACCESS_KEY``, ``sessionToken`` (but not ``max_tokens``,
# ``tokenizer`` or ``keep_alive``, which change answers and belong in the scope)
_SECRET_WORDS = frozenset({
    "apikey", "auth", "authorization", "bearer", "cookie", "credential", "credentials", "key",
    "keys", "passwd", "password", "secret", "secrets", "token",
})
_SECRET_SUFFIXES = ("apikey", "token", "secret", "password", "passwd")
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")

REDACTED = "***"
_MIN_SECRET = 6  # shorter values are too likely to be ordinary words
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s:]+(:[^/@\s]*)?@")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+")


def is_secret_name(name: str) -> bool:
    """Whether an argument or variable name looks like a credential (never hashed, logged or
    shown)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_SUFFIXES) for w in words)


def secret_values(extra: Iterable[str | None] = ()) -> list[str]:
    """Values of environment variables whose names look like credentials, plus ``extra``."""
    values = [v for k, v in os.environ.items() if is_secret_name(k)]
    values += [v for v in extra if v]
    return sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret value, URL credential and bearer token replaced."""
    for value in secret_values(extra):
        text = text.replace(value, REDACTED)
    text = _URL_CREDENTIALS.sub(f"{REDACTED}@", text)
    return _BEARER.sub(rf"\g<1>{REDACTED}", text)


def one_line(text: str, limit: int = 300, extra: Iterable[str | None] = ()) -> str:
    """``text`` redacted (``extra``: further secret values), on one line, cut to ``limit``."""
    flat = " ".join(redact(str(text), extra).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _given_secrets(name: str, value: Any, under_secret: bool = False) -> list[str]:
    """The values of credential-named arguments (at any depth; every value under one)."""
    secret = under_secret or is_secret_name(name)
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _given_secrets(str(k), v, secret)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _given_secrets(name, v, secret)]
    if not secret or value is None or isinstance(value, bool):
        return []
    return [str(value)]


def _public(name: str, value: Any, secrets: Sequence[str]) -> Any:
    if is_secret_name(name):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): _public(str(k), v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_public(name, v, secrets) for v in value]
    if isinstance(value, str):
        return redact(value, secrets)
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value), secrets)


def public_model_args(model_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """``model_args`` without credentials: values of credential-named arguments (at any depth)
    as ``***``, and those values and the environment's secrets redacted from the others (a
    key given as ``api_key`` and repeated in a header)."""
    args = model_args or {}
    secrets = [s for k, v in args.items() for s in _given_secrets(str(k), v)]
    return {str(k): _public(str(k), v, secrets) for k, v in args.items()}


def public_base_url(url: str | None) -> str | None:
    """``url`` without user info, its credential-named query values as ``***`` and any known
    secret redacted."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, REDACTED if is_secret_name(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="*")
    return redact(urlunsplit((parts.scheme, host, parts.path, query, parts.fragment)))
