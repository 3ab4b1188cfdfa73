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
window dense, window BM25) are fused at equal weight. A
``RetrievalQuery``'s expansions add their rankings at half weight; its compared parts get a
ranking each, and the rankings take turns (``search``); a scope (the ids of the
query's time scope, ``query``'s module doc; the sessions a coarse step chose) adds the rankings
again inside it, at its weight.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from itertools import zip_longest
from typing import TYPE_CHECKING, Literal

import numpy as np

from m3kit.memory.retrieval.fusion import RRF_C, reciprocal_rank_fusion
from m3kit.memory.retrieval.index import Hit, VectorIndex
from m3kit.memory.retrieval.lexical import LexicalIndex
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.retrieval.views import passages

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

RetrievalMode = Literal["hybrid", "dense", "lexical"]
RETRIEVAL_MODES: tuple[str, ...] = ("hybrid", "dense", "lexical")
# Candidates each retriever contributes to the fusion: deep enough that an item ranked in the
# middle of both lists still surfaces, cheap at memory scale (exact search, thousands of items).
FUSION_DEPTH = 100
# An expansion is a guess about the question; the question itself weighs double.
EXPANSION_WEIGHT = 0.5


def checked_retrieval(mode: str) -> RetrievalMode:
    """``mode`` when it is one of ``RETRIEVAL_MODES``, else ``ValueError`` naming them."""
    if mode not in RETRIEVAL_MODES:
        raise ValueError(f"unknown retrieval {mode!r}; known: {', '.join(RETRIEVAL_MODES)}")
    return mode  # type: ignore[return-value]


class HybridIndex:
    """A dense index and a BM25 index over the same (id, text) pairs, searched together;
    with ``view_vectors`` (hybrid mode only), the items' passages and turn windows too."""

    def __init__(self, embedder: TextEmbedder, vectors: VectorIndex, *,
                 mode: RetrievalMode = "hybrid", depth: int = FUSION_DEPTH,
                 c: int = RRF_C,
                 view_vectors: Callable[[], VectorIndex] | None = None) -> None:
        self.embedder = embedder
        self.vectors = vectors
        self.lexical = LexicalIndex()
        self.mode = checked_retrieval(mode)
        self.depth = depth
        self.c = c
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
        split = {i: passages(t) for i, t in zip(kept_ids, kept_texts)} if self.views else {}
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
                 vector: np.ndarray | None = None) -> list[list[str]]:
        """The ranking of each retriever of ``mode`` (and of each view) for ``text``
        (embedded, unless its ``vector`` is given) among ``allow``."""
        out: list[list[str]] = []
        if self.mode != "lexical":
            if vector is None:
                vector = self.embedder.embed([text])
            if self.views:  # an item's dense score is its best passage's (MaxP)
                out.append(self._best_passages(vector, depth, allow))
            else:
                out.append([i for i, _ in self.vectors.search(vector, depth, allow=allow)[0]])
        if self.mode != "dense":
            out.append([i for i, _ in self.lexical.search(text, depth, allow=allow)])
        if self.views and vector is not None:
            out.append([i for i, _ in self.window_vectors.search(vector, depth, allow=allow)[0]])
            out.append([i for i, _ in self.window_lexical.search(text, depth, allow=allow)])
        return out

    def _best_passages(self, vector: np.ndarray, depth: int, allow: Collection[str] | None
                       ) -> list[str]:
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
        owners = dict.fromkeys(self._owner[p] for p, _ in hits)
        return list(owners)[:depth]

    def search(self, query: RetrievalQuery | str, k: int, *,
               allow: Collection[str] | None = None,
               scopes: Sequence[Collection[str]] = (),
               scope_weights: Sequence[float] | None = None) -> list[Hit]:
        """The ``k`` best ids for ``query`` among ``allow``, by fused score (normalised
        reciprocal rank, ``fusion``); each of ``scopes`` (the ids of the query's time scope,
        of the sessions a coarse step chose) is ranked again among itself and fused in with
        its weight in ``scope_weights`` (default 1 each). A single retriever's score is its
        own (cosine or BM25) when ``mode`` is ``dense`` or ``lexical`` and nothing else is
        fused."""
        if isinstance(query, str):
            query = RetrievalQuery(text=query)
        if k <= 0:
            return []
        depth = max(k, self.depth)
        allowed = None if allow is None else set(allow)
        if self.mode != "hybrid" and len(query.texts) == 1 and not any(scopes):
            return self._single(query.text, k, allowed)
        vector = self.embedder.embed([query.text]) if self.mode != "lexical" else None
        weighted = zip(scopes, scope_weights or [1.0] * len(scopes), strict=True)
        insides = [(set(s) if allowed is None else set(s) & allowed, w) for s, w in weighted]
        insides = [(s, w) for s, w in insides if s and w > 0]

        def fused(text: str, text_vector: np.ndarray | None, extra: Sequence[str] = ()
                  ) -> list[Hit]:
            lists = self.rankings(text, depth, allowed, text_vector)
            weights = [1.0] * len(lists)
            for inside, weight in insides:
                found = self.rankings(text, depth, inside, text_vector)
                lists += found
                weights += [weight] * len(found)
            for expansion in extra:
                found = self.rankings(expansion, depth, allowed)
                lists += found
                weights += [EXPANSION_WEIGHT] * len(found)
            return reciprocal_rank_fusion(lists, weights=weights, c=self.c)

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

    def _single(self, text: str, k: int, allow: Collection[str] | None) -> list[Hit]:
        if self.mode == "dense":
            return self.vectors.search(self.embedder.embed([text]), k, allow=allow)[0]
        return self.lexical.search(text, k, allow=allow)

    def __len__(self) -> int:
        return max(len(self.vectors), len(self.lexical))
