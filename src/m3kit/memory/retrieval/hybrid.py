"""Hybrid search: BM25 (``lexical``) and dense vectors (``index``) over the same items, fused.

    hybrid = HybridIndex(embedder, make_index("faiss", dim=embedder.dim))
    hybrid.add(ids, texts)
    hybrid.search(RetrievalQuery(text="..."), k=10, allow=visible_ids)  # -> [(id, score), ...]

Each retriever searches *with the filter inside* (faiss's ID selector, FTS5's ``rowid IN``), so
under the causal cut the candidates are the best visible items, never a top-k of which some are
dropped afterwards. Their rankings are fused by reciprocal rank (``fusion``): BM25 finds the
rare words (names, drugs, numbers) an embedding blurs, the embedding finds the paraphrases
BM25 misses; which one is right varies by question, and the fusion keeps both.

``mode`` picks the retrievers: ``hybrid`` (both, the default), ``dense``, ``lexical``. With
``view_vectors`` (a factory of vector indexes) a hybrid index also searches each item's views
(``views``): the dense ranking scores an item by its best passage (MaxP; a short item is one
passage), and its turn window is ranked dense and by BM25; the four rankings (passages, BM25,
window dense, window BM25) are fused at equal weight unless ``fusion`` weighs them by name
(``fusion.FusionSettings``, which also picks min-max CombSUM over reciprocal ranks); with
``feedback`` a fifth ranking is BM25 of the question expanded by RM3 (``lexical``). A
``RetrievalQuery``'s expansions add their rankings at half weight; its compared parts get a
ranking each, and the rankings take turns (``search``); a scope (the ids of the
query's time scope, ``query``'s module doc; the sessions a coarse step chose) adds the rankings
again inside it, at its weight.

The same engine serves the memories that keep their vectors on disk (``videorag``,
``egorag``): built over indexes already filled (``vectors``, ``lexical``; a ``ShardedIndex``
for Video-RAG's per-shard search), with a precomputed query ``vector``, and with three settings
of their released searches: ``min_cosine`` (a dense hit below it is no hit: Video-RAG's
``rag_threshold``), ``ties`` (``id``: equal scores ordered by id, not by the order the items
were added, as EgoButler's level rankings are) and ``transient`` items (a level rebuilt at the
question's cut exists for one search only: its text joins the BM25 index for that search, its
vector is scored against the query directly). Per-shard and per-level filters are ``allow``
sets, as the causal cut is.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from itertools import zip_longest
from typing import TYPE_CHECKING, Literal

import numpy as np

from m3kit.memory.retrieval.config import RetrievalMode, checked_retrieval
from m3kit.memory.retrieval.fusion import EXPANSION_WEIGHT, RRF_C, FusionSettings
from m3kit.memory.retrieval.index import Hit, VectorIndex
from m3kit.memory.retrieval.lexical import LexicalIndex
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.retrieval.views import passages
from m3kit.perception.base import embed_queries

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

# Candidates each retriever contributes to the fusion: deep enough that an item ranked in the
# middle of both lists still surfaces, cheap at memory scale (exact search, thousands of items).
FUSION_DEPTH = 100
TieOrder = Literal["index", "id"]
"""How a ranking orders equal scores: as the indexes return them (insertion order), or by id."""
NamedRanking = tuple[str, list[Hit]]
"""One retriever's ranking: its name (``fusion.RANKINGS``) and its hits, best first, with the
retriever's own scores (cosine, BM25)."""


@dataclass(frozen=True)
class TransientItem:
    """An item that exists for one search only (a level rebuilt at the question's cut): its
    ``text`` joins the BM25 index for that search, its ``vector`` (unit length; ``None`` for a
    search that embeds nothing, ``lexical``) is scored against the query directly, not through
    the vector index (it is not in it)."""

    id: str
    text: str
    vector: np.ndarray | None


def unit_vector(vector: np.ndarray) -> np.ndarray:
    """``vector`` divided by its length (a zero vector as it is)."""
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


def _embedded(item: TransientItem) -> np.ndarray:
    if item.vector is None:
        raise ValueError(f"transient item {item.id!r} has no vector for a dense search")
    return item.vector


