"""``VectorMemory``: the base of the memories that search texts by embedding and BM25.

What ``IndexedMemory`` (indexes built in the process) and ``PersistentMemory`` (indexes
stored on disk) share: a text embedder (all-MiniLM-L6-v2 unless one is given, by object or by
name, loaded on first use), the search (``retrieval``: a ``RetrievalConfig``, by default the class's
``default_retrieval``) with the vector engine new indexes are made with, its expander and its
rerank stage built from their names, and query rewriting. Each keeps only what differs: what
is built, and whether it is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from m3kit.memory.base import Memory, MemoryItem
from m3kit.memory.retrieval.config import DEFAULT_RETRIEVAL, RetrievalConfig
from m3kit.memory.retrieval.expansion import ModelQueryExpander
from m3kit.memory.retrieval.index import VectorIndex, new_vectors
from m3kit.memory.retrieval.query import RetrievalQuery, rewrite_query, session_spans
from m3kit.memory.retrieval.rerank import RerankStage
from m3kit.memory.retrieval.rerankers import named_reranker

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder


class VectorMemory(Memory):
    """A memory with a text embedder and a search (``retrieval``, see the module doc).

    ``expander`` and ``rerank_stage`` are the search's expander and reranker as objects (a
    name in the record stands for an inspect model's, or ``maxsim`` for the late-interaction
    reranker over this memory's MiniLM); ``None`` when the search has none.
    """

    default_retrieval: ClassVar[RetrievalConfig] = DEFAULT_RETRIEVAL

    def __init__(self, *, embedder: TextEmbedder | str | None,
                 retrieval: RetrievalConfig | None) -> None:
        super().__init__()
        if isinstance(embedder, str):  # a name (``memory_config`` is YAML): built lazily
            from m3kit.perception.embeddings import EMBEDDERS

            if embedder not in EMBEDDERS:
                raise ValueError(f"unknown embedder {embedder!r}; known: "
                                 f"{', '.join(EMBEDDERS)}")
        self._embedder = embedder
        self.retrieval = retrieval or self.default_retrieval
        expander, reranker = self.retrieval.expander, self.retrieval.reranker
        # A string names an inspect model (``memory_config`` arrives as YAML).
        self.expander = ModelQueryExpander(expander) if isinstance(expander, str) else expander
        if isinstance(reranker, str):  # ``maxsim`` shares this memory's MiniLM
            reranker = named_reranker(reranker, self.embedder)
        self.rerank_stage = (RerankStage(reranker, depth=self.retrieval.rerank_depth)
                             if reranker else None)

    def embedder(self) -> TextEmbedder:
        """The text embedder (all-MiniLM-L6-v2 unless one was given, by object or by name:
        ``perception.embeddings.EMBEDDERS``); loads on first use."""
        if self._embedder is None or isinstance(self._embedder, str):
            from m3kit.perception.embeddings import DEFAULT_EMBEDDER, named_embedder

            self._embedder = named_embedder(self._embedder or DEFAULT_EMBEDDER)
        return self._embedder

    def empty_vectors(self) -> VectorIndex:
        """A new, empty index of the search's vector engine at the embedder's dimension
        (loads the embedder)."""
        return new_vectors(self.retrieval.index, self.embedder().dim)

    def search_config(self) -> dict[str, Any]:
        """The embedder's name and the search's record (``RetrievalConfig``: objects by their
        names), for ``config()``."""
        return {"embedder": self.embedder().name,
                **self.retrieval.model_dump(mode="json", by_alias=True)}

    def rewrite(self, query: str, visible: Sequence[MemoryItem],
                expansions: Sequence[str] = ()) -> RetrievalQuery:
        """``query`` rewritten (``query.rewrite_query``), its time scope among the sessions of
        ``visible``; the question is asked after the last visible item. Without the search's
        ``rewriting``: the bare question (and the expansions)."""
        if not self.retrieval.rewriting:
            return RetrievalQuery(text=query, expansions=tuple(expansions))
        times = [i.time for i in visible if i.time is not None]
        return rewrite_query(query, session_spans(visible), now=max(times) if times else None,
                             expansions=expansions)
