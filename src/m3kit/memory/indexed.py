"""``IndexedMemory``: the base of the memories that retrieve by text.

What ``rag``, ``hierarchical`` and ``proctor`` share: a text embedder (all-MiniLM-L6-v2 unless
one is given, loaded on first use; the M3Exam and LoCoMo tasks give ``rag`` and ``proctor``
multilingual-e5-small, ``benchmarks.m3exam.task``), a vector engine, one hybrid index per
memory key (``hybrid``: BM25 and dense vectors, fused), built once from (id, text) pairs and
searched with the visible ids as a filter inside each engine, and an OCR reader for the
surrogates of frames and images (``OcrSurrogates``).

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

from collections.abc import Collection, Sequence
from functools import partial
from typing import TYPE_CHECKING

import anyio

from m3kit.memory.base import MemoryEvent, MemoryItem
from m3kit.memory.events import items_from_events
from m3kit.memory.ocr import OcrSurrogates
from m3kit.memory.retrieval.hybrid import HybridIndex
from m3kit.memory.retrieval.index import Hit, VectorIndex
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.retrieval.views import turn_windows
from m3kit.memory.vectors import VectorMemory
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from m3kit.memory.retrieval.config import RetrievalConfig
    from m3kit.perception.base import TextEmbedder, TextReader


# A coarse step's sessions are a guess from summaries; a time scope is the question's own
# words: the guess weighs half (on Alex_Veterinarian, full weight let the routed sessions crowd
# out the evidence of multi-session questions).
ROUTING_WEIGHT = 0.5


class IndexedMemory(OcrSurrogates, VectorMemory):
    """A memory with a text embedder and a hybrid index per key.

    Subclasses say what to store and what to index (``_prepare``); the build runs it and the
    embedder in a worker thread and keeps the index. ``ocr`` (set by subclasses) hands the OCR
    ``reader`` to ``_prepare``. ``retrieval`` is the search (``retrieval.config``; default
    ``default_retrieval``): the first stage's mode, the vector engine, the views (the items'
    passages and turn windows), query rewriting (format instructions out, compared parts, the
    time scope; off: the bare question), an expander's query texts, a reranker over the top
    ``rerank_depth`` (a name: ``maxsim`` for the late-interaction reranker over this memory's
    MiniLM, else an inspect model's).
    """

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        reader: TextReader | None = None,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, retrieval=retrieval)
        self._text_reader = reader
        self._indexes: dict[str, HybridIndex] = {}

    def index(self, key: str) -> VectorIndex:
        """The vector index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key].vectors

    def hybrid(self, key: str) -> HybridIndex:
        """The hybrid (BM25 + vector) index of ``key`` (``KeyError`` before it is ingested)."""
        return self._indexes[key]

    def new_index(self, ids: Sequence[str], texts: Sequence[str],
                  windows: Sequence[str] | None = None) -> HybridIndex:
        """A fresh hybrid index of ``texts`` under ``ids`` (blank texts are left out: they
        cannot be retrieved), with the views (``windows``: each text's turn window) when
        the search has views. Runs the embedder: call it from a worker thread."""
        views = self.retrieval.views
        index = HybridIndex(self.embedder(), self.empty_vectors(), mode=self.retrieval.mode,
                            view_vectors=self.empty_vectors if views else None,
                            min_cosine=self.retrieval.min_cosine,
                            fusion=self.retrieval.fusion, feedback=self.retrieval.feedback)
        index.add(ids, texts, windows if views else None)
        return index

    def indexed_item(self, index_id: str, items: dict[str, MemoryItem]) -> MemoryItem | None:
        """The item an index id stands for (``items``: by item id), ``None`` for an index entry
        that is not an item of the conversation (a summary under an id of its own)."""
        return items.get(index_id)

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
                       if self.retrieval.views else None)
            self._indexes[key] = self.new_index(ids, texts, windows)
            return items

        return await anyio.to_thread.run_sync(build)

    def _forget(self, key: str) -> None:
        self._indexes.pop(key, None)

    def _prepare(self, key: str, events: list[MemoryEvent], reader: TextReader | None
                 ) -> tuple[list[MemoryItem], list[str], list[str]]:
        """(the items of ``key``, the ids to index, their texts). Runs in a worker thread. By
        default one item per event (``events.items_from_events``: frames and images through
        their descriptions and OCR text), each indexed by its text; what an event could not
        give is recorded as a skip."""
        skipped: list[SkippedRecord] = []
        items = items_from_events(key, events, reader=reader, skipped=skipped)
        self._skip(key, skipped)
        return items, [i.id for i in items], [i.text for i in items]
