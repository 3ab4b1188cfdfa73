"""Vector indexes behind one small interface: an embedded default now, server engines later.

A memory keeps one index per memory key, so keys never share vectors. Scores are cosine
similarities: vectors are L2-normalised on the way in (zero vectors stay zero and score 0).

    index = make_index("faiss", dim=384)
    index.add(["a", "b"], vectors)
    index.search(query_vectors, k=5, allow={"a"})   # -> [[("a", 0.93)], ...]

``allow`` restricts a search to some ids *inside* the engine (faiss: an ``IDSelector``; Qdrant:
a payload filter; pgvector: a ``WHERE``), so a filtered search is as exact as an unfiltered one.
Memories use it for the causal cut: only items recorded before the question's time compete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

Hit = tuple[str, float]
"""One search result: an item id and its cosine similarity to the query."""


@runtime_checkable
class VectorIndex(Protocol):
    """Nearest neighbours by cosine similarity over string ids."""

    name: str
    dim: int

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Store one vector per id; an id already stored is an error."""
        ...

    def remove(self, ids: Iterable[str]) -> int:
        """Forget these ids (unknown ones are ignored); returns how many were removed."""
        ...

    def search(
        self, vectors: np.ndarray, k: int, *, allow: Collection[str] | None = None
    ) -> list[list[Hit]]:
        """For each query row, up to ``k`` hits, best first, among ``allow`` when given."""
        ...

    def __len__(self) -> int: ...


class FaissIndex:
    """The embedded default: an exact inner-product index (``faiss.IndexFlatIP``).

    Exact search is the right default at memory scale (thousands of items per key): no training,
    no recall loss, and it answers in well under a millisecond. Every call holds one lock: faiss
    indexes are not safe to read while they are written, and a flat search is so short that
    serialising searches costs nothing next to embedding the query.
    """

    name = "faiss"

    def __init__(self, dim: int) -> None:
        import faiss  # imported on first use: ``m3kit.memory`` must import without it

        if dim <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        self.dim = dim
        self._faiss = faiss
        # IDMap2 keeps our int64 labels stable across ``remove`` (a bare flat index renumbers).
        self._index = faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self._label_of: dict[str, int] = {}
        self._id_of: dict[int, str] = {}
        self._next_label = 0
        self._lock = threading.Lock()

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = _rows(vectors, self.dim, len(ids))
        with self._lock:
            _check_new(ids, self._label_of)
            labels = np.arange(self._next_label, self._next_label + len(ids), dtype=np.int64)
            if len(ids):
                self._index.add_with_ids(matrix, labels)
            for item_id, label in zip(ids, labels.tolist(), strict=True):
                self._label_of[item_id] = label
                self._id_of[label] = item_id
            self._next_label += len(ids)

    def remove(self, ids: Iterable[str]) -> int:
        with self._lock:
            labels = [self._label_of.pop(i) for i in dict.fromkeys(ids) if i in self._label_of]
            for label in labels:
                del self._id_of[label]
            if not labels:
                return 0
            # faiss's stub gives the C++ signature (an IDSelector); its Python wrapper
            # (class_wrappers.replacement_remove_ids) takes an array of ids.
            ids_array = np.asarray(labels, dtype=np.int64)
            return int(self._index.remove_ids(ids_array))  # type: ignore[arg-type]

    def search(
        self, vectors: np.ndarray, k: int, *, allow: Collection[str] | None = None
    ) -> list[list[Hit]]:
        queries = _rows(vectors, self.dim)
        with self._lock:
            params = None
            if allow is not None:
                allowed = np.fromiter(
                    (self._label_of[i] for i in allow if i in self._label_of), dtype=np.int64
                )
                if allowed.size == 0:
                    return [[] for _ in range(len(queries))]
                # The stub gives SearchParameters no arguments; faiss's Python wrapper
                # (class_wrappers.handle_SearchParameters) sets fields from keywords.
                params = self._faiss.SearchParameters(  # type: ignore[call-arg]
                    sel=self._faiss.IDSelectorBatch(allowed))
                k = min(k, int(allowed.size))
            k = min(k, len(self._label_of))
            if k <= 0 or len(queries) == 0:
                return [[] for _ in range(len(queries))]
            scores, labels = self._index.search(queries, k, params=params)
            # faiss pads with label -1 when fewer than k vectors qualify.
            return [
                [(self._id_of[int(label)], float(score))
                 for score, label in zip(row_scores, row_labels, strict=True) if label >= 0]
                for row_scores, row_labels in zip(scores, labels, strict=True)
            ]

    def __len__(self) -> int:
        return len(self._label_of)

    def __repr__(self) -> str:
        return f"FaissIndex(dim={self.dim}, size={len(self)})"


