"""``RetrievalConfig``: how a memory searches, as one typed record, with named presets.

    RagMemory(retrieval=RetrievalConfig(mode="dense", rewriting=False))
    RagMemory(retrieval=MAXSIM_RERANKED)
    make_memory("rag", reranker="maxsim")                     # a flat memory_config key
    make_memory("rag", retrieval={"preset": "bm25", "rerank_depth": 10})

The settings every searching memory shares: the first stage's ``mode`` (``hybrid``: BM25 and
dense vectors fused, ``dense``, ``lexical``), the vector engine (``index``), the items' passage
and turn-window ``views``, query ``rewriting``, an ``expander``, a ``reranker`` over the top
``rerank_depth``. What a memory does with the hits (how many reach the prompt, how they are
routed or re-weighted) is the memory's own setting, not part of the search.

Presets are module constants (graphiti's ``SearchConfig`` and its recipes are the pattern),
named in ``PRESETS`` for ``memory_config``. ``settings_record`` splits a flat ``memory_config``
into the record and the memory's own settings: the one place flat keys are routed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_serializer,
    field_validator,
    model_serializer,
    model_validator,
)

from m3kit.memory.retrieval.fusion import FusionSettings
from m3kit.memory.retrieval.index import IndexFactory
from m3kit.memory.retrieval.query import QueryExpander
from m3kit.memory.retrieval.rerank import Reranker

RetrievalMode = Literal["hybrid", "dense", "lexical"]
RETRIEVAL_MODES: tuple[str, ...] = ("hybrid", "dense", "lexical")


def checked_retrieval(mode: str) -> RetrievalMode:
    """``mode`` when it is one of ``RETRIEVAL_MODES``, else ``ValueError`` naming them."""
    if mode not in RETRIEVAL_MODES:
        raise ValueError(f"unknown retrieval {mode!r}; known: {', '.join(RETRIEVAL_MODES)}")
    return cast("RetrievalMode", mode)


# The reranker's candidates when none is configured: deep enough for the evidence of a
# multi-session question, one model call of a few thousand tokens.
RERANK_DEPTH = 30


class RetrievalConfig(BaseModel):
    """The search a memory runs (see the module doc); frozen, so a preset is never changed by
    a memory that uses it.

    ``index``: a vector engine's name (``index.make_index``) or a factory ``(dim) ->
    VectorIndex``. ``expander`` / ``reranker``: an object, or a name (``memory_config`` is
    YAML): for the expander an inspect model's; for the reranker ``maxsim`` (the
    late-interaction reranker over the memory's MiniLM) or an inspect model's. ``views`` are
    rankings of a fusion: under ``dense`` or ``lexical`` they are off. ``min_cosine``: a dense
    hit below this cosine is no hit, in every mode that ranks by the embedding (Video-RAG's
    released ``rag_threshold``); ``None``: no gate, and the record shows no such key.
    ``fusion``: how a hybrid search fuses its rankings (``fusion.FusionSettings``: method and
    per-ranking weights); ``feedback``: a hybrid search also ranks the question expanded by
    pseudo-relevance feedback (RM3 over BM25). Both show in the record only when not at their
    defaults.

    ``model_dump(by_alias=True)`` is the record a memory's ``config()`` shows: objects by their
    names, ``mode`` under ``retrieval`` (the key ``memory_config`` and the cache scope have
    always used), ``rerank_depth`` ``None`` without a reranker (it changes nothing then).
    """

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    mode: RetrievalMode = Field(default="hybrid", serialization_alias="retrieval")
    index: str | IndexFactory = "faiss"
    views: bool = True
    rewriting: bool = True
    expander: QueryExpander | str | None = None
    reranker: Reranker | str | None = None
    rerank_depth: int = RERANK_DEPTH
    min_cosine: float | None = Field(default=None, ge=-1.0, le=1.0)
    fusion: FusionSettings = FusionSettings()
    feedback: bool = False

    @model_validator(mode="before")
    @classmethod
    def _views_need_fusion(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("mode", "hybrid") != "hybrid" \
                and data.get("views", True):
            return {**data, "views": False}
        return data

    @field_validator("mode", mode="before")
    @classmethod
    def _known_mode(cls, mode: Any) -> Any:
        return checked_retrieval(mode)

    @model_validator(mode="after")
    def _reranked_deep_enough(self) -> RetrievalConfig:
        if self.reranker is not None and self.rerank_depth < 2:
            raise ValueError(f"rerank_depth must be at least 2, got {self.rerank_depth}")
        return self

    @field_serializer("index")
    def _index_name(self, index: str | IndexFactory) -> str:
        # a factory by its ``name`` attribute (its ``repr`` when it has none)
        return index if isinstance(index, str) else getattr(index, "name", repr(index))

    @field_serializer("expander")
    def _expander_name(self, expander: QueryExpander | str | None) -> str | None:
        if isinstance(expander, str):
            from m3kit.memory.retrieval.expansion import ModelQueryExpander

            return ModelQueryExpander(expander).name
        return expander.name if expander is not None else None

    @field_serializer("reranker")
    def _reranker_name(self, reranker: Reranker | str | None) -> str | None:
        if isinstance(reranker, str):
            from m3kit.memory.retrieval.rerankers import named_reranker

            return named_reranker(reranker).name
        return reranker.name if reranker is not None else None

    @field_serializer("rerank_depth")
    def _depth_when_reranked(self, depth: int) -> int | None:
        return depth if self.reranker is not None else None

    @model_serializer(mode="wrap")
    def _gate_when_set(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # Only the memories whose search has a gate name it: the others' configs (and the
        # cache scopes made of them) stay as they were before the gate was a setting.
        record: dict[str, Any] = handler(self)
        if self.min_cosine is None:
            record.pop("min_cosine", None)
        if self.fusion == FusionSettings():  # the same for the fusion's and feedback's keys
            record.pop("fusion", None)
        if not self.feedback:
            record.pop("feedback", None)
        return record


DEFAULT_RETRIEVAL = RetrievalConfig()
"""Every searching memory's default: hybrid, with views and rewriting, no expander, no
reranker (the offline default; measured in docs/benchmarks.md)."""
BM25_SEARCH = RetrievalConfig(mode="lexical", rewriting=False)
"""BM25 alone over the bare question (the ablation's ``bm25`` row)."""
DENSE_SEARCH = RetrievalConfig(mode="dense", rewriting=False)
"""Cosine over the bare question's embedding alone: the embedding-only search of before."""
FUSED_SEARCH = RetrievalConfig(views=False, rewriting=False)
"""BM25 and dense fused over the bare question, no views (the ablation's ``hybrid`` row)."""
MAXSIM_RERANKED = RetrievalConfig(reranker="maxsim")
"""The default, its top ``rerank_depth`` reranked by MaxSim over the memory's MiniLM."""

PRESETS: Mapping[str, RetrievalConfig] = {
    "default": DEFAULT_RETRIEVAL,
    "bm25": BM25_SEARCH,
    "embedding": DENSE_SEARCH,
    "fused": FUSED_SEARCH,
    "maxsim": MAXSIM_RERANKED,
}
"""The presets by the name ``memory_config={retrieval: NAME}`` takes; no name is a mode's, so
``{retrieval: dense}`` keeps meaning the mode."""


def preset(name: str) -> RetrievalConfig:
    """The preset ``name`` (``PRESETS``), else ``ValueError`` naming them."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown retrieval preset {name!r}; known: {', '.join(PRESETS)}"
                         ) from None


def over(base: RetrievalConfig, named: RetrievalConfig) -> RetrievalConfig:
    """The preset ``named`` applied over a memory's own default ``base``: the fields the
    preset sets (``BM25_SEARCH``: mode and rewriting), ``base``'s for the rest, so a preset
    keeps what the memory's search needs (Video-RAG's cosine gate) and ``default`` is the
    memory's own default."""
    if not named.model_fields_set:
        return base
    return RetrievalConfig.model_validate(
        {**dict(base), **{name: getattr(named, name) for name in named.model_fields_set}})


