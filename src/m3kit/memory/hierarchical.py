"""``hierarchical``: session and round summaries, retrieved coarse to fine.

Build: the rounds as M3Proctor chunks (text plus attachment surrogates, ``proctor.surrogates``),
one extractive *round summary* per round (its first user sentence, its files' captions' first
sentences, the first sentence of the reply) and one *session summary* per session; summaries
are embedded, round chunks are not.

Retrieval: the ``sessions`` session summaries best matching the query pick the sessions
(coarse), then the ``k`` best rounds by their round summaries (fine); ``retrieve`` returns those
rounds, best first. With ``routing="filter"`` (the original design) only the chosen sessions'
rounds compete, and a question whose evidence spans more sessions than ``sessions`` (or whose
session summary reads unlike the question) loses it: on Alex_Veterinarian that halved recall.
With ``routing="prefer"`` (the default) every visible round competes and the chosen sessions'
rounds are ranked again among themselves and fused in (``hybrid``'s scopes): the coarse step
lifts its sessions instead of hiding the others. Both levels search the hybrid index (BM25 and
dense, fused) with the question's time scope (``query``). The prompt holds the chosen
sessions' summaries, then the chosen rounds' full text (with their raw images when
``send_images``: the multimodal variant), in time order. ``retrieved_ids`` is the chosen
rounds, best first, as ``retrieve`` gives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio

from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.indexed import IndexedMemory
from m3kit.memory.proctor.surrogates import build_chunks, chunk_raw, first_sentence, is_summary
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.schema.media import ImageRef

if TYPE_CHECKING:
    from m3kit.memory.retrieval.config import RetrievalConfig
    from m3kit.perception.base import TextEmbedder, TextReader

ROUND_SUMMARY_WORDS = 25
_ROUND_KEY = "round-summary:"
ROUTINGS: tuple[str, ...] = ("prefer", "filter")


def round_summary(chunk: MemoryItem) -> str:
    """A round in a few sentences: the user's first sentence, each file's caption's first
    sentence, the reply's first sentence."""
    user, _, assistant = chunk.text.partition("\nassistant: ")
    lines = user.split("\n")
    head = lines[0].split(": ", 1)[-1]
    parts = [first_sentence(head, ROUND_SUMMARY_WORDS)]
    parts += [first_sentence(line, ROUND_SUMMARY_WORDS) for line in lines[1:]
              if line.startswith("[")]
    if assistant:
        parts.append("Reply: " + first_sentence(assistant, ROUND_SUMMARY_WORDS))
    return " ".join(p for p in parts if p)


