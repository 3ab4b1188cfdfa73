"""Vector indexes: faiss's exact search equals brute force, filters are exact, ids are strict."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from m3kit.memory import INDEXES, FaissIndex, NumpyIndex, VectorIndex, make_index

DIM = 48


def brute_force(vectors: np.ndarray, ids: list[str], query: np.ndarray, k: int) -> list[str]:
    """Top-k ids by cosine similarity, computed from scratch."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    q = query / np.linalg.norm(query)
    scores = unit @ q
    return [ids[n] for n in np.argsort(-scores)[:k]]


@pytest.fixture(scope="module")
def data() -> tuple[list[str], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(500, DIM)).astype(np.float32) * rng.uniform(0.5, 3, (500, 1))
    queries = rng.normal(size=(20, DIM)).astype(np.float32)
    return [f"item-{n}" for n in range(500)], vectors, queries


@pytest.mark.parametrize("engine", ["faiss", "numpy"])
def test_top_k_equals_brute_force(engine: str, data) -> None:
    ids, vectors, queries = data
    index = make_index(engine, dim=DIM)
    assert isinstance(index, VectorIndex)
    index.add(ids, vectors)
    assert len(index) == 500
    results = index.search(queries, k=10)
    for query, hits in zip(queries, results, strict=True):
        assert [i for i, _ in hits] == brute_force(vectors, ids, query, 10)
        scores = [s for _, s in hits]
        assert scores == sorted(scores, reverse=True)
        assert all(-1.0 - 1e-5 <= s <= 1.0 + 1e-5 for s in scores)  # cosines


def test_faiss_scores_match_numpy(data) -> None:
    ids, vectors, queries = data
    faiss_index, numpy_index = FaissIndex(DIM), NumpyIndex(DIM)
    for index in (faiss_index, numpy_index):
        index.add(ids, vectors)
    for a, b in zip(faiss_index.search(queries, 5), numpy_index.search(queries, 5), strict=True):
        assert [i for i, _ in a] == [i for i, _ in b]
        np.testing.assert_allclose([s for _, s in a], [s for _, s in b], atol=1e-5)


@pytest.mark.parametrize("engine", ["faiss", "numpy"])
def test_allow_filter_is_exact_inside_the_subset(engine: str, data) -> None:
    """A filtered search is the brute-force top-k of the allowed subset, not a post-filter."""
    ids, vectors, queries = data
    index = make_index(engine, dim=DIM)
    index.add(ids, vectors)
    allowed = [n for n in range(500) if n % 7 == 0]
    subset_ids = [ids[n] for n in allowed]
    for query, hits in zip(queries, index.search(queries, 6, allow=set(subset_ids)), strict=True):
        assert [i for i, _ in hits] == brute_force(vectors[allowed], subset_ids, query, 6)
    # Fewer allowed than k: only the allowed come back; unknown ids are ignored.
    (hits,) = index.search(queries[:1], 6, allow={"item-3", "item-9", "nope"})
    assert sorted(i for i, _ in hits) == ["item-3", "item-9"]
    assert index.search(queries[:2], 6, allow=set()) == [[], []]


@pytest.mark.parametrize("engine", ["faiss", "numpy"])
def test_ids_and_removal(engine: str) -> None:
    index = make_index(engine, dim=3)
    index.add(["a", "b", "c"], np.eye(3, dtype=np.float32))
    with pytest.raises(ValueError, match="'b' is already"):
        index.add(["b"], np.ones((1, 3)))
    with pytest.raises(ValueError, match="2 ids but 1 vectors"):
        index.add(["x", "y"], np.ones((1, 3)))
    with pytest.raises(ValueError, match="shape"):
        index.search(np.ones((1, 4)), 1)
    assert index.search(np.array([0.0, 1.0, 0.1]), 1)[0][0][0] == "b"
    assert index.remove(["b", "zzz"]) == 1
    assert len(index) == 2
    (hits,) = index.search(np.array([0.0, 1.0, 0.1]), 5)  # k above the size: all, best first
    assert [i for i, _ in hits] == ["c", "a"]
    index.add(["b"], np.array([[0.0, 1.0, 0.0]]))  # a removed id may come back
    assert index.search(np.array([0.0, 1.0, 0.0]), 1)[0][0][0] == "b"


def test_empty_index_and_zero_vectors() -> None:
    index = FaissIndex(4)
    assert index.search(np.ones((2, 4)), 3) == [[], []]
    index.add(["zero"], np.zeros((1, 4)))  # stays zero rather than dividing by zero
    assert index.search(np.ones(4), 1) == [[("zero", 0.0)]]


def test_concurrent_searches_agree_with_serial(data) -> None:
    ids, vectors, queries = data
    index = FaissIndex(DIM)
    index.add(ids, vectors)
    serial = [index.search(q, 8) for q in queries]
    with ThreadPoolExecutor(8) as pool:
        parallel = list(pool.map(lambda q: index.search(q, 8), queries))
    assert parallel == serial


def test_registry_names_engines() -> None:
    assert INDEXES == ("faiss", "numpy")
    assert isinstance(make_index(dim=8), FaissIndex)
    with pytest.raises(ValueError, match="unknown vector index 'qdrant'"):
        make_index("qdrant", dim=8)
