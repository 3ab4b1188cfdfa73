"""Rerankers by name: what ``memory_config={reranker: NAME}`` stands for.

Above both kinds (``rerank.ModelReranker``, ``maxsim.MaxSimReranker``, which imports
``rerank``'s error): picking one by name imports both, and neither imports this module, so
there is no import circle.
"""

from __future__ import annotations

from collections.abc import Callable

from m3kit.memory.retrieval.maxsim import MaxSimReranker
from m3kit.memory.retrieval.rerank import ModelReranker, Reranker

MAXSIM_RERANKER = "maxsim"  # the configured name of ``MaxSimReranker``
MODEL_RERANKER = "<inspect model>"
"""How ``reranker_kinds`` names what any name but ``maxsim`` stands for: that inspect model
(``openai-api/llamacpp/smollm2``...), asked for a listwise ranking."""


def reranker_kinds() -> dict[str, type]:
    """Each kind of name ``memory_config={reranker: NAME}`` takes, and the class
    ``named_reranker`` builds for it: ``maxsim``, then ``MODEL_RERANKER`` (any other name)."""
    return {MAXSIM_RERANKER: MaxSimReranker, MODEL_RERANKER: ModelReranker}


def named_reranker(name: str, embedder: Callable[[], object] | None = None) -> Reranker:
    """The reranker a configured name (``memory_config={reranker: NAME}``) stands for:
    ``maxsim`` (``MaxSimReranker``, fused, over ``embedder()``'s token embeddings when it has
    them, else its own MiniLM), else ``ModelReranker(name)``."""
    if name == MAXSIM_RERANKER:
        return MaxSimReranker(embedder)
    return ModelReranker(name)
