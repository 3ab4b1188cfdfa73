"""``ShardedIndex``: several vector indexes searched as one, an index per shard of the stream.

Video-RAG (Luo et al., 2024) as SuperMemory-VQA adapts it keeps one index per 30-minute shard
and answers by searching every shard and merging the hits. Merging per-shard top-``k`` lists by
score gives the same hits as one search over all the vectors, but not the same order among
equal scores (the same text read on keyframes of two shards embeds to the same vector): here
equal scores keep shard order, then each shard's own, as the released search has them.

    index = ShardedIndex(384, lambda: make_index("faiss", dim=384), {"a": 0, "b": 1}.get)
    index.add(["a", "b"], vectors)
    index.search(query_vectors, k=5, allow={"a", "b"})   # each shard among its allowed ids
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Sequence

import numpy as np

from m3kit.memory.retrieval.index import Hit, VectorIndex


class ShardedIndex:
    """A ``VectorIndex`` of ``dim``-dimensional vectors, one index per shard: ``shard_of(id)``
    says an id's shard (``None``: shard 0), ``make()`` makes a shard's empty index. A search
    runs in every shard that holds an allowed id, among those ids (the filter stays inside each
    engine), and merges the hits by score, best first; equal scores in shard order."""

    name = "sharded"

    def __init__(self, dim: int, make: Callable[[], VectorIndex],
                 shard_of: Callable[[str], int | None]) -> None:
        self.dim = dim
        self._make = make
        self._shard_of = shard_of
        self._shards: dict[int, VectorIndex] = {}
        self._home: dict[str, int] = {}  # id -> the shard that holds it
        self._lock = threading.Lock()

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        rows: dict[int, list[int]] = {}
        for n, item_id in enumerate(ids):
            rows.setdefault(self._shard_of(item_id) or 0, []).append(n)
        matrix = np.asarray(vectors)
        with self._lock:
            for shard, picked in rows.items():
                index = self._shards.get(shard)
                if index is None:
                    index = self._shards[shard] = self._make()
                index.add([ids[n] for n in picked], matrix[picked])
                self._home.update({ids[n]: shard for n in picked})

    def remove(self, ids: Iterable[str]) -> int:
        with self._lock:
            found: dict[int, list[str]] = {}
            for item_id in dict.fromkeys(ids):
                if item_id in self._home:
                    found.setdefault(self._home.pop(item_id), []).append(item_id)
            return sum(self._shards[shard].remove(gone) for shard, gone in found.items())

    def search(self, vectors: np.ndarray, k: int, *, allow: Collection[str] | None = None
               ) -> list[list[Hit]]:
        with self._lock:
            shards = dict(self._shards)
            wanted: dict[int, list[str]] | None = None
            if allow is not None:
                wanted = {}
                for item_id in allow:
                    if item_id in self._home:
                        wanted.setdefault(self._home[item_id], []).append(item_id)
        queries = np.asarray(vectors)
        if queries.ndim == 1:
            queries = queries[None, :]
        order = sorted(shards if wanted is None else wanted)
        out: list[list[Hit]] = []
        for query in queries:
            hits = [hit for shard in order for hit in shards[shard].search(
                query, k, allow=None if wanted is None else wanted[shard])[0]]
            out.append(sorted(hits, key=lambda hit: -hit[1])[: max(k, 0)])
        return out

    def __len__(self) -> int:
        return sum(len(index) for index in self._shards.values())

    def __repr__(self) -> str:
        return f"ShardedIndex(shards={len(self._shards)}, size={len(self)})"
