"""A task's ``-T`` arguments, checked and the task built before any run starts.

inspect builds a task inside ``eval`` (so a bad argument becomes an error *log* and a "resume"
hint that resume cannot act on), and per-question settings such as the frame policy are only
validated once the first sample runs. ``build`` does all of it up front, given the task's
``@task`` function and the ranges its benchmark declares (the lookup by name is the
benchmarks' declarations'):

- every argument must be one the task takes, of the type its signature declares, and within
  its declared range (``fps > 0``, ``frames >= 0``, ...);
- the task is then built once (which loads its data and parses options such as ``regime`` or
  ``subtitles``); any failure there is a one-line ``TaskArgumentError`` (or the task's own
  typed ``M3kitError``) naming the argument.

The built ``Task`` is what ``run_eval`` hands to inspect: inspect records the same registry
name and arguments as when it builds the task from its name, so resume still finds the run.
"""

from __future__ import annotations

import inspect as pyinspect
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from m3kit.errors import M3kitError
from m3kit.models.redact import one_line

if TYPE_CHECKING:
    from inspect_ai import Task

__all__ = ["ArgumentRange", "TaskArgumentError", "build", "check_args"]


class ArgumentRange(Protocol):
    """What a numeric argument must be: ``check(value)`` true; ``wanted`` says what that is
    (a benchmark declaration's ``ArgRange`` is one)."""

    check: Callable[[Any], bool]
    wanted: str


class TaskArgumentError(M3kitError, ValueError):
    """A task argument is unknown, of the wrong type, out of range or refused by the task."""


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _check_type(task: str, key: str, value: Any, annotation: Any) -> None:
    from pydantic import TypeAdapter, ValidationError

    if annotation is pyinspect.Parameter.empty or annotation is Any:
        return
    try:
        TypeAdapter(annotation).validate_python(value)
    except ValidationError:
        wanted = getattr(annotation, "__name__", None) or str(annotation).replace("typing.", "")
        raise TaskArgumentError(f"task {task}: {key} must be {wanted}, got {_describe(value)}",
                                field=key) from None
    except Exception:  # noqa: BLE001 (an annotation pydantic cannot check is left to the task)
        return


def check_args(task: str, function: Callable[..., Task], args: Mapping[str, Any],
               ranges: Mapping[str, ArgumentRange]) -> None:
    """``TaskArgumentError`` for an argument ``function`` (the task ``task``) does not take, a
    value of the wrong type or out of ``ranges``. Builds nothing."""
    short = task.split("/")[-1]
    body = pyinspect.unwrap(function)
    params = pyinspect.signature(body).parameters
    try:
        hints = typing.get_type_hints(body)
    except Exception:  # noqa: BLE001 (unresolvable annotations: types are not checked)
        hints = {}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for key, value in args.items():
        if key not in params and not takes_any:
            raise TaskArgumentError(
                f"task {short} takes no argument {key!r}; it takes: {', '.join(params)}",
                field=key)
        if value is None:
            continue
        _check_type(short, key, value, hints.get(key, pyinspect.Parameter.empty))
        rule = ranges.get(key)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if rule is not None and numeric and not rule.check(value):
            raise TaskArgumentError(
                f"task {short}: {key} must be {rule.wanted}, got {value!r}", field=key)


def _validation_field(exc: Exception) -> str | None:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # noqa: BLE001
        return None
    loc = first.get("loc") or ()
    return str(loc[-1]) if loc else None


def build(task: str, function: Callable[..., Task], args: Mapping[str, Any],
          ranges: Mapping[str, ArgumentRange]) -> Task:
    """The task ``task`` (its ``@task`` ``function``) built with ``args``, every argument checked
    first; any failure is one typed line (``M3kitError``), before a log is written or a model
    called."""
    check_args(task, function, args, ranges)
    short = task.split("/")[-1]
    try:
        return function(**dict(args))
    except M3kitError:
        raise
    except Exception as exc:  # noqa: BLE001 (pydantic ValidationError and other refusals)
        field = _validation_field(exc)
        detail = one_line(str(exc))
        if field is not None:
            first = exc.errors()[0]  # type: ignore[attr-defined]
            detail = f"{field}: {one_line(str(first.get('msg', detail)))}"
        raise TaskArgumentError(f"task {short}: bad argument: {detail}", field=field) from None
