"""``videoagent``: VideoAgent (Wang et al., 2024) as SuperMemory-VQA evaluates it (seed 003,
§5.2.1, Fig. 9), on the visible stream.

An index memory: its items are the stream's events with their text surrogates (as ``rag``'s),
indexed by that text and cut at each question's time by ``visible``; the visible items make the
question's frame units (``units``: a frame with the speech heard just before it). To answer, the
agent runs the released loop (``wxh1996/VideoAgent``, ``main.py``) with the run's answer model:

1. sample ``frames`` (5) units uniformly over the visible stream, first and last included, and
   caption them;
2. the model answers from the captions (the benchmark's own prompt, so the reply is in the
   format the benchmark reads) and then rates its confidence, 1-3 (self-reflection, a second
   call, as released);
3. below 3, the model describes the frames it is missing, each in one of the segments between
   the sampled units; for each description the best unit inside its segment is retrieved and
   captioned, and the loop answers again; at most ``rounds`` (3) answers, the last one not
   rated (as released). A unit's search score is its best item's (the frame's own text or a
   line heard with it).

A confidence reply that does not parse counts as confidence 1 (as released); a queries reply
that does not parse, or that finds no new frame, ends the loop with the last answer (the
release answers again from the same captions). Both are counted in the answer's metadata.

Deviations from the paper, for an offline toolkit: the captions are the captioner's
(``perception.captions.ClipCaptioner``; offline default: the labelled text surrogate of the
frame's OCR, its description and the speech heard, no captioning model), and frames are
retrieved by MiniLM text embeddings over the items' text (OCR, descriptions, speech: the
retrieval floor, as ``rag`` searches), not by CLIP over the pixels. ``docs/metrics.md``
("VideoAgent") says so too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import anyio

from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryItem
from m3kit.memory.events import item_label
from m3kit.memory.indexed import IndexedMemory
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.retrieval.config import DENSE_SEARCH, RetrievalConfig
from m3kit.memory.videoagent.replies import (
    CONFIDENT,
    QUERIES_PROMPT,
    SELF_EVAL_PROMPT,
    FrameQuery,
    parse_confidence,
    parse_queries,
    segment_lines,
)
from m3kit.memory.videoagent.units import (
    SPEECH_WINDOW,
    clip_evidence,
    frame_units,
    segments,
    uniform,
    unit_ids,
    when,
)
from m3kit.perception.captions import ClipCaptioner, SurrogateClipCaptioner
from m3kit.schema.prediction import Usage

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder, TextReader

FRAMES = 5  # the first look: five uniformly sampled frames
ROUNDS = 3  # answers at most (the release's three steps)


@dataclass
class _Tally:
    """What one question's loop did and cost."""

    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    rounds: int = 0
    confidences: list[int] = field(default_factory=list)
    unparsed: dict[str, int] = field(default_factory=lambda: {"confidence": 0, "queries": 0})
    queries: list[dict[str, Any]] = field(default_factory=list)
    captions_made: int = 0
    stopped: str = ""

    async def ask(self, request: AnswerRequest, builder: PromptBuilder) -> MemoryAnswer:
        reply = await ask_model(request, builder)
        self.calls += 1
        self.usage = self.usage + reply.usage
        return reply


