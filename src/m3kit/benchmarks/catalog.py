"""What can be run, read from where it is defined: ``m3kit list``.

Benchmarks and their tasks come from the declarations (``m3kit.benchmarks.BENCHMARKS``), each
task's ``-T`` options and defaults from its ``@task`` function's signature; memories and their
settings (``-T memory_config=``) from ``m3kit.memory.registry`` (the built-ins and the memories
other packages add with an entry point) and each memory's constructor, a pydantic record's
fields as nested settings (``retrieval.mode``);
the rerankers those memories take (``memory_config={reranker: NAME}``) from
``m3kit.memory.retrieval.rerankers.reranker_kinds`` and the memories that have the setting;
m3kit's model providers and their ``-M`` options from the providers' constructors. Nothing is
listed by hand, so a new benchmark folder, task argument or memory appears here by itself.
"""

from __future__ import annotations

import inspect as pyinspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.benchmarks import BENCHMARKS

if TYPE_CHECKING:
    from m3kit.memory.registry import MemorySource

__all__ = [
    "Catalog",
    "ListedBenchmark",
    "ListedMemory",
    "ListedOption",
    "ListedProvider",
    "ListedReranker",
    "ListedTask",
    "catalog",
    "options_of",
]

# Constructor parameters that are not settings a user passes (objects, the provider's own).
_NOT_OPTIONS = frozenset({"self", "model_name", "base_url", "api_key", "config"})
_UNRESOLVED = object()  # an annotation naming a type imported for type checking only
# Where the OpenAI-compatible servers (vLLM, SGLang, llama.cpp, Ollama) and hosted APIs come in.
INSPECT_PROVIDERS = (
    ("openai-api/<service>/<model>: any OpenAI-compatible server (vLLM, SGLang, llama.cpp, "
     "Ollama), at <SERVICE>_BASE_URL with <SERVICE>_API_KEY"),
    ("vllm/<model>, openai/<model>, anthropic/<model>, google/<model>, ...: inspect-ai's "
     "providers (https://inspect.aisi.org.uk/providers.html)"),
)


class ListedOption(BaseModel):
    """One keyword option: its name, its default as Python writes it (``None`` when it has
    none: then it is ``required``), its type as annotated, whether a command line can give
    it (``command_line``: not an object such as an embedder)."""

    model_config = ConfigDict(frozen=True)

    name: str
    default: str | None = None
    required: bool = False
    type: str = ""
    command_line: bool = True


