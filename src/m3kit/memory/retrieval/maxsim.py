"""Late-interaction reranking: ColBERT's MaxSim over MiniLM's contextual token embeddings.

ColBERT (Khattab & Zaharia, SIGIR 2020, eq. 3) scores a document by taking, for each query
token, the best cosine between its contextual embedding and any of the document's token
embeddings, and summing over the query's tokens. It reads the query against every word of the
candidate, where the first stage compares one pooled vector (dense) or stemmed term counts
(BM25).

The token embeddings here come from all-MiniLM-L6-v2, the model of the first stage's vectors,
shipped inside a package (``MiniLMEmbedder.token_embeddings``). Deviation from the paper:
MiniLM was trained for mean-pooled sentence vectors, not for MaxSim, and ColBERT's own encoder
(fine-tuned for MaxSim, a 128-dimension projection, queries padded with [MASK] tokens, a
punctuation skip-list over documents) ships in no installable package here; so the scores are
MaxSim's formula over an encoder that was not trained for it, every word piece counted, no
[MASK] augmentation.

A document's token matrix is cached by its text (the same items are reranked for many
questions); the cache keeps the ``cache_size`` most recently used texts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import anyio
import numpy as np

from m3kit.memory.retrieval.fusion import reciprocal_rank_fusion
from m3kit.memory.retrieval.rerank import RerankError
from m3kit.schema.prediction import Usage

if TYPE_CHECKING:
    from m3kit.perception.base import TokenEmbedder


def maxsim(query: np.ndarray, document: np.ndarray) -> float:
    """ColBERT's score of ``document`` for ``query`` (rows: L2-normalised token embeddings):
    Σ over query rows of the largest dot product with a document row; 0 when either is empty."""
    if len(query) == 0 or len(document) == 0:
        return 0.0
    return float((query @ document.T).max(axis=1).sum())


class MaxSimReranker:
    """``Reranker`` by ColBERT's late-interaction MaxSim (``maxsim``) over a
    ``TokenEmbedder``'s token embeddings (MiniLM's by default), fused with the first stage's
    order; offline, no tokens.

    ``embedder``: a ``TokenEmbedder``, or a function returning an embedder (a memory's own,
    resolved on first use, so the memory and its reranker share one MiniLM); when what it
    returns embeds no tokens, or none is given, all-MiniLM-L6-v2 is loaded on first use.
    Ties keep the first stage's order. ``fuse`` (the default): the MaxSim order is fused
    with the first stage's by reciprocal rank (``fusion.reciprocal_rank_fusion``, c = 60,
    equal weights) rather than replacing it; ``fuse=False`` (``maxsim-pure``) is MaxSim's
    order alone. It costs no tokens.

    Why fused by default: MiniLM's MaxSim alone reorders the head worse than the first stage
    (Alex_Veterinarian, the development set, recall@5: hybrid 76.8 -> 72.6, ``rag`` 78.8 ->
    74.3); fused it costs less (75.8, 77.0). Chosen there once, for every data set.
    """

    def __init__(self, embedder: TokenEmbedder | Callable[[], object] | None = None, *,
                 fuse: bool = True, cache_size: int = 4096) -> None:
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, got {cache_size}")
        self.fuse = fuse
        self.name = "maxsim" if fuse else "maxsim-pure"
        self._source = embedder
        self._embedder: TokenEmbedder | None = None
        self.cache_size = cache_size
        self._documents: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def token_embedder(self) -> TokenEmbedder:
        """The token embedder (resolved, or loaded, on first use)."""
        from m3kit.perception.base import TokenEmbedder

        if self._embedder is None:
            source = self._source
            resolved = (source() if source is not None and not isinstance(source, TokenEmbedder)
                        else source)
            if isinstance(resolved, TokenEmbedder):
                self._embedder = resolved
            else:
                from m3kit.perception.embeddings import MiniLMEmbedder

                self._embedder = MiniLMEmbedder()
        return self._embedder

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        """MaxSim of each text for ``query``. Runs the embedder: call it from a worker thread.
        Raises ``RerankError`` when the query has no tokens."""
        embedder = self.token_embedder()
        query_rows = embedder.token_embeddings([query])[0]
        if len(query_rows) == 0:
            raise RerankError(f"the query has no tokens to match: {query!r}", field="rerank")
        with self._lock:  # one search at a time fills the cache; the embedder is serial
            missing = list(dict.fromkeys(t for t in texts if t not in self._documents))
            for text, rows in zip(missing, embedder.token_embeddings(missing), strict=True):
                self._documents[text] = rows
            documents = [self._documents[t] for t in texts]
            for text in texts:
                self._documents.move_to_end(text)
            while len(self._documents) > max(self.cache_size, len(texts)):
                self._documents.popitem(last=False)
        return [maxsim(query_rows, rows) for rows in documents]

    async def rerank(self, query: str, candidates: Sequence[tuple[str, str]]
                     ) -> tuple[list[str], Usage]:
        scores = await anyio.to_thread.run_sync(
            self.scores, query, [text for _, text in candidates])
        ids = [i for i, _ in candidates]
        order = [ids[n] for n in sorted(range(len(ids)), key=lambda n: -scores[n])]
        if self.fuse:
            order = [i for i, _ in reciprocal_rank_fusion([order, ids])]
        return order, Usage()
