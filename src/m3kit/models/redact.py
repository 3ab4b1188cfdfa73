"""Keep credentials out of what m3kit prints and records.

An API key reaches m3kit only through the environment (or a model argument); any message that
might quote it (a provider's error text, a URL with credentials) passes through ``redact``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
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


def _public(name: str, value: Any) -> Any:
    if is_secret_name(name):
        return REDACTED
    if isinstance(value, Mapping):
        return {str(k): _public(str(k), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_public(name, v) for v in value]
    if isinstance(value, str):
        return redact(value)
    if value is None or isinstance(value, bool | int | float):
        return value
    return redact(str(value))


def public_model_args(model_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """``model_args`` without credentials: values of credential-named arguments (at any depth)
    as ``***``, secrets of the environment redacted from the others."""
    return {str(k): _public(str(k), v) for k, v in (model_args or {}).items()}


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