class NumpyIndex:
    """Brute-force cosine search in numpy: the exactness reference, and the fallback where faiss
    is not installed. Ties rank in insertion order."""

    name = "numpy"

    def __init__(self, dim: int) -> None:
        if dim <= 0:
            raise ValueError(f"dim must be positive, got {dim}")
        self.dim = dim
        self._ids: list[str] = []
        self._matrix = np.zeros((0, dim), dtype=np.float32)
        self._lock = threading.Lock()

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        matrix = _rows(vectors, self.dim, len(ids))
        with self._lock:
            _check_new(ids, dict.fromkeys(self._ids))
            self._ids = [*self._ids, *ids]
            self._matrix = np.concatenate([self._matrix, matrix])

    def remove(self, ids: Iterable[str]) -> int:
        drop = set(ids)
        with self._lock:
            keep = [n for n, i in enumerate(self._ids) if i not in drop]
            removed = len(self._ids) - len(keep)
            self._ids = [self._ids[n] for n in keep]
            self._matrix = self._matrix[keep]
            return removed

    def search(
        self, vectors: np.ndarray, k: int, *, allow: Collection[str] | None = None
    ) -> list[list[Hit]]:
        queries = _rows(vectors, self.dim)
        with self._lock:
            ids, matrix = self._ids, self._matrix
        columns = np.arange(len(ids))
        if allow is not None:
            allowed = set(allow)
            columns = np.asarray([n for n, i in enumerate(ids) if i in allowed], dtype=np.int64)
        out: list[list[Hit]] = []
        for query in queries:
            scores = matrix[columns] @ query
            order = np.argsort(-scores, kind="stable")[: max(k, 0)]
            out.append([(ids[int(columns[n])], float(scores[n])) for n in order])
        return out

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"NumpyIndex(dim={self.dim}, size={len(self)})"


IndexFactory = Callable[..., VectorIndex]

# Engines by name. A server engine (Qdrant, pgvector) joins here with its connection options
# passed through ``make_index(name, dim=..., **options)``.
_ENGINES: dict[str, IndexFactory] = {"faiss": FaissIndex, "numpy": NumpyIndex}
INDEXES: tuple[str, ...] = tuple(_ENGINES)


def make_index(name: str = "faiss", *, dim: int, **options: Any) -> VectorIndex:
    """A new, empty index of engine ``name`` for ``dim``-dimensional vectors."""
    try:
        factory = _ENGINES[name]
    except KeyError:
        raise ValueError(f"unknown vector index {name!r}; known: {', '.join(INDEXES)}") from None
    return factory(dim, **options)


def new_vectors(engine: str | IndexFactory, dim: int) -> VectorIndex:
    """An empty index for ``dim``-dimensional vectors: of the engine named ``engine``
    (``make_index``), or made by ``engine``, a factory ``(dim) -> VectorIndex``."""
    return make_index(engine, dim=dim) if isinstance(engine, str) else engine(dim)


def _rows(vectors: np.ndarray, dim: int, count: int | None = None) -> np.ndarray:
    """``vectors`` as a C-contiguous float32 (n, dim) matrix with unit-length rows."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    if matrix.ndim != 2 or matrix.shape[1] != dim:
        raise ValueError(f"expected vectors of shape (n, {dim}), got {np.shape(vectors)}")
    if count is not None and matrix.shape[0] != count:
        raise ValueError(f"got {count} ids but {matrix.shape[0]} vectors")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.ascontiguousarray(matrix / np.where(norms > 0, norms, 1.0), dtype=np.float32)


def _check_new(ids: Sequence[str], known: Collection[str]) -> None:
    seen: set[str] = set()
    for item_id in ids:
        if item_id in known or item_id in seen:
            raise ValueError(f"id {item_id!r} is already in the index")
        seen.add(item_id)
