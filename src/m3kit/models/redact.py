"""Keep credentials out of what m3kit prints and records.

An API key reaches m3kit only through the environment (or a model argument); any message that
might quote it (a provider's error text, a URL with credentials) passes through ``redact``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

__all__ = ["is_secret_name", "one_line", "redact", "secret_values"]

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
