"""A task's ``-T`` arguments, checked and the task built before any run starts.

inspect builds a task inside ``eval`` (so a bad argument becomes an error *log* and a "resume"
hint that resume cannot act on), and per-question settings such as the frame policy are only
validated once the first sample runs. ``build`` does all of it up front, given the task's
``@task`` function and the ranges its benchmark declares (the lookup by name is the
benchmarks' declarations'):

- every argument must be one the task takes, of the type its signature declares, and within
  its declared range (``fps > 0``, ``frames >= 0``, ...);
- a number is read as the number its parameter's type says: ``-T memory_fps=1e-9`` (text to
  YAML 1.1, which wants ``1.0e-9``) is the float ``1e-9``, ``-T frames=8.0`` the int 8; a
  boolean is no number (``frames=yes``), and a number that is not finite (``.inf``, ``.nan``)
  is refused, naming the argument;
- the task is then built once (which loads its data and parses options such as ``regime`` or
  ``subtitles``); any failure there is a one-line ``TaskArgumentError`` (or the task's own
  typed ``M3kitError``) naming the argument.

The built ``Task`` is what ``run_eval`` hands to inspect: inspect records the same registry
name and arguments as when it builds the task from its name, so resume still finds the run
(``run_eval`` keys the run by the arguments ``check_args`` returns, the ones the task is built
with).

``check_run_numbers`` does the same for the run's own numbers (``limit``, ``max_connections``,
``max_retries``, ``attempt_timeout``, ``max_failed``): each a whole number at least its
``RUN_MINIMUMS`` bound, refused before any work (a ``limit`` of 0 runs nothing and reports
success, a negative one is Python's slice from the end, zero connections wait forever).
"""

from __future__ import annotations

import inspect as pyinspect
import math
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from m3kit.errors import M3kitError
from m3kit.models.redact import one_line

if TYPE_CHECKING:
    from inspect_ai import Task

__all__ = ["RUN_MINIMUMS", "ArgumentRange", "RunNumberError", "TaskArgumentError", "build",
           "check_args", "check_run_numbers"]

# The least value of each of the run's own numbers (``run_eval``'s, ``m3kit eval``'s options).
RUN_MINIMUMS: dict[str, int] = {
    "limit": 1, "max_connections": 1, "max_retries": 1, "attempt_timeout": 1, "max_failed": 0,
    "max_tokens": 1,
}


class ArgumentRange(Protocol):
    """What a numeric argument must be: ``check(value)`` true; ``wanted`` says what that is
    (a benchmark declaration's ``ArgRange`` is one). Read-only: a declaration's is frozen."""

    @property
    def check(self) -> Callable[[Any], bool]: ...

    @property
    def wanted(self) -> str: ...


class TaskArgumentError(M3kitError, ValueError):
    """A task argument is unknown, of the wrong type, out of range or refused by the task."""


class RunNumberError(M3kitError, ValueError):
    """One of the run's own numbers (``limit``, ``max_connections``...) is not a whole number
    at least its bound."""