class HybridIndex:
    """A dense index and a BM25 index over the same (id, text) pairs, searched together;
    with ``view_vectors`` (hybrid mode only), the items' passages and turn windows too.

    ``lexical``: a BM25 index already filled with the texts of ``vectors`` (a stored memory's,
    rebuilt on load); default: an empty one, filled by ``add``. ``min_cosine``: dense hits
    below it are left out (before the fusion). ``ties``: ``TieOrder``. ``fusion``: the method
    and the weight of each ranking (``fusion.FusionSettings``; default: reciprocal rank, equal
    weights). ``feedback``: a hybrid search also ranks, by BM25, the question expanded by
    pseudo-relevance feedback (``LexicalIndex.feedback_terms``)."""

    def __init__(self, embedder: TextEmbedder, vectors: VectorIndex, *,
                 mode: RetrievalMode = "hybrid", depth: int = FUSION_DEPTH,
                 c: int = RRF_C,
                 view_vectors: Callable[[], VectorIndex] | None = None,
                 lexical: LexicalIndex | None = None,
                 min_cosine: float | None = None,
                 ties: TieOrder = "index",
                 fusion: FusionSettings | None = None,
                 feedback: bool = False) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.lexical = lexical if lexical is not None else LexicalIndex()
        self.mode = checked_retrieval(mode)
        self.depth = depth
        self.c = c
        self.min_cosine = min_cosine
        self.ties = ties
        self.fusion = fusion or FusionSettings()
        self.feedback = feedback and mode == "hybrid"
        # Transient texts join ``lexical`` for one search: no other search may run meanwhile.
        self._lexical_lock = threading.Lock()
        self.views = view_vectors is not None and mode == "hybrid"
        if view_vectors is not None and self.views:
            self.passage_vectors = view_vectors()
            self.window_vectors = view_vectors()
            self.window_lexical = LexicalIndex()
        self._passages_of: dict[str, list[str]] = {}
        self._owner: dict[str, str] = {}

    def add(self, ids: Sequence[str], texts: Sequence[str],
            windows: Sequence[str] | None = None) -> None:
        """Index ``texts`` under ``ids`` in both engines (blank texts are left out: they cannot
        be retrieved); with views, their passages and ``windows`` (each text's turn window,
        ``views.turn_windows``; default: the text itself) too. Each distinct text is embedded
        once. Runs the embedder: call it from a worker thread."""
        if windows is None:
            windows = texts
        if not len(ids) == len(texts) == len(windows):
            raise ValueError(f"got {len(ids)} ids, {len(texts)} texts, {len(windows)} windows")
        kept = [n for n, t in enumerate(texts) if t.strip()]
        kept_ids, kept_texts = [ids[n] for n in kept], [texts[n] for n in kept]
        if self.mode != "dense":
            self.lexical.add(kept_ids, kept_texts)
        if self.mode == "lexical":
            return
        split = ({i: passages(t) for i, t in zip(kept_ids, kept_texts, strict=True)}
                 if self.views else {})
        kept_windows = [windows[n] for n in kept]
        wanted = kept_texts + [p for ps in split.values() for p in ps] + (
            kept_windows if self.views else [])
        distinct = list(dict.fromkeys(wanted))
        vectors = self.embedder.embed(distinct)
        row = {t: n for n, t in enumerate(distinct)}
        self.vectors.add(kept_ids, vectors[[row[t] for t in kept_texts]])
        if not self.views:
            return
        passage_ids: list[str] = []
        for i, ps in split.items():
            self._passages_of[i] = [f"{i}#{n}" for n in range(len(ps))]
            passage_ids += self._passages_of[i]
            self._owner.update({p: i for p in self._passages_of[i]})
        self.passage_vectors.add(passage_ids, vectors[[row[p] for ps in split.values()
                                                       for p in ps]])
        self.window_vectors.add(kept_ids, vectors[[row[w] for w in kept_windows]])
        self.window_lexical.add(kept_ids, kept_windows)

    def rankings(self, text: str, depth: int, allow: Collection[str] | None,
                 vector: np.ndarray | None = None,
                 transient: Sequence[TransientItem] = ()) -> list[NamedRanking]:
        """The ranking of each retriever of ``mode`` (and of each view, and the feedback's)
        for ``text`` (embedded, unless its ``vector`` is given) among ``allow``, by name."""
        out: list[NamedRanking] = []
        if self.mode != "lexical":
            if vector is None:
                vector = embed_queries(self.embedder, [text])
            if self.views:  # an item's dense score is its best passage's (MaxP)
                out.append(("dense", self._best_passages(vector, depth, allow)))
            else:
                out.append(("dense", self._dense(vector, depth, allow, transient)))
        if self.mode != "dense":
            out.append(("bm25", self._lexical(text, depth, allow, transient)))
        if self.views and vector is not None:
            out.append(("window_dense",
                        self.window_vectors.search(vector, depth, allow=allow)[0]))
            out.append(("window_bm25", self.window_lexical.search(text, depth, allow=allow)))
        if self.feedback:
            terms = self.lexical.feedback_terms(text, allow=allow)
            if terms:
                out.append(("feedback", self._lexical(" ".join([text, *terms]), depth, allow,
                                                      transient)))
        return out

    def _dense(self, vector: np.ndarray, depth: int, allow: Collection[str] | None,
               transient: Sequence[TransientItem] = ()) -> list[Hit]:
        """The ``depth`` best items among ``allow`` by cosine (the transient ones scored
        directly), at or above ``min_cosine``."""
        hits = self.vectors.search(vector, depth, allow=allow)[0]
        if transient:
            query = unit_vector(np.asarray(vector, dtype=np.float32).reshape(-1))
            hits = sorted([*hits, *((t.id, float(_embedded(t) @ query)) for t in transient
                                    if allow is None or t.id in allow)],
                          key=lambda hit: -hit[1])
        hits = self._ordered(hits)[:depth]
        if self.min_cosine is None:
            return hits
        return [hit for hit in hits if hit[1] >= self.min_cosine]

    def _lexical(self, text: str, depth: int, allow: Collection[str] | None,
                 transient: Sequence[TransientItem] = ()) -> list[Hit]:
        """The ``depth`` best items among ``allow`` by BM25, the transient texts in the index
        for this search (so they count in the term statistics, as if stored)."""
        ids = [t.id for t in transient]
        with self._lexical_lock:
            if not ids:
                return self._ordered(self.lexical.search(text, depth, allow=allow))
            self.lexical.add(ids, [t.text for t in transient])
            try:
                hits = self.lexical.search(text, depth, allow=allow)
            finally:
                self.lexical.remove(ids)
        return self._ordered(hits)

    def _ordered(self, hits: list[Hit]) -> list[Hit]:
        """``hits`` (best first) with equal scores by id when ``ties`` says so."""
        return sorted(hits, key=lambda hit: (-hit[1], hit[0])) if self.ties == "id" else hits

    def _best_passages(self, vector: np.ndarray, depth: int, allow: Collection[str] | None
                       ) -> list[Hit]:
        """Items by their best passage's cosine (MaxP), best first, among ``allow``."""
        if allow is None:
            allowed = None
            count = len(self._owner)
        else:
            allowed = [p for i in allow for p in self._passages_of.get(i, ())]
            count = len(allowed)
        if count == 0:
            return []
        # Enough passages that ``depth`` distinct items surface even when the best items
        # are long (several passages each).
        hits = self.passage_vectors.search(vector, min(count, 4 * depth), allow=allowed)[0]
        if self.min_cosine is not None:
            hits = [hit for hit in hits if hit[1] >= self.min_cosine]
        best: dict[str, float] = {}
        for passage, score in hits:  # best first: an item's first passage is its best
            best.setdefault(self._owner[passage], score)
        return list(best.items())[:depth]

    def search(self, query: RetrievalQuery | str, k: int, *,
               allow: Collection[str] | None = None,
               scopes: Sequence[Collection[str]] = (),
               scope_weights: Sequence[float] | None = None,
               vector: np.ndarray | None = None,
               transient: Sequence[TransientItem] = ()) -> list[Hit]:
        """The ``k`` best ids for ``query`` among ``allow``, by fused score (normalised
        reciprocal rank, ``fusion``); each of ``scopes`` (the ids of the query's time scope,
        of the sessions a coarse step chose) is ranked again among itself and fused in with
        its weight in ``scope_weights`` (default 1 each). A single retriever's score is its
        own (cosine or BM25) when ``mode`` is ``dense`` or ``lexical`` and nothing else is
        fused. ``vector``: the query text's embedding when the caller has it; ``transient``:
        items that join this search only (``TransientItem``)."""
        if isinstance(query, str):
            query = RetrievalQuery(text=query)
        if k <= 0:
            return []
        depth = max(k, self.depth)
        allowed = None if allow is None else set(allow)
        if self.mode != "hybrid" and len(query.texts) == 1 and not any(scopes):
            if self.mode == "lexical":
                return self._lexical(query.text, k, allowed, transient)
            if vector is None:
                vector = embed_queries(self.embedder, [query.text])
            return self._dense(vector, k, allowed, transient)
        if vector is None and self.mode != "lexical":
            vector = embed_queries(self.embedder, [query.text])
        weighted = zip(scopes, scope_weights or [1.0] * len(scopes), strict=True)
        insides = [(set(s) if allowed is None else set(s) & allowed, w) for s, w in weighted]
        insides = [(s, w) for s, w in insides if s and w > 0]

        def fused(text: str, text_vector: np.ndarray | None, extra: Sequence[str] = ()
                  ) -> list[Hit]:
            weighted: list[tuple[NamedRanking, float]] = [
                (r, 1.0) for r in self.rankings(text, depth, allowed, text_vector, transient)]
            for inside, weight in insides:
                weighted += [(r, weight) for r in self.rankings(text, depth, inside,
                                                                text_vector, transient)]
            for expansion in extra:
                weighted += [(r, EXPANSION_WEIGHT)
                             for r in self.rankings(expansion, depth, allowed, None, transient)]
            return self._ordered(self.fusion.fuse(
                [hits for (_, hits), _ in weighted],
                [w * self.fusion.weight(name) for (name, _), w in weighted], c=self.c))

        main = fused(query.text, vector, query.expansions)
        if not query.parts:
            return main[:k]
        # A comparison needs the evidence of each thing compared: the parts' rankings take
        # turns (each part's best, then each part's second...), the question's own ranking
        # after them; fusing them into one sum would favour items that half-match both.
        turns = [[i for i, _ in fused(part, None)] for part in query.parts]
        turns.append([i for i, _ in main])
        order = list(dict.fromkeys(i for rank in zip_longest(*turns) for i in rank
                                   if i is not None))
        return [(i, (self.c + 1) / (self.c + n)) for n, i in enumerate(order[:k], start=1)]

    def __len__(self) -> int:
        return max(len(self.vectors), len(self.lexical))
