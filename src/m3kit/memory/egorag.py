"""``egorag``: EgoButler's memory (EgoLife, Yang et al., 2025) as SuperMemory-VQA adapts it.

Build, per memory key: the stream is cut into ``clip_seconds`` windows (30 s); each window's
frames at ``fps`` (1 per second), its transcript and what perception read on its keyframes go
to a ``ClipCaptioner`` (any implementation, a VLM behind it; offline default: a caption
*built* from OCR, speech and detector text, labelled as a surrogate). A ``Summarizer`` (an LLM;
offline default: extractive) writes one summary per hour from its clip captions and one per day
from its hour summaries. Captions and summaries are embedded.

Every level carries its time: a clip's time is its last event's, an hour's or a day's the time
of its last clip. Retrieval is coarse to fine: the ``days`` best day summaries, the ``hours``
best hours in them, the ``k`` best clips in those hours, best first; the answer model gets the
clip captions (time order) and the question.

"Best" follows ``retrieval`` (``retrieval.config.RetrievalConfig``; default ``FUSED_SEARCH``,
``PersistentMemory``'s), searched through the shared hybrid engine (``hybrid.HybridIndex``),
one search per level with the level's candidates as its ``allow`` set: mode ``dense`` is
EgoButler's cosine similarity of the embedded texts; ``lexical`` BM25 (SQLite FTS5,
``lexical``); ``hybrid`` (the default) fuses, at each level, the cosine ranking of the level's
candidates with their BM25 ranking by reciprocal rank (c = 60). Equal scores rank by id, and
every candidate is ranked (one no retriever finds scores 0). Both retrievers search with the
causal filter inside: the levels visible at the question's time, the straddling ones as
rebuilt (transient items of the engine: their rebuilt text joins the BM25 index for that search
only, so a search never depends on the questions asked before it). ``rewriting`` rewrites the
question, an ``expander``'s texts join every level's search, a ``reranker`` reorders the top
``rerank_depth`` clips before the ``k`` best are kept; views are not searched (the stored index
keeps the texts' vectors only). The stored index keeps the vectors; the BM25 index is rebuilt
from the stored texts on load, so the search is not part of the store's address.

The causal cut at every level: a clip, hour or day that ends after the question's time is not
shown as stored; it is *rebuilt at the cut* from what came before it (the clip from its frames'
stored perception and its transcript up to the cut; an hour or day from its visible clips or
hours), so a summary never leaks what happened later and the last minutes are not lost. Rebuilt
texts are kept per (level, cut position), so a question at the same cut reuses them. A level
rebuilt at a cut has its id suffixed ``@cut`` (``clip-000123@cut``; a clip also records
``cut_at``, the question's time), so the retrieved ids a log records name what was sent, not
the stored level that runs past the question.

Times are written as the stream's events write theirs (``events.time_label``): dates on a
person's days (SuperMemory-VQA), ``h:mm:ss.s`` on a video's clock.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
import numpy as np
from pydantic import BaseModel, Field

from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem, checked_k
from m3kit.memory.events import TimeLabel, clock, span_label, time_label, wall_clock
from m3kit.memory.persistent import PersistentMemory, perception_jobs
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.memory.retrieval.hybrid import HybridIndex, TransientItem, unit_vector
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.store import IndexStore, StoredIndex
from m3kit.perception.captions import (
    ClipCaptioner,
    ClipEvidence,
    ExtractiveSummarizer,
    Summarizer,
    SurrogateClipCaptioner,
)
from m3kit.perception.detect import DETECTOR_CAVEAT, scene_text
from m3kit.perception.pipeline import (
    Executor,
    FramePercept,
    JobResult,
    Perceivers,
    PerceptionConfig,
    PerceptionCost,
    PerceptionJob,
    Progress,
)

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

Level = Literal["clip", "hour", "day"]
CLIP_SECONDS = 30.0  # EgoButler: captions over 30-second windows at 1 fps
HOUR, DAY = 3600.0, 86400.0
# The id suffix of a level rebuilt at a cut (``clip-000123@cut``): its stored namesake holds
# what came after the cut, and the id a log records must say which of the two was sent.
AT_CUT = "@cut"
JOB_SECONDS = 1800.0  # perception jobs: 30-minute stretches, as Video-RAG's shards


class _Percepts(BaseModel):
    """What a stored egorag index keeps beyond items: every frame's perception and every
    speech segment (released or transcribed), so a clip can be captioned again at a cut."""

    frames: list[FramePercept] = Field(default_factory=list)
    frame_paths: dict[str, str] = Field(default_factory=dict)
    speech: list[tuple[float, float, str]] = Field(default_factory=list)
    # whether the stream's events write their times as dates (``events.time_label``): the
    # levels rebuilt at a cut are labelled as the stored ones
    dated: bool = False

    def label(self) -> TimeLabel:
        return wall_clock if self.dated else clock


class EgoRagMemory(PersistentMemory):
    """EgoButler: 30-second clip captions, hour and day summaries, day -> hour -> clip.

    ``retrieval``: the search at every level (module doc; ``mode`` ``hybrid``: BM25 + dense,
    fused; ``dense``: EgoButler's cosine alone; ``lexical``: BM25 alone)."""

    name = "egorag"
    state_model = _Percepts

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        k: int = 5,
        hours: int = 3,
        days: int = 2,
        clip_seconds: float = CLIP_SECONDS,
        fps: float = 1.0,
        captioner: ClipCaptioner | None = None,
        summarizer: Summarizer | None = None,
        speech: Literal["auto", "transcripts", "whisper", "none"] = "auto",
        ocr: bool = True,
        detector: Literal["color-regions", "none"] = "color-regions",
        retrieval: RetrievalConfig | None = None,
        store: str | Path | IndexStore | None | Literal[False] = None,
        executor: Executor = "inprocess",
        workers: int = 2,
        perceivers: Perceivers | None = None,
        progress: Progress | None = None,
    ) -> None:
        if min(k, hours, days) <= 0 or clip_seconds <= 0 or fps <= 0:
            raise ValueError("k, hours, days, clip_seconds and fps must be positive")
        perception = PerceptionConfig(
            ocr=ocr, detector=detector,
            speech="whisper" if speech in ("auto", "whisper") else "none")
        super().__init__(embedder=embedder, store=store, executor=executor,
                         workers=workers, perception=perception, perceivers=perceivers,
                         progress=progress, retrieval=retrieval)
        self.k, self.hours, self.days = k, hours, days
        self.clip_seconds = clip_seconds
        self.fps = fps
        self.speech = speech
        self.captioner = captioner or SurrogateClipCaptioner()
        self.summarizer = summarizer or ExtractiveSummarizer()
        self._percepts: dict[str, _Percepts] = {}
        self._rebuilt: dict[tuple[str, str, int], tuple[str, np.ndarray]] = {}
        self._summaries_cache: dict[tuple[str, str, int], MemoryItem] = {}
        self._rebuilt_lock = threading.Lock()

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name, "k": self.k, "hours": self.hours, "days": self.days,
            "clip_seconds": self.clip_seconds, "fps": self.fps, "speech": self.speech,
            "captioner": self.captioner.name, "summarizer": self.summarizer.name,
            **self.base_config(),
        }

    # -- build -----------------------------------------------------------------------------------

    def _jobs(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None
              ) -> list[PerceptionJob]:
        percepts = _Percepts.model_validate_json(stored.state) if stored else _Percepts()
        has_transcripts = bool(percepts.speech) or any(e.kind == "transcript" for e in new_events)
        whisper = self.speech == "whisper" or (self.speech == "auto" and not has_transcripts)
        return perception_jobs(key, new_events, JOB_SECONDS, whisper=whisper)

    def _finish(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None,
                results: list[JobResult]) -> tuple[StoredIndex, int, PerceptionCost]:
        percepts = _Percepts.model_validate_json(stored.state) if stored else _Percepts()
        old_clips = [i for i in (stored.items if stored else ()) if i.metadata["level"] == "clip"]
        cost = PerceptionCost()
        for result in results:
            cost = cost.add(result.cost)
            self._skip(key, result.skipped)
            percepts.frames.extend(result.frames)
            percepts.speech.extend((s.start, s.end, s.text) for s in result.speech)
        for event in new_events:
            if event.kind in ("frame", "image") and event.media is not None:
                percepts.frame_paths[event.id] = event.media.path
            elif event.text.strip():
                start = float(event.metadata.get("start", event.time or 0.0))
                percepts.speech.append((start, float(event.time or start), event.text.strip()))
        percepts.frames.sort(key=lambda p: p.time)
        percepts.speech.sort()
        percepts.dated = percepts.dated or time_label(new_events) is wall_clock
        # A window the new events touch is captioned again (its old caption lacks them), every
        # summary is written again from the clips (a summary is cheap next to the captions).
        touched = {self._window(float(e.metadata.get("start", e.time or 0.0)))
                   for e in new_events}
        kept = [c for c in old_clips if int(c.metadata["window"]) not in touched]
        remade = (self._clip(key, w, percepts, None) for w in sorted(touched))
        clips = kept + [c for c in remade if c is not None]
        clips.sort(key=lambda c: c.time or 0.0)
        summaries = self._summaries(key, clips, percepts.label())
        items = sorted(clips + summaries, key=lambda i: (i.time or 0.0, i.id))
        old_vectors = dict(zip((str(i) for i in stored.arrays.get("ids", ())),
                               stored.arrays.get("vectors", np.zeros((0, 1))), strict=True)
                           ) if stored else {}
        old_text = {i.id: i.text for i in (stored.items if stored else ())}
        fresh = [i for i in items if i.id not in old_vectors or old_text.get(i.id) != i.text]
        vectors = dict(zip((i.id for i in fresh), self.embed([i.text for i in fresh]),
                           strict=True))
        ids = [i.id for i in items]
        rows = {**old_vectors, **vectors}  # every item is fresh or stored before
        matrix = np.stack([rows[i] for i in ids]).astype(np.float32) \
            if ids else np.zeros((0, self.embedder().dim), dtype=np.float32)
        return (StoredIndex(key=key, event_hashes=[], items=items,
                            arrays={"ids": np.asarray(ids, dtype=str), "vectors": matrix},
                            state=percepts.model_dump_json()), len(fresh), cost)

    def _window(self, t: float) -> int:
        return int(max(t, 0.0) // self.clip_seconds)

    def _evidence(self, window: int, percepts: _Percepts, cut: float | None) -> ClipEvidence | None:
        start, end = window * self.clip_seconds, (window + 1) * self.clip_seconds
        limit = end if cut is None else min(end, cut + 1e-9)
        frames = [p for p in percepts.frames if start <= p.time < limit]
        # a line belongs to the window it starts in; at a cut, only once it has been heard
        speech = [s for s in percepts.speech
                  if start <= s[0] < end and (cut is None or s[1] <= cut + 1e-9)]
        if not frames and not speech:
            return None
        sampled: list[FramePercept] = []
        for p in frames:  # at ``fps``: a frame at least 1/fps after the last one kept
            if not sampled or p.time - sampled[-1].time >= 1.0 / self.fps - 1e-6:
                sampled.append(p)
        caveat = DETECTOR_CAVEAT if self.perception.detector == "color-regions" else ""
        last = max([p.time for p in frames] + [s[1] for s in speech])
        return ClipEvidence(
            clip_id=f"clip-{window:06d}", start=start, end=last,
            frames=tuple(percepts.frame_paths[p.id] for p in sampled
                         if p.id in percepts.frame_paths),
            transcript=" ".join(s[2] for s in speech),
            ocr=tuple(p.ocr.replace("\n", " ") for p in frames if p.keyframe and p.ocr),
            objects=tuple(scene_text(p.detections, p.width, p.height, ("number", "location"),
                                     caveat=caveat) for p in frames if p.detections),
        )

    def _clip(self, key: str, window: int, percepts: _Percepts,
              cut: float | None) -> MemoryItem | None:
        evidence = self._evidence(window, percepts, cut)
        if evidence is None:
            return None
        return _level_item(key, "clip", evidence.clip_id, self.captioner.caption_clip(evidence),
                           evidence.start, evidence.end, percepts.label(), window=window)

    def _summaries(self, key: str, clips: Sequence[MemoryItem], label: TimeLabel
                   ) -> list[MemoryItem]:
        hours: dict[int, list[MemoryItem]] = {}
        for clip in clips:
            hours.setdefault(int(clip.metadata["start"] // HOUR), []).append(clip)
        hour_items = [self._summary(key, "hour", h, members, label)
                      for h, members in sorted(hours.items())]
        days: dict[int, list[MemoryItem]] = {}
        for item in hour_items:
            days.setdefault(int(item.metadata["start"] // DAY), []).append(item)
        return hour_items + [self._summary(key, "day", d, members, label)
                             for d, members in sorted(days.items())]

    def _summary(self, key: str, level: Level, n: int, members: Sequence[MemoryItem],
                 label: TimeLabel) -> MemoryItem:
        text = self.summarizer.summarize([m.text for m in members], level)
        return _level_item(key, level, f"{level}-{n:05d}", text,
                           float(members[0].metadata["start"]),
                           max(float(m.time or 0.0) for m in members), label)

    def _load(self, key: str, stored: StoredIndex) -> HybridIndex:
        ids = [str(i) for i in stored.arrays.get("ids", ())]
        vectors = stored.arrays.get("vectors", np.zeros((0, self.embedder().dim)))
        self._percepts[key] = _Percepts.model_validate_json(stored.state)
        # EgoButler ranks each level's candidates by score, equal scores by id: the order the
        # stored and the rebuilt levels entered the indexes must not decide.
        return self.stored_engine(stored, self.new_index(ids, vectors), ties="id")

    def _drop(self, key: str) -> None:
        self._percepts.pop(key, None)
        with self._rebuilt_lock:
            for cached in [c for c in self._rebuilt if c[0] == key]:
                del self._rebuilt[cached]
            for done in [c for c in self._summaries_cache if c[0] == key]:
                del self._summaries_cache[done]

    # -- retrieval -------------------------------------------------------------------------------

    def levels_at(self, key: str, time: float | None) -> list[MemoryItem]:
        """Every clip, hour and day as a question at ``time`` may see it: the stored ones that
        end by then, and those that straddle it rebuilt at the cut. Runs the captioner and the
        summariser for the straddling ones: call from a worker thread."""
        stored = self.visible(key, time)
        if time is None:
            return stored
        percepts = self._percepts[key]
        clips = [i for i in stored if i.metadata["level"] == "clip"]
        shown = {int(c.metadata["window"]) for c in clips}
        window = self._window(time)
        if window not in shown:
            cut = self._clip(key, window, percepts, time)
            if cut is not None:
                clips.append(_at_cut(cut, cut_at=time))
        return clips + self._summaries_at(key, clips, stored)

    def _summaries_at(self, key: str, clips: Sequence[MemoryItem],
                      stored: Sequence[MemoryItem]) -> list[MemoryItem]:
        """Hour and day summaries over ``clips``: the stored one where its members are all
        stored and complete, else written again from the visible members (kept per member set,
        so an LLM summariser is asked once per cut position)."""
        kept = {i.id: i for i in stored if i.metadata["level"] != "clip"}
        hours: dict[int, list[MemoryItem]] = {}
        for clip in clips:
            hours.setdefault(int(clip.metadata["start"] // HOUR), []).append(clip)
        hour_items = [self._summary_at(key, "hour", h, members, kept)
                      for h, members in sorted(hours.items())]
        days: dict[int, list[MemoryItem]] = {}
        for item in hour_items:
            days.setdefault(int(item.metadata["start"] // DAY), []).append(item)
        return hour_items + [self._summary_at(key, "day", d, members, kept)
                             for d, members in sorted(days.items())]

    def _summary_at(self, key: str, level: Level, n: int, members: Sequence[MemoryItem],
                    kept: dict[str, MemoryItem]) -> MemoryItem:
        item_id = f"{level}-{n:05d}"
        end = max(float(m.time or 0.0) for m in members)
        whole = not any(m.metadata.get("rebuilt") for m in members)
        if whole and item_id in kept and kept[item_id].time == end:
            return kept[item_id]
        cache_key = (key, item_id, hash(tuple((m.id, m.text) for m in members)))
        with self._rebuilt_lock:
            cached = self._summaries_cache.get(cache_key)
        if cached is None:
            cached = _at_cut(self._summary(key, level, n, members,
                                           self._percepts[key].label()))
            with self._rebuilt_lock:
                self._summaries_cache[cache_key] = cached
        return cached

    def _coarse_to_fine(self, key: str, levels: Sequence[MemoryItem], query: RetrievalQuery,
                        depth: int) -> list[tuple[MemoryItem, float]]:
        """The ``depth`` best clips for ``query`` among ``levels`` (``levels_at``), each level
        searched by the key's engine with its candidates as the filter, the levels rebuilt at
        the cut as transient items. Runs the embedder: worker thread."""
        if not levels:
            return []
        engine = self._engines[key]
        lexical = engine.mode == "lexical"
        vector = None if lexical else self.embed([query.text], queries=True)[0]
        transient = [TransientItem(i.id, i.text, None if lexical else self._rebuilt_vector(key, i))
                     for i in levels if i.metadata.get("rebuilt")]

        def rank(candidates: Sequence[MemoryItem]) -> list[tuple[MemoryItem, float]]:
            """``candidates`` (one level's) best first, ties by id, every one ranked (one no
            retriever found at 0)."""
            found = dict(engine.search(query, len(candidates), allow=[i.id for i in candidates],
                                       vector=vector, transient=transient))
            return sorted(((i, found.get(i.id, 0.0)) for i in candidates),
                          key=lambda pair: (-pair[1], pair[0].id))

        days = [i for i, _ in rank([i for i in levels if i.metadata["level"] == "day"])]
        day_set = {int(d.metadata["start"] // DAY) for d in days[: self.days]}
        hours = [i for i, _ in rank([i for i in levels if i.metadata["level"] == "hour"
                                     and int(i.metadata["start"] // DAY) in day_set])]
        hour_set = {int(h.metadata["start"] // HOUR) for h in hours[: self.hours]}
        return rank([i for i in levels if i.metadata["level"] == "clip"
                     and int(i.metadata["start"] // HOUR) in hour_set])[:depth]

    def _rebuilt_vector(self, key: str, item: MemoryItem) -> np.ndarray:
        cache_key = (key, item.id, hash(item.text))
        with self._rebuilt_lock:
            cached = self._rebuilt.get(cache_key)
        if cached is not None:
            return cached[1]
        vector = unit_vector(self.embed([item.text])[0])
        with self._rebuilt_lock:
            self._rebuilt[cache_key] = (item.text, vector)
        return vector

    async def ranked(self, key: str, query: str, time: float | None
                     ) -> list[tuple[MemoryItem, float]]:
        """Coarse to fine at ``time``: days, then hours in them, then clips in those hours,
        the ``k`` best clips first with their score (cosine, BM25 or fused: the search's mode;
        positional once reranked). The question is rewritten when the search rewrites, the
        expander's texts join every level's search, the top ``rerank_depth`` clips are
        reranked before the ``k`` best are kept."""
        expansions = await self.expander.expand(query) if self.expander else []
        stage = self.rerank_stage

        def first_stage() -> tuple[RetrievalQuery, list[tuple[MemoryItem, float]]]:
            levels = self.levels_at(key, time)
            rewritten = self.rewrite(query, levels, expansions)
            depth = max(self.k, stage.depth) if stage else self.k
            return rewritten, self._coarse_to_fine(key, levels, rewritten, depth)

        rewritten, hits = await anyio.to_thread.run_sync(first_stage)
        if stage is not None:
            by_id = {clip.id: clip for clip, _ in hits}
            reordered = await stage.apply(rewritten.text, [(i.id, s) for i, s in hits],
                                          {i: clip.text for i, clip in by_id.items()})
            hits = [(by_id[i], s) for i, s in reordered]
        return hits[: self.k]

    async def retrieve(self, key: str, query: str, *, k: int | None = None,
                       time: float | None = None) -> list[MemoryItem]:
        # The rebuilt levels need the time itself, not only the stored items visible at it.
        self.visible(key, time)  # KeyError before ingest, as every memory
        k = checked_k(k)
        ranked = [item for item, _ in await self.ranked(key, query, time)]
        return ranked if k is None else ranked[:k]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        hits = await self.ranked(key, request.query, request.time)
        builder = PromptBuilder()
        chosen = sorted((c for c, _ in hits), key=lambda c: c.time or 0.0)
        if chosen:
            builder.text("Clip captions from memory, oldest first:")
        for clip in chosen:
            builder.text(f"[{clip.metadata['when']}] {clip.text}")
        builder.question(request.prompt, request.images)
        answer = await ask_model(request, builder, retrieved_ids=[c.id for c, _ in hits])
        report = self.report(key)
        return answer.model_copy(update={"metadata": {
            "rebuilt_at_cut": [c.id for c, _ in hits if c.metadata.get("rebuilt")],
            "index": report.origin if report else None,
            "perception": report.cost.model_dump(mode="json") if report else None,
        }})


def _level_item(key: str, level: Level, item_id: str, text: str, start: float, end: float,
                label: TimeLabel, **extra: Any) -> MemoryItem:
    return MemoryItem(id=item_id, key=key, event_id=item_id,
                      modality="caption" if level == "clip" else "text", text=text, time=end,
                      metadata={"level": level, "start": start, "end": end,
                                "when": span_label(start, end, label), **extra})


def _at_cut(item: MemoryItem, cut_at: float | None = None) -> MemoryItem:
    """``item`` as rebuilt at a cut: its id suffixed ``AT_CUT`` (what a log's retrieved ids
    name is what was sent, not the stored level that runs past the question), ``rebuilt`` and,
    for a clip, the time it was cut at (``cut_at``)."""
    extra = {"cut_at": cut_at} if cut_at is not None else {}
    return item.model_copy(update={"id": f"{item.id}{AT_CUT}",
                                   "metadata": {**item.metadata, "rebuilt": True, **extra}})