def check_run_numbers(**numbers: Any) -> None:
    """``RunNumberError`` naming the first of ``numbers`` (names of ``RUN_MINIMUMS``; ``None``:
    left out) that is not a whole number at least its bound."""
    for name, value in numbers.items():
        if value is None:
            continue
        low = RUN_MINIMUMS[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise RunNumberError(f"{name} must be a whole number, got {_describe(value)}",
                                 field=name)
        if value < low:
            raise RunNumberError(f"{name} must be at least {low}, got {value}", field=name)


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _numeric(annotation: Any) -> bool:
    """Whether ``annotation`` takes numbers only (``int``, ``float``, ``float | None``...)."""
    members = [a for a in (typing.get_args(annotation)
                           if typing.get_origin(annotation) in (typing.Union, types.UnionType)
                           else (annotation,)) if a is not type(None)]
    return bool(members) and all(a in (int, float) for a in members)


def _check_type(task: str, key: str, value: Any, annotation: Any) -> Any:
    """``value`` checked against ``annotation``; for a numeric parameter, the number it is
    (``"1e-9"`` -> ``1e-9``, ``8.0`` -> ``8`` for an int; a boolean refused)."""
    from pydantic import TypeAdapter, ValidationError

    if annotation is pyinspect.Parameter.empty or annotation is Any:
        return value
    wanted = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
    numeric = _numeric(annotation)
    if numeric and isinstance(value, bool):
        raise TaskArgumentError(f"task {task}: {key} must be {wanted}, got {_describe(value)}",
                                field=key)
    try:
        checked = TypeAdapter(annotation).validate_python(value)
    except ValidationError:
        raise TaskArgumentError(f"task {task}: {key} must be {wanted}, got {_describe(value)}",
                                field=key) from None
    except Exception:  # noqa: BLE001 (an annotation pydantic cannot check is left to the task)
        return value
    return checked if numeric else value


def takes_argument(function: Callable[..., Task], key: str) -> bool:
    """Whether the ``@task`` ``function`` takes the argument ``key``: a parameter of that name,
    or any keyword (``**kwargs``)."""
    params = pyinspect.signature(pyinspect.unwrap(function)).parameters
    return key in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def check_args(task: str, function: Callable[..., Task], args: Mapping[str, Any],
               ranges: Mapping[str, ArgumentRange]) -> dict[str, Any]:
    """``TaskArgumentError`` for an argument ``function`` (the task ``task``) does not take, a
    value of the wrong type, not finite or out of ``ranges``. Builds nothing. Returns the
    arguments as the task is to be called with them: numbers as their parameters' types say
    (see the module doc), everything else as given."""
    short = task.split("/")[-1]
    body = pyinspect.unwrap(function)
    params = pyinspect.signature(body).parameters
    try:
        hints = typing.get_type_hints(body)
    except Exception:  # noqa: BLE001 (unresolvable annotations: types are not checked)
        hints = {}
    checked: dict[str, Any] = {}
    for key, value in args.items():
        if not takes_argument(function, key):
            raise TaskArgumentError(
                f"task {short} takes no argument {key!r}; it takes: {', '.join(params)}",
                field=key)
        if value is not None:
            given = value  # as typed, in messages
            value = _check_type(short, key, value, hints.get(key, pyinspect.Parameter.empty))
            rule = ranges.get(key)
            numeric = isinstance(value, int | float) and not isinstance(value, bool)
            if numeric and isinstance(value, float) and not math.isfinite(value):
                raise TaskArgumentError(
                    f"task {short}: {key} must be a finite number, got {given!r}", field=key)
            if rule is not None and numeric and not rule.check(value):
                raise TaskArgumentError(
                    f"task {short}: {key} must be {rule.wanted}, got {given!r}", field=key)
        checked[key] = value
    config = checked.get("memory_config")
    if isinstance(config, Mapping):  # cheap, before a suite is rendered or data read
        from m3kit.memory.registry import check_finite_settings

        try:
            check_finite_settings(config)
        except ValueError as exc:
            raise TaskArgumentError(f"task {short}: {exc}", field="memory_config") from None
    return checked


def _first_error(exc: Exception) -> Any:
    """The first entry of ``exc.errors()`` (a pydantic ``ValidationError``'s, or a refusal
    shaped like one); ``None`` for any other exception."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        return errors()[0]
    except Exception:  # noqa: BLE001 (an ``errors`` of another shape: nothing to name)
        return None


def build(task: str, function: Callable[..., Task], args: Mapping[str, Any],
          ranges: Mapping[str, ArgumentRange]) -> Task:
    """The task ``task`` (its ``@task`` ``function``) built with ``args``, every argument checked
    first; any failure is one typed line (``M3kitError``), before a log is written or a model
    called."""
    checked = check_args(task, function, args, ranges)
    short = task.split("/")[-1]
    try:
        return function(**checked)
    except M3kitError:
        raise
    except Exception as exc:  # noqa: BLE001 (pydantic ValidationError and other refusals)
        first = _first_error(exc)
        loc = (first.get("loc") or ()) if first is not None else ()
        field = str(loc[-1]) if loc else None
        detail = one_line(str(exc))
        if field is not None:
            detail = f"{field}: {one_line(str(first.get('msg', detail)))}"
        raise TaskArgumentError(f"task {short}: bad argument: {detail}", field=field) from None