class ListedTask(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    summary: str
    options: list[ListedOption] = Field(default_factory=list)


class ListedBenchmark(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    title: str
    score_verb: str
    ci_unit: str
    tasks: list[ListedTask] = Field(default_factory=list)


class ListedMemory(BaseModel):
    """A memory by its registry name: the package that provides it (``m3kit`` for a
    built-in), its settings (``-T memory_config={...}``; a record's fields as
    ``retrieval.<field>``), and those its name fixes (``rag-mm``: ``send_images=True``)."""

    model_config = ConfigDict(frozen=True)

    name: str
    package: str
    summary: str
    fixed: dict[str, str] = Field(default_factory=dict)
    options: list[ListedOption] = Field(default_factory=list)


class ListedReranker(BaseModel):
    """A second-stage reranker by the name ``-T memory_config='{reranker: NAME}'`` gives it
    (``<inspect model>``: any model name), with the memories that take one."""

    model_config = ConfigDict(frozen=True)

    name: str
    summary: str
    memories: list[str] = Field(default_factory=list)


class ListedProvider(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    summary: str
    options: list[ListedOption] = Field(default_factory=list)


class Catalog(BaseModel):
    """Everything ``m3kit list`` shows; ``model_dump()`` is its ``--json``."""

    model_config = ConfigDict(frozen=True)

    benchmarks: list[ListedBenchmark]
    memories: list[ListedMemory]
    # Memory names no lookup takes, each with why (a plugin that takes a built-in's name, a
    # name two packages declare, a plugin that does not load): shown, never silently missing.
    refused_memories: dict[str, str]
    rerankers: list[ListedReranker]
    providers: list[ListedProvider]
    other_providers: list[str]


def _summary(obj: Any) -> str:
    """The first sentence-line of ``obj``'s docstring."""
    doc = pyinspect.getdoc(obj) or ""
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ").replace("``", "").strip()


def _type_name(annotation: Any) -> str:
    if annotation is pyinspect.Parameter.empty:
        return ""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__",
                                                                  str(annotation))
    return str(text).replace("typing.", "")


def options_of(function: Callable[..., Any], skip: frozenset[str] = _NOT_OPTIONS,
               ) -> list[ListedOption]:
    """The keyword options ``function`` takes (a ``@task`` function, a class's constructor),
    in signature order, with their defaults; ``*args``, ``**kwargs`` and ``skip`` left out.
    ``command_line`` says whether a ``key=value`` pair can give the option (its type, or one
    of its forms, is made of strings, numbers, booleans, paths, literals and containers of
    them)."""
    body = pyinspect.unwrap(function)
    names = _annotation_names(body)
    out: list[ListedOption] = []
    for param in pyinspect.signature(body).parameters.values():
        if param.name in skip or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        required = param.default is param.empty
        hint = _resolved(param.annotation, names)
        # a type that does not resolve here: a plain default, or a plain type among the
        # union's forms (``Reranker | str | None``), says a plain value can be given
        plain = (isinstance(param.default, str | int | float | bool)
                 or _names_plain_type(param.annotation))
        out.append(ListedOption(name=param.name, required=required,
                                default=None if required else repr(param.default),
                                type=_type_name(param.annotation),
                                command_line=(plain if hint is _UNRESOLVED
                                              else _from_command_line(hint))))
    return out


def _annotation_names(body: Callable[..., Any]) -> Mapping[str, Any]:
    """The names the annotations of ``body``'s signature, written as text, resolve in: the
    globals of its module, for a class those of the module that defines its ``__init__``."""
    if isinstance(body, type):
        body = next(vars(cls)["__init__"] for cls in body.__mro__ if "__init__" in vars(cls))
    return getattr(body, "__globals__", {})


_PLAIN_TYPES = frozenset({"str", "int", "float", "bool", "Path"})


def _names_plain_type(annotation: Any) -> bool:
    """Whether an annotation written as text is a union with a plain type among its forms."""
    return isinstance(annotation, str) and any(
        part.strip() in _PLAIN_TYPES for part in annotation.split("|"))


def _resolved(annotation: Any, names: Mapping[str, Any]) -> Any:
    """An annotation written as text (``from __future__ import annotations``) as the type it
    names; ``_UNRESOLVED`` for one naming a type imported for type checking only."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, dict(names))
    except Exception:  # noqa: BLE001 (a name imported for type checking only)
        return _UNRESOLVED


def _from_command_line(hint: Any) -> bool:
    """Whether a value of type ``hint`` can be written on a command line (as YAML)."""
    if hint is pyinspect.Parameter.empty or hint is Any:
        return True
    if hint in (str, int, float, bool, type(None), Path):
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return True
    if origin in (typing.Union, types.UnionType):  # one form a command line can write is enough
        return any(_from_command_line(arg) for arg in typing.get_args(hint)
                   if arg is not type(None))
    if origin in (list, tuple, dict, Sequence, Mapping):
        return all(arg is Ellipsis or _from_command_line(arg) for arg in typing.get_args(hint))
    return False


def _memory(source: MemorySource) -> ListedMemory:
    factory = source.factory()
    fixed: dict[str, str] = {}
    target = factory
    if isinstance(factory, partial):
        fixed = {k: repr(v) for k, v in factory.keywords.items()}
        target = factory.func
    records = _record_settings(target)
    options = [nested for o in options_of(target) if o.name not in fixed
               for nested in records.get(o.name, [o])]
    return ListedMemory(name=source.name, package=source.package, summary=_summary(target),
                        fixed=fixed, options=_simple(options))


def _record_settings(function: Callable[..., Any]) -> dict[str, list[ListedOption]]:
    """For each parameter of ``function`` whose type is a pydantic record (``retrieval:
    RetrievalConfig``), the record's fields as the settings ``retrieval.<field>``, with the
    values of the parameter's default (a preset) as their defaults. A class's
    ``default_<parameter>`` (``Memory.default_retrieval``) is the preset of a parameter that
    defaults to ``None``, and names its record where the annotation names a type imported for
    type checking only."""
    body = pyinspect.unwrap(function)
    names = _annotation_names(body)
    out: dict[str, list[ListedOption]] = {}
    for param in pyinspect.signature(body).parameters.values():
        record = _record_type(_resolved(param.annotation, names))
        preset = param.default if record and isinstance(param.default, record) else None
        kept = getattr(body, f"default_{param.name}", None) if isinstance(body, type) else None
        if preset is None and isinstance(kept, record or BaseModel):
            record, preset = type(kept), kept
        if record is not None:
            out[param.name] = _record_fields(param.name, record, preset)
    return out


def _record_type(hint: Any) -> type[BaseModel] | None:
    """The pydantic record ``hint`` is, or has among its forms (``RetrievalConfig | None``)."""
    union = typing.get_origin(hint) in (typing.Union, types.UnionType)
    forms = typing.get_args(hint) if union else (hint,)
    return next((form for form in forms
                 if isinstance(form, type) and issubclass(form, BaseModel)), None)


def _record_fields(prefix: str, record: type[BaseModel], value: BaseModel | None,
                   ) -> list[ListedOption]:
    """``record``'s fields as settings ``prefix.<field>`` (a record inside, one level down
    each), their defaults ``value``'s when it is given, else the fields' own."""
    out: list[ListedOption] = []
    for name, field in record.model_fields.items():
        required = value is None and field.is_required()
        default = (getattr(value, name) if value is not None
                   else None if required else field.get_default(call_default_factory=True))
        inner = _record_type(field.annotation)
        if inner is not None:
            out += _record_fields(f"{prefix}.{name}", inner,
                                  default if isinstance(default, inner) else None)
            continue
        out.append(ListedOption(name=f"{prefix}.{name}", required=required,
                                default=None if required else repr(default),
                                type=_short_type_name(field.annotation),
                                command_line=_from_command_line(field.annotation)))
    return out


def _short_type_name(annotation: Any) -> str:
    """A resolved annotation as its source would write it: ``str | Callable[...,
    VectorIndex]``, not with each type's module."""
    if isinstance(annotation, type):
        return annotation.__name__
    return re.sub(r"\b(?:\w+\.)+(\w+)", r"\1", str(annotation))


def _providers() -> list[ListedProvider]:
    from m3kit.models.builtin import BuiltinModelAPI
    from m3kit.models.hf import HFVisionModelAPI

    return [
        ListedProvider(name="m3kit/builtin", summary=_summary(BuiltinModelAPI),
                       options=_simple(options_of(BuiltinModelAPI))),
        ListedProvider(name="m3kit/hf", summary=_summary(HFVisionModelAPI),
                       options=_simple(options_of(HFVisionModelAPI))),
    ]


def _simple(options: list[ListedOption]) -> list[ListedOption]:
    """The options a command line can give (``-M key=value``): not objects such as a reader
    or an embedder, which only Python callers pass."""
    return [o for o in options if o.command_line]


def catalog() -> Catalog:
    """Every benchmark with its tasks and their options, every memory with its settings,
    m3kit's providers with their options, and where other models come in."""
    from m3kit.memory.registry import MemoryPluginError, discover_memories

    benchmarks = [
        ListedBenchmark(
            name=b.name, title=b.title, score_verb=b.score_verb, ci_unit=b.ci_unit,
            tasks=[ListedTask(name=name, summary=_summary(fn), options=options_of(fn))
                   for name, fn in zip(b.tasks, b.task_functions(), strict=True)],
        )
        for b in BENCHMARKS
    ]
    memories: list[ListedMemory] = []
    sources, refused = discover_memories()
    for source in sources:
        try:
            memories.append(_memory(source))
        except MemoryPluginError as exc:  # a plugin that does not load: listed with why
            refused[source.name] = str(exc)
    return Catalog(benchmarks=benchmarks, memories=memories,
                   refused_memories=refused, rerankers=_rerankers(memories),
                   providers=_providers(), other_providers=list(INSPECT_PROVIDERS))


def _rerankers(memories: Sequence[ListedMemory]) -> list[ListedReranker]:
    """Each reranker kind (``m3kit.memory.retrieval.rerankers.reranker_kinds``), with the
    memories whose settings include ``reranker``."""
    from m3kit.memory.retrieval.rerankers import reranker_kinds

    taking = [m.name for m in memories
              if any(o.name in ("reranker", "retrieval.reranker") for o in m.options)]
    return [ListedReranker(name=name, summary=_summary(kind), memories=taking)
            for name, kind in reranker_kinds().items()]