class VideoAgentMemory(IndexedMemory):
    """VideoAgent: five uniformly sampled frames captioned, answer, self-reflect, retrieve the
    missing frames per segment, up to three answers (module doc).

    ``frames``: the first sample; ``rounds``: answers at most; ``speech_window``: how long
    before a frame a transcript line still joins it (``units``); ``captioner``: what captions a
    unit (default ``SurrogateClipCaptioner``: the unit's text, labelled as a surrogate);
    ``ocr`` / ``reader``: OCR of the frames for their text; ``retrieval``: the frame search
    (default ``DENSE_SEARCH``: cosine of the description's embedding, CLIP's role).
    """

    name = "videoagent"
    # CLIP ranks a segment's frames by the cosine of their image embeddings with the text's;
    # here the text embeddings of a frame's surrogate and of the lines heard with it stand in
    # for the image's (a unit scores as its best item).
    default_retrieval: ClassVar[RetrievalConfig] = DENSE_SEARCH

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        frames: int = FRAMES,
        rounds: int = ROUNDS,
        speech_window: float = SPEECH_WINDOW,
        captioner: ClipCaptioner | None = None,
        ocr: bool = True,
        reader: TextReader | None = None,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, reader=reader, retrieval=retrieval)
        if frames < 2 or rounds < 1 or speech_window < 0:
            raise ValueError("frames must be at least 2 (segments lie between them), rounds "
                             "positive, speech_window >= 0")
        self.frames = frames
        self.rounds = rounds
        self.speech_window = speech_window
        self.captioner: ClipCaptioner = captioner or SurrogateClipCaptioner()
        self.ocr = ocr
        # captions by key and unit id: a unit's caption holds nothing after the unit's time, so
        # every later question of the key may reuse it
        self._captions: dict[str, dict[str, str]] = {}
        self._by_id: dict[str, dict[str, MemoryItem]] = {}

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name, "frames": self.frames, "rounds": self.rounds,
            "speech_window": self.speech_window, "captioner": self.captioner.name,
            **self.search_config(), "ocr": self.ocr_config(),
        }

    def _forget(self, key: str) -> None:
        super()._forget(key)
        self._captions.pop(key, None)
        self._by_id.pop(key, None)

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        # No model here to write descriptions: the question itself is the description, over
        # the whole visible stream.
        by_id = {item.id: item for item in items}
        hits = await self.ranked(key, query, k or self.frames, by_id)
        return [by_id[hit_id] for hit_id, _ in hits]

    # -- the loop --------------------------------------------------------------------------------

    async def _answer(self, key: str, visible: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        tally = _Tally()
        units = frame_units(visible, self.speech_window)
        chosen = uniform(len(units), self.frames)
        answer: MemoryAnswer | None = None
        information = ""
        side = AnswerRequest(prompt="", query=request.query, model=request.model,
                             generate_config=request.generate_config, cache=request.cache,
                             time=request.time)
        for round_ in range(1, self.rounds + 1):
            if round_ > 1:
                added = await self._more_frames(key, units, chosen, information, request,
                                                side, tally)
                if not added:
                    break
                chosen = sorted({*chosen, *added})
            information = await self._information(key, units, chosen, tally)
            builder = PromptBuilder()
            builder.text(information)
            builder.question(request.prompt, request.images)
            answer = await tally.ask(request, builder)
            tally.rounds = round_
            if answer.error:
                tally.stopped = "model error"
                break
            if round_ == self.rounds or not segments(chosen):
                tally.stopped = "rounds" if round_ == self.rounds else "every frame seen"
                break
            rating = PromptBuilder()
            rating.text(SELF_EVAL_PROMPT.format(
                information=f"{information}\n\n{request.prompt}", answer=answer.output))
            level = parse_confidence((await tally.ask(side, rating)).output)
            if level is None:
                tally.unparsed["confidence"] += 1
                level = 1  # the release's rule for a confidence it cannot read
            tally.confidences.append(level)
            if level >= CONFIDENT:
                tally.stopped = "confident"
                break
        if answer is None:  # rounds >= 1: the first round always answers
            raise RuntimeError("videoagent ran no round")
        used = [units[n] for n in chosen]
        # what the captions were made of: each frame used with the lines heard with it
        usage = tally.usage.model_copy(update={
            "retrieved_ids": [i for unit in used for i in unit_ids(unit)]})
        return answer.model_copy(update={"usage": usage, "metadata": {
            "calls": tally.calls, "rounds": tally.rounds, "confidences": tally.confidences,
            "frames": [u.id for u in used], "captioned": len(used),
            "captions_made": tally.captions_made,
            "unparsed": tally.unparsed, "queries": tally.queries, "stopped": tally.stopped,
        }})

    async def _more_frames(self, key: str, units: list[MemoryItem], chosen: list[int],
                           information: str, request: AnswerRequest, side: AnswerRequest,
                           tally: _Tally) -> list[int]:
        """The positions of the frames the model's descriptions find, one per description,
        each the best unit inside its segment; none (and why, in ``tally``) when the reply
        does not parse or finds nothing new."""
        spans = segments(chosen)
        builder = PromptBuilder()
        builder.text(QUERIES_PROMPT.format(
            information=information, question=request.prompt,
            segments=segment_lines([(when(units[a]), when(units[b]), b - a - 1)
                                    for a, b in spans])))
        wanted = parse_queries((await tally.ask(side, builder)).output, len(spans))
        if wanted is None:
            tally.unparsed["queries"] += 1
            tally.stopped = "queries not parsed"
            return []
        added: list[int] = []
        for query in wanted:
            found = await self._find(key, units, spans[query.segment - 1], query)
            tally.queries.append({"segment": query.segment, "description": query.description,
                                  "frame": units[found].id})
            added.append(found)
        new = sorted(set(added) - set(chosen))
        if not new:
            tally.stopped = "no new frame"
        return new

    async def _find(self, key: str, units: list[MemoryItem], span: tuple[int, int],
                    query: FrameQuery) -> int:
        """The position of the unit inside ``span`` (exclusive) whose best item is nearest to
        the query's description; the middle one when none of them has text to search."""
        before, after = span
        inside = {i: n for n in range(before + 1, after) for i in unit_ids(units[n])}
        candidates = {i: self._item(key, i) for i in inside}
        hits = await self.ranked(key, query.description, 1, candidates)
        return inside[hits[0][0]] if hits else (before + after) // 2

    def _item(self, key: str, item_id: str) -> MemoryItem:
        """The stored item ``item_id`` of ``key`` (a unit's frame or one of its lines)."""
        by_id = self._by_id.get(key)
        if by_id is None:
            by_id = self._by_id[key] = {i.id: i for i in self.items(key)}
        return by_id[item_id]

    async def _information(self, key: str, units: list[MemoryItem], chosen: list[int],
                           tally: _Tally) -> str:
        """The chosen units' captions as the model reads them, oldest first."""
        if not chosen:
            return "Nothing was recorded before the question."
        known = self._captions.setdefault(key, {})
        lines = [f"The recording up to now has {len(units)} moments ({when(units[0])} to "
                 f"{when(units[-1])}): frames, each with what was heard just before it, and "
                 f"lines heard. Descriptions of {len(chosen)} of them, oldest first:"]
        for n in chosen:
            unit = units[n]
            if unit.id not in known:
                caption = await anyio.to_thread.run_sync(self.captioner.caption_clip,
                                                         clip_evidence(unit))
                description = str(unit.metadata.get("description") or "").strip()
                known[unit.id] = "\n".join(p for p in (description, caption) if p)
                tally.captions_made += 1
            lines.append(f"{item_label(unit)}: {known[unit.id]}")
        return "\n".join(lines)