class HierarchicalMemory(IndexedMemory):
    """Coarse-to-fine retrieval: the best sessions by summary (``sessions`` of them), then the
    best rounds (``k``); ``retrieval``: the search at both levels (``IndexedMemory``)."""

    name = "hierarchical"

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        sessions: int = 3,
        k: int = 8,
        send_images: bool = False,
        max_images: int = 10,
        ocr: bool = False,
        reader: TextReader | None = None,
        routing: str = "prefer",
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, reader=reader, retrieval=retrieval)
        if sessions <= 0 or k <= 0:
            raise ValueError("sessions and k must be positive")
        if routing not in ROUTINGS:
            raise ValueError(f"routing must be one of {', '.join(ROUTINGS)}, got {routing!r}")
        self.routing = routing
        self.sessions = sessions
        self.k = k
        self.send_images = send_images
        self.max_images = max_images
        self.ocr = ocr

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name,
            "sessions": self.sessions,
            "routing": self.routing,
            "k": self.k,
            "send_images": self.send_images,
            "max_images": self.max_images,
            **self.search_config(),
            "ocr": self.ocr_config(),
        }

    def top_sessions(self, key: str, query: str, visible: list[MemoryItem]) -> list[MemoryItem]:
        """The coarse level: the ``sessions`` session summaries among ``visible`` that best
        match ``query`` (the first stage, with the query's time scope), best first (none when
        no round is visible). Runs the embedder: call it from a worker thread."""
        summaries = {c.id: c for c in visible if is_summary(c)}
        if not summaries or len(summaries) == len(visible):
            return []
        rewritten = self.rewrite(query, visible)
        scopes = []
        if rewritten.scope is not None:
            scopes.append([i for i, c in summaries.items()
                           if c.metadata.get("session_id") in rewritten.scope.sessions])
        hits = self.search(key, rewritten, self.sessions, list(summaries), scopes)
        return [summaries[h] for h, _ in hits]

    async def _retrieve(
        self, key: str, query: str, items: list[MemoryItem], k: int | None
    ) -> list[MemoryItem]:
        rounds = [c for c in items if not is_summary(c)]
        if not rounds:
            return []
        has_sessions = any(is_summary(c) for c in items)
        chosen = {c.metadata.get("session_id") for c in await anyio.to_thread.run_sync(
            partial(self.top_sessions, key, query, items))}
        # Rounds outside any session (a loose note) always compete.
        candidates = {f"{_ROUND_KEY}{c.id}": c for c in rounds
                      if self.routing == "prefer" or not has_sessions
                      or c.metadata.get("session_id") in chosen
                      or c.metadata.get("session_id") is None}
        preferred = {str(s) for s in chosen if s is not None} if self.routing == "prefer" else ()
        hits = await self.ranked(key, query, k or self.k, candidates, visible=items,
                                 sessions=preferred)
        return [candidates[h] for h, _ in hits]

    def _prepare(self, key: str, events: list[MemoryEvent], reader: TextReader | None
                 ) -> tuple[list[MemoryItem], list[str], list[str]]:
        chunks, skipped = build_chunks(key, events, reader=reader)
        self._skip(key, skipped)
        summaries = [c for c in chunks if is_summary(c)]
        rounds = [c for c in chunks if not is_summary(c)]
        return (chunks, [c.id for c in summaries] + [f"{_ROUND_KEY}{c.id}" for c in rounds],
                [c.text for c in summaries] + [c.text for c in rounds])

    def indexed_item(self, index_id: str, items: dict[str, MemoryItem]) -> MemoryItem | None:
        return items.get(index_id.removeprefix(_ROUND_KEY))

    async def _answer(
        self, key: str, items: list[MemoryItem], request: AnswerRequest
    ) -> MemoryAnswer:
        rounds = await self.retrieve(key, request.query, time=request.time)
        # The coarse level again (a deterministic search): the summaries of the sessions the
        # rounds were drawn from lead the prompt.
        summaries = await anyio.to_thread.run_sync(
            partial(self.top_sessions, key, request.query, items))
        builder = PromptBuilder()
        if summaries:
            builder.text("Session summaries:")
            for summary in sorted(summaries, key=lambda c: c.time or 0.0):
                builder.text(summary.text)
        ordered = sorted(rounds, key=lambda c: c.time or 0.0)
        builder.chunks("Retrieved rounds, oldest first:", ordered,
                       self._images(ordered) if self.send_images else None)
        builder.question(request.prompt, request.images)
        answer = await ask_model(request, builder, retrieved_ids=[c.id for c in rounds])
        return answer.model_copy(update={"metadata": {
            "sessions": [c.metadata.get("session_id") for c in summaries]}})

    def _images(self, rounds: Sequence[MemoryItem]) -> dict[str, list[tuple[str, ImageRef]]]:
        """The raw images of ``rounds`` in order, at most ``max_images`` in all."""
        out: dict[str, list[tuple[str, ImageRef]]] = {}
        sent = 0
        for chunk in rounds:
            for _, ref, name in chunk_raw(chunk):
                if isinstance(ref, ImageRef) and sent < self.max_images:
                    out.setdefault(chunk.id, []).append((name, ref))
                    sent += 1
        return out