def settings_record(settings: Mapping[str, Any], base: RetrievalConfig = DEFAULT_RETRIEVAL
                    ) -> tuple[RetrievalConfig, dict[str, Any]]:
    """A memory's flat settings (``memory_config``) split into its retrieval record and the
    rest (its own settings). The record is ``base`` (the memory's default) with, in turn:

    - ``retrieval``: a ``RetrievalConfig`` (taken as it is); a preset's name (``PRESETS``,
      applied over ``base``: ``over``) or a mode (``RETRIEVAL_MODES``: ``{retrieval: dense}``,
      the key's meaning since it was added); or a mapping of ``RetrievalConfig`` fields,
      which may name a ``preset`` to start from (``{retrieval: {preset: bm25,
      rerank_depth: 10}}``);
    - the record's other fields given flat (``{reranker: maxsim, rerank_depth: 10}``).

    A setting given both flat and nested is a ``ValueError``; an unknown one, or one out of
    range, is pydantic's ``ValidationError`` (a ``ValueError`` too).
    """
    rest = dict(settings)
    given = rest.pop("retrieval", None)
    start, nested = base, {}
    if isinstance(given, RetrievalConfig):
        start = given
    elif isinstance(given, str):
        if given in PRESETS:
            start = over(base, PRESETS[given])
        else:
            nested = {"mode": given}
    elif isinstance(given, Mapping):
        nested = dict(given)
        if "preset" in nested:
            start = over(base, preset(str(nested.pop("preset"))))
    elif given is not None:
        raise ValueError(f"retrieval must be a mode, a preset's name or a mapping of "
                         f"retrieval settings, got {given!r}")
    flat = {name: rest.pop(name) for name in list(rest)
            if name in RetrievalConfig.model_fields and name != "mode"}
    twice = sorted(set(flat) & set(nested))
    if twice:
        raise ValueError(f"retrieval setting given both flat and under retrieval: "
                         f"{', '.join(twice)}")
    if not flat and not nested:
        return start, rest
    return RetrievalConfig.model_validate({**dict(start), **nested, **flat}), rest
