"""Model-backed query expansion: the entities and key terms a question is about, as extra
query texts for retrieval (``query.QueryExpander``).

A question says "her sister's bakery" where the conversation says "Nina's shop"; a model that
reads the question can name the likely words (query2doc / HyDE-style expansion: Wang et al.
2023, Gao et al. 2022), which BM25 and the embedding then match. It is optional: the offline
default expands nothing, and an expansion that fails (an error, a reply with no terms) leaves
the bare question, counted in ``fallbacks``.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

from m3kit.schema.prediction import Usage

MAX_EXPANSIONS = 3


def expansion_prompt(question: str) -> str:
    """The prompt: name the entities, times and key terms, and a likely wording."""
    return "\n".join([
        ("A question is asked about a long conversation. To search the conversation for the "
         "answer, list up to three short search phrases: the people, places, objects, dates "
         "and key terms the answer is likely stated with (synonyms welcome)."),
        f"Question: {question}",
        'Reply with a JSON list of strings, e.g. ["phrase one", "phrase two"].',
    ])


def parse_expansions(reply: str) -> list[str]:
    """The phrases of a reply: a JSON list of strings when it holds one, else its non-empty
    lines (bullets stripped); at most ``MAX_EXPANSIONS``."""
    match = re.search(r"\[.*\]", reply, re.DOTALL)
    phrases: list[str] = []
    if match is not None:
        try:
            phrases = [str(p) for p in json.loads(match.group(0)) if str(p).strip()]
        except (ValueError, TypeError):
            phrases = []
    if not phrases:
        phrases = [re.sub(r"^[\s\-*\d.)]+", "", line).strip() for line in reply.splitlines()]
    return [p for p in phrases if p][:MAX_EXPANSIONS]


class ModelQueryExpander:
    """Expansion by an inspect model (a name for ``get_model`` or a ``Model``), one call per
    question, cached per question; ``fallbacks`` counts failures by error type and ``usage``
    sums the calls' tokens."""

    def __init__(self, model: Any, *, max_tokens: int = 80) -> None:
        self._model = model
        self.max_tokens = max_tokens
        self.name = f"model:{model}"
        self.fallbacks: Counter[str] = Counter()
        self.usage = Usage()
        self._cache: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    async def expand(self, question: str) -> list[str]:
        from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

        if question in self._cache:
            return list(self._cache[question])
        try:
            if isinstance(self._model, str):
                self._model = get_model(self._model)
            output = await self._model.generate(
                input=[ChatMessageUser(content=expansion_prompt(question))],
                config=GenerateConfig(max_tokens=self.max_tokens, temperature=0.0))
            if output.error:
                raise RuntimeError(output.error)
            phrases = parse_expansions(output.completion)
            usage = Usage(model_calls=1,
                          prompt_tokens=output.usage.input_tokens if output.usage else 0,
                          completion_tokens=output.usage.output_tokens if output.usage else 0)
        except Exception as exc:  # noqa: BLE001 - a failed expansion leaves the bare question
            with self._lock:
                self.fallbacks[f"bare-question:{type(exc).__name__}"] += 1
            return []
        with self._lock:
            self.usage = self.usage + usage
            if not phrases:
                self.fallbacks["bare-question:no-phrases"] += 1
            self._cache[question] = phrases
        return list(phrases)
