"""Keep credentials out of what m3kit prints and records.

A credential reaches m3kit through the environment (``OPENAI_API_KEY``, ``HF_TOKEN``...), a
model argument (``-M api_key=…``, a header), or a URL (``user:password@``, a signed query such
as ``?sig=…``). Any message that might quote one (a provider's error text, a URL) passes through
``redact`` (known values and the shapes of credentials); what a model returns passes through
``scrub`` with the values its run used (``model_secrets``: patterns would mangle answers). The
query parameters that carry a credential are named here once (``is_secret_query``).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlencode, urlsplit, urlunsplit

__all__ = ["REDACTED", "is_secret_name", "is_secret_query", "model_secrets", "one_line",
           "public_base_url", "public_model_args", "redact", "scrub", "secret_values",
           "url_secrets"]

# words of an argument or variable name that mark a credential: ``api_key``, ``HF_TOKEN``,
# ``x-api-key``, ``AWS_SECRET_ACCESS_KEY``, ``sessionToken`` (but not ``max_tokens``,
# ``tokenizer`` or ``keep_alive``, which change answers and belong in the scope)
_SECRET_WORDS = frozenset({
    "apikey", "auth", "authorization", "bearer", "cookie", "credential", "credentials", "key",
    "keys", "passwd", "password", "secret", "secrets", "token",
})
_SECRET_SUFFIXES = ("apikey", "token", "secret", "password", "passwd")
# words of a URL query parameter's name that mark a credential besides those: the signature of
# a signed URL (Azure SAS ``sig``, ``X-Amz-Signature``, ``X-Goog-Signature``, Service Bus's
# ``SharedAccessSignature``), an OAuth ``code``, ``pass``/``pwd``. ``is_secret_name`` already
# covers ``token``, ``key``, ``api-key``, ``access_token``, ``client_secret``, ``auth`` and
# ``X-Amz-Credential`` / ``X-Amz-Security-Token`` / ``X-Goog-Credential``. The rest of a signed
# URL says what it grants, not who may (``sv``, ``se``, ``sp``, ``sr``, ``X-Amz-Date``,
# ``X-Amz-Expires``, ``X-Amz-SignedHeaders``): kept.
_QUERY_SECRET_WORDS = frozenset({"sig", "signature", "code", "pass", "pwd"})
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")

REDACTED = "***"
_MIN_SECRET = 6  # shorter values are too likely to be ordinary words
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s:]+(:[^/@\s]*)?@")
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+")
# HTTP basic credentials: ``Basic <base64 of user:password>``
_BASIC = re.compile(r"(?i)(\bbasic\s+)([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")
# one ``name=value`` of a URL query in running text
_QUERY_PAIR = re.compile(r"(?<=[?&])([A-Za-z0-9_.~%-]+)=([^&#\s\"'<>]*)")


def is_secret_name(name: str) -> bool:
    """Whether an argument or variable name looks like a credential (never hashed, logged or
    shown)."""
    words = [w.lower() for w in _WORDS.findall(name)]
    return any(w in _SECRET_WORDS or w.endswith(_SECRET_SUFFIXES) for w in words)


def is_secret_query(name: str) -> bool:
    """Whether a URL query parameter's name marks a credential (``token``, ``key``, ``sig``,
    ``X-Amz-Signature``...: see ``_QUERY_SECRET_WORDS``)."""
    name = unquote_plus(name)
    words = [w.lower() for w in _WORDS.findall(name)]
    return is_secret_name(name) or any(w in _QUERY_SECRET_WORDS for w in words)


def secret_values(extra: Iterable[str | None] = ()) -> list[str]:
    """Values of environment variables whose names look like credentials, plus ``extra``
    (values under 6 characters left out: too likely ordinary words), longest first."""
    values = [v for k, v in os.environ.items() if is_secret_name(k)]
    values += [v for v in extra if v]
    return sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)


def url_secrets(url: str | None) -> list[str]:
    """The credentials ``url`` carries, as they may be quoted: the password of its user info
    (raw and decoded), ``user:password`` and its base64 (what HTTP basic auth sends), and the
    values of its credential query parameters (``is_secret_query``; raw and decoded)."""
    if not url:
        return []
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        raw_user, _, raw_password = parts.netloc.rsplit("@", 1)[0].partition(":")
        user, password = unquote(raw_user), unquote(raw_password)
        found += [raw_password, password]
        if password or user:
            pair = f"{user}:{password}"
            found += [pair, base64.b64encode(pair.encode("utf-8")).decode("ascii")]
    for pair in parts.query.split("&"):
        name, _, value = pair.partition("=")
        if value and is_secret_query(name):
            found += [value, unquote_plus(value)]
    return [v for v in dict.fromkeys(found) if v]


def model_secrets(model_args: Mapping[str, Any] | None = None,
                  urls: Iterable[str | None] = (),
                  keys: Iterable[str | None] = ()) -> list[str]:
    """Every secret value a model's run uses, for redaction by value (``secret_values``): the
    environment's credentials, ``keys`` (the API key it resolved), the values of its
    credential-named arguments (at any depth) and the credentials of ``urls`` (its base URL)
    and of any URL among its arguments' values."""
    args = dict(model_args or {})
    given = [s for k, v in args.items() for s in _given_secrets(str(k), v)]
    urls = [*urls, *(v for v in _strings(args) if "://" in v)]
    return secret_values([*keys, *given, *(s for url in urls for s in url_secrets(url))])


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


def _basic(match: re.Match[str]) -> str:
    """A ``Basic <token>`` match redacted when the token is base64 of ``user:password``."""
    token = match.group(2)
    try:
        decoded = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    return f"{match.group(1)}{REDACTED}" if b":" in decoded else match.group(0)


def _query_pair(match: re.Match[str]) -> str:
    name, value = match.group(1), match.group(2)
    return f"{name}={REDACTED}" if value and is_secret_query(name) else match.group(0)


def redact(text: str, extra: Iterable[str | None] = ()) -> str:
    """``text`` with every known secret value (the environment's and ``extra``), URL user info,
    credential query value (``?sig=…``), bearer token and basic credential replaced."""
    for value in secret_values(extra):
        text = text.replace(value, REDACTED)
    text = _URL_CREDENTIALS.sub(f"{REDACTED}@", text)
    text = _QUERY_PAIR.sub(_query_pair, text)
    text = _BASIC.sub(_basic, text)
    return _BEARER.sub(rf"\g<1>{REDACTED}", text)


def scrub(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (text, or mappings and lists of it at any depth) with each of ``secrets``
    replaced by ``***``: by value only, so that a model's answer that merely looks like a
    credential ("the bearer of the news") is left as it came. Containers are rebuilt, other
    values returned as they are."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, Mapping):
        return {k: scrub(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(scrub(v, secrets) for v in value)
    return value


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
    """``url`` without user info, its credential query values (``is_secret_query``) as
    ``***`` and any known secret redacted."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    query = urlencode([(k, REDACTED if is_secret_query(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)],
                      safe="*")
    return redact(urlunsplit((parts.scheme, host, parts.path, query, parts.fragment)))
