"""A keyword-overlap memory: the smallest memory that ingests, ranks and answers.

It is what another package writes to add a memory to m3kit: a ``Memory`` subclass and an entry
point in the group ``m3kit.memories`` (see this package's ``pyproject.toml``). Its settings are
keyword arguments, with a pydantic record for the matching rule, so ``m3kit list`` shows them as
``match.case_sensitive`` and ``match.min_overlap``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.memory.base import AnswerRequest, Memory, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.schema.prediction import Usage

_WORD = re.compile(r"\w+")


class KeywordMatch(BaseModel):
    """When an item matches a question: by the words they share."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    case_sensitive: bool = False
    min_overlap: int = Field(default=2, ge=1)


# The default rule, a named preset as a memory's retrieval settings have: any one shared word.
ANY_WORD = KeywordMatch(min_overlap=1)


class KeywordMemory(Memory):
    """Keyword overlap: the items that share the most words with the question, best first."""

    name = "keyword"

    def __init__(self, *, k: int = 3, match: KeywordMatch | Mapping[str, Any] = ANY_WORD
                 ) -> None:
        super().__init__()
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        self.k = k
        # a command line (-T memory_config='{match: {min_overlap: 2}}') gives a mapping
        self.match = KeywordMatch.model_validate(match)

    def config(self) -> dict[str, Any]:
        return {"name": self.name, "k": self.k, "match": self.match.model_dump()}

    def _words(self, text: str) -> set[str]:
        return set(_WORD.findall(text if self.match.case_sensitive else text.lower()))

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        return [MemoryItem(id=event.id, key=key, event_id=event.id, modality="text",
                           text=event.text, time=event.time)
                for event in events if event.text.strip()]

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        asked = self._words(query)
        shared = [(len(asked & self._words(item.text)), i) for i, item in enumerate(items)]
        # most shared words first; among equals, the newer item first
        ranked = sorted((pair for pair in shared if pair[0] >= self.match.min_overlap),
                        reverse=True)
        return [items[i] for _, i in ranked[:k or self.k]]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        found = await self._retrieve(key, request.query, items, None)
        lines = [f"{item.id}: {item.text}" for item in found]
        prompt = "\n".join(["Memory:", *lines, "", request.prompt]) if lines else request.prompt
        output = await request.model.generate(prompt)
        usage = output.usage
        return MemoryAnswer(
            output=output.completion,
            usage=Usage(prompt_tokens=usage.input_tokens if usage else 0,
                        completion_tokens=usage.output_tokens if usage else 0,
                        retrieved_ids=[item.id for item in found]),
            error=output.error)


def strict_keyword_memory(*, k: int = 3) -> KeywordMemory:
    """Keyword overlap with case kept and at least two shared words."""
    return KeywordMemory(k=k, match=KeywordMatch(case_sensitive=True, min_overlap=2))
