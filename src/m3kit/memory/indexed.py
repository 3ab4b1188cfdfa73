"""``IndexedMemory``: the base of the memories that retrieve by text.

What ``rag``, ``hierarchical`` and ``proctor`` share: a text embedder (all-MiniLM-L6-v2 unless
one is given, loaded on first use), a vector engine, one hybrid index per memory key
(``hybrid``: BM25 and dense vectors, fused), built once from (id, text) pairs and searched with
the visible ids as a filter inside each engine, and an OCR reader for the surrogates of frames
and images (``OcrSurrogates``).

Each item is indexed under its own text and, by default, under its views (``views``: its
passages, and its turn window when it is a short turn), each a ranking of its own in the fusion.

A search (``ranked``) runs three steps: query rewriting (``query``: the question without its
answer-format instructions, the parts it compares, the sessions its time words point at, and a
``QueryExpander``'s texts when one is given), the fused first stage, and a reranker over the
top candidates when one is given (``rerank``: failures fall back to the first stage,
counted). The offline default is hybrid retrieval with views and rewriting, no expander and no
reranker.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Collection, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.memory.base import Memory, MemoryEvent, MemoryItem
from m3kit.memory.ocr import OcrSurrogates
from m3kit.memory.retrieval.expansion import ModelQueryExpander
from m3kit.memory.retrieval.hybrid import HybridIndex, RetrievalMode, checked_retrieval
from m3kit.memory.retrieval.index import Hit, IndexFactory, VectorIndex, make_index
from m3kit.memory.retrieval.query import QueryExpander, RetrievalQuery, rewrite_query, session_spans
from m3kit.memory.retrieval.rerank import Reranker, RerankStage, named_reranker
from m3kit.memory.retrieval.views import turn_windows

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder, TextReader


# A coarse step's sessions are a guess from summaries; a time scope is the question's own
# words: the guess weighs half (on Alex_Veterinarian, full weight let the routed sessions crowd
# out the evidence of multi-session questions).
ROUTING_WEIGHT = 0.5


class IndexedMemory(OcrSurrogates, Memory):
    """A memory with a text embedder and a hybrid index per key.

    Subclasses say what to store and what to index (``_prepare``); the build runs it and the
    embedder in a worker thread and keeps the index. ``ocr`` (set by subclasses) hands the OCR
    ``reader`` to ``_prepare``. ``retrieval`` picks the first stage (``hybrid``, ``dense``,
    ``lexical``); ``views`` adds the items' passages and turn windows to a hybrid search
    (``views``); ``rewriting`` rewrites the question (``query``: format instructions out,
    compared parts, the time scope; off: the bare question);
    ``expander`` adds query texts; ``reranker`` reorders the top ``rerank_depth`` (each: an
    object, or a name: ``maxsim`` for the late-interaction reranker, else an inspect model's
    for the model-backed one).
    """

    def __init__(
        self,
        *,
        embedder: TextEmbedder | None = None,
        index: str | IndexFactory = "faiss",
        reader: TextReader | None = None,
        retrieval: RetrievalMode = "hybrid",
        views: bool = True,
        rewriting: bool = True,
        expander: QueryExpander | str | None = None,
        reranker: Reranker | str | None = None,
        rerank_depth: int = 30,
    ) -> None:
        super().__init__()
        self.index_engine = index
        self.retrieval = checked_retrieval(retrieval)
        self.views = views and self.retrieval == "hybrid"  # views are rankings of a fusion
        self.rewriting = rewriting
        # A string names an inspect model (``memory_config`` arrives as JSON).
        self.expander = (ModelQueryExpander(expander) if isinstance(expander, str)
                         else expander)
        if isinstance(reranker, str):  # ``maxsim`` shares this memory's MiniLM
            reranker = named_reranker(reranker, self.embedder)
        self.rerank_stage = RerankStage(reranker, depth=rerank_depth) if reranker else None
        self._embedder = embedder
        self._text_reader = reader
        self._indexes: dict[str, HybridIndex] = {}

    def embedder(self) -> TextEmbedder:
        """The text embedder (all-MiniLM-L6-v2 unless one was given); loads on first use."""
        if self._embedder is None:
            from m3kit.perception.embeddings import MiniLMEmbedder

            self._embedder = MiniLMEmbedder()
        return self._embedder

    def index(self, key: str) -> VectorIndex:
        """The vector index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key].vectors

    def hybrid(self, key: str) -> HybridIndex:
        """The hybrid (BM25 + vector) index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key]

    def index_config(self) -> dict[str, Any]:
        """The embedder, the vector engine and the retrieval steps: what every indexed
        memory's config names."""
        engine = self.index_engine
        stage = self.rerank_stage
        return {
            "embedder": self.embedder().name,
            "index": engine if isinstance(engine, str) else getattr(engine, "name", repr(engine)),
            "retrieval": self.retrieval,
            "views": self.views,
            "rewriting": self.rewriting,
            "expander": self.expander.name if self.expander else None,
            "reranker": stage.name if stage else None,
            "rerank_depth": stage.depth if stage else None,
        }

    def new_index(self, ids: Sequence[str], texts: Sequence[str],
                  windows: Sequence[str] | None = None) -> HybridIndex:
        """A fresh hybrid index of ``texts`` under ``ids`` (blank texts are left out: they
        cannot be retrieved), with the views (``windows``: each text's turn window) when
        ``views`` is on. Runs the embedder: call it from a worker thread."""
        embedder = self.embedder()
        factory = self.index_engine

        def vectors() -> VectorIndex:
            return (make_index(factory, dim=embedder.dim) if isinstance(factory, str)
                    else factory(embedder.dim))

        index = HybridIndex(embedder, vectors(), mode=self.retrieval,
                            view_vectors=vectors if self.views else None)
        index.add(ids, texts, windows if self.views else None)
        return index

    def indexed_item(self, index_id: str, items: dict[str, MemoryItem]) -> MemoryItem | None:
        """The item an index id stands for (``items``: by item id), ``None`` for an index entry
        that is not an item of the conversation (a summary under an id of its own)."""
        return items.get(index_id)

    def rewrite(self, query: str, visible: Sequence[MemoryItem],
                expansions: Sequence[str] = ()) -> RetrievalQuery:
        """``query`` rewritten (``query.rewrite_query``), its time scope among the sessions of
        ``visible``; the question is asked after the last visible item. With
        ``rewriting=False``: the bare question (and the expansions)."""
        if not self.rewriting:
            return RetrievalQuery(text=query, expansions=tuple(expansions))
        times = [i.time for i in visible if i.time is not None]
        return rewrite_query(query, session_spans(visible), now=max(times) if times else None,
                             expansions=expansions)

    def search(self, key: str, query: str | RetrievalQuery, k: int, allow: Sequence[str],
               scopes: Sequence[Sequence[str]] = (),
               scope_weights: Sequence[float] | None = None) -> list[Hit]:
        """The ``k`` best hits for ``query`` among the ids ``allow`` in the index of ``key``
        (the first stage, no reranking); ``scopes``: id sets ranked again among themselves,
        fused in with ``scope_weights`` (``HybridIndex.search``). Runs the embedder: call it
        from a worker thread."""
        return self._indexes[key].search(query, k, allow=list(allow), scopes=scopes,
                                         scope_weights=scope_weights)

    async def ranked(self, key: str, query: str, k: int, candidates: dict[str, MemoryItem],
                     *, visible: Sequence[MemoryItem] | None = None,
                     sessions: Collection[str] = ()) -> list[Hit]:
        """The ``k`` best of ``candidates`` (index id -> the item it stands for) for
        ``query``: rewritten against the sessions of ``visible`` (default: the candidates),
        searched with the candidates as the filter, the items of the query's time scope and
        of ``sessions`` (a coarse step's choice) each fused in as a scope, reranked when a
        reranker is set."""
        if not candidates:
            return []
        expansions = await self.expander.expand(query) if self.expander else []
        rewritten = self.rewrite(query, list(visible if visible is not None
                                             else candidates.values()), expansions)
        wanted = [(set(rewritten.scope.sessions), 1.0)] if rewritten.scope is not None else []
        if sessions:
            wanted.append((set(sessions), ROUTING_WEIGHT))
        scopes = [[i for i, item in candidates.items() if item.metadata.get("session_id") in s]
                  for s, _ in wanted]
        stage = self.rerank_stage
        depth = max(k, stage.depth) if stage else k
        hits = await anyio.to_thread.run_sync(
            partial(self.search, key, rewritten, depth, list(candidates), scopes,
                    [w for _, w in wanted]))
        if stage is not None:
            # The reranker reads the question without its answer-format instructions too.
            hits = await stage.apply(rewritten.text, hits,
                                     {i: candidates[i].text for i, _ in hits})
        return hits[:k]

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        reader = self.build_reader()

        def build() -> list[MemoryItem]:
            items, ids, texts = self._prepare(key, events, reader)
            by_id = {item.id: item for item in items}
            windows = (turn_windows([self.indexed_item(i, by_id) for i in ids], texts)
                       if self.views else None)
            self._indexes[key] = self.new_index(ids, texts, windows)
            return items

        return await anyio.to_thread.run_sync(build)

    def _forget(self, key: str) -> None:
        self._indexes.pop(key, None)

    @abstractmethod
    def _prepare(self, key: str, events: list[MemoryEvent], reader: TextReader | None
                 ) -> tuple[list[MemoryItem], list[str], list[str]]:
        """(the items of ``key``, the ids to index, their texts). Runs in a worker thread."""
