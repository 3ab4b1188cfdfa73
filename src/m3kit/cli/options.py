"""``key=value`` command-line pairs (``-T``, ``-M``, ``--model-arg``), read by one rule.

A value is read as YAML by ``yaml.safe_load``, as ``inspect eval -T/-M`` reads it, so a pair
means the same to ``m3kit`` and to ``inspect``: ``n=3`` is the integer 3, ``x=1.5`` a float,
``flag=true`` / ``flag=yes`` / ``flag=on`` the boolean True (YAML 1.1 booleans, as PyYAML reads
them), ``s=abc`` the string ``"abc"``, ``j={"a": 1}`` or ``j={a: 1}`` a mapping, ``l=[1, 2]`` a
list, ``k=`` and ``k=null`` None. A value that is not valid YAML, or that YAML would read as a
date or a time (``d=2024-01-01``), stays the string as typed. (YAML 1.1 reads ``1e-9`` as text:
a task's numeric parameter gets the number, ``m3kit.harness.taskargs``.)

A numeric option takes ``callback=at_least(option, low)``: a value below ``low``, or one that is
not finite (a float option reads ``inf`` and ``nan``), is one ``OptionError`` line naming the
option, exit 2, while the command line is read, before any work.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from m3kit.errors import M3kitError

__all__ = ["AsJsonOption", "CallAttemptsOption", "CallTimeoutOption", "ModelArgsOption",
           "NoCacheOption", "OptionError", "QuietOption", "at_least", "parse_key_values"]

# Options several verbs share (``m3kit judge-agreement``'s judges, and any verb's ``--json``).
ModelArgsOption = Annotated[
    list[str] | None, typer.Option("-M", help="Judge model argument key=value (repeatable).")
]
NoCacheOption = Annotated[
    bool, typer.Option("--no-cache", help="Do not reuse cached judge replies.")
]
AsJsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
QuietOption = Annotated[bool, typer.Option("--quiet", help="No progress bars (for scripts); "
                                           "results and warnings are still printed.")]


class OptionError(M3kitError, ValueError):
    """A command-line option has the wrong form."""


def at_least(option: str, low: float) -> Callable[[Any], Any]:
    """A typer ``callback`` for the numeric ``option``: its value as given, or an
    ``OptionError`` naming ``option`` when it is below ``low`` or not finite; left out
    (``None``) it passes."""

    def check(value: Any) -> Any:
        if value is None:
            return value
        if isinstance(value, float) and not math.isfinite(value):
            raise OptionError(f"must be a finite number, got {value}", field=option)
        if value < low:
            raise OptionError(f"must be at least {low:g}, got {value:g}",
                              field=option)
        return value

    return check


# A construction pipeline's model calls (``m3kit.models.backend.InspectBackend``).
CallAttemptsOption = Annotated[int, typer.Option(
    "--call-attempts", callback=at_least("--call-attempts", 1), help="Attempts of one model "
    "call in total, with exponential backoff between them, before the run stops with the "
    "reason.")]
CallTimeoutOption = Annotated[float, typer.Option(
    "--call-timeout", callback=at_least("--call-timeout", 1), help="Seconds before one "
    "attempt of a model call is abandoned.")]
StructuredOption = Annotated[str, typer.Option(
    "--structured", help="Send each JSON reply's schema so the server decodes only what it "
    "admits: off, json_schema (OpenAI, vLLM, SGLang) or json_object (llama.cpp's "
    "llama-cpp-python server).")]


def parse_key_values(items: Iterable[str] | None, option: str) -> dict[str, Any]:
    """``["k=v", ...]`` -> ``{"k": v}``, each value read by the module's rule; a later pair
    overrides an earlier one with the same key. A pair without ``=`` or without a key is an
    ``OptionError`` naming ``option``."""
    import yaml

    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"{option} expects key=value, got {item!r}", field=option)
        try:
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError:
            value = raw
        out[key.strip()] = raw if _has_time(value) else value
    return out


def _has_time(value: Any) -> bool:
    """Whether YAML read a date or time somewhere in ``value`` (not a JSON value)."""
    if isinstance(value, datetime.date | datetime.time):
        return True
    if isinstance(value, dict):
        return any(_has_time(k) or _has_time(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_time(v) for v in value)
    return False
