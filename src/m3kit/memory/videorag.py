"""``videorag``: Video-RAG (Luo et al., 2024) as SuperMemory-VQA adapts it (seed 003, 4.1-4.2).

Build, per memory key: the stream is cut into ``shard_seconds`` shards (30 minutes), each with
its own vector index over three auxiliary databases:

- ``ASR``: speech: the transcript events the data ships, else Whisper over the frames' video;
- ``OCR``: on-screen text read on keyframes (scene change: a static stretch is read once);
- ``DET``: what the detector sees on keyframes, as short scene text (what, how many, where).

Answer: the model first writes a retrieval request, ``{"ASR": str|null, "DET": [names]|null,
"TYPE": ["location"|"number"|"relation"]|null}`` (a reply that is not such JSON falls back to
the bare question for every database, counted in the answer's metadata). The request fans out
over every shard that starts before the question's time and the hits are merged, ``k`` per
database, best first. The answer model gets them (DET text rendered for the requested TYPEs)
with ``frames`` (32) frames sampled uniformly from the most relevant shard, up to the cut.

``retrieval`` (``retrieval.config.RetrievalConfig``; default ``VIDEORAG_SEARCH``) is how a
database is searched, through the shared hybrid engine (``hybrid.HybridIndex``) over the key's
shards (``sharded.ShardedIndex``: each shard searched among its allowed ids, the hits merged by
score, as the released code searches each shard's index and merges); ``min_cosine`` is the
released code's ``rag_threshold`` (0.3). Its mode:

- ``dense`` is Video-RAG as released: hits with cosine similarity at or above ``min_cosine``,
  best cosine first;
- ``lexical``: BM25 over the key's texts (SQLite FTS5, ``lexical``), a hit being any text that
  shares a term with the request (a positive BM25 score), best BM25 first;
- ``hybrid`` (the default): both rankings, each with its own gate (dense hits at cosine >=
  ``min_cosine``, BM25 hits with a positive score), fused by reciprocal rank (c = 60); a text
  either gate lets through can be a hit, and one both rank high leads. Scores are then fused
  scores (``fusion``: 1.0 is first in both rankings).

The rest of the record reaches the search as it does every memory's: ``rewriting`` rewrites
each database's query text (``query.rewrite_query``), an ``expander``'s texts join every
database's search, a ``reranker`` reorders each database's top ``rerank_depth`` before its
``k`` are kept. ``views`` are not searched here (the stored index keeps the texts' vectors
only): a record with views is refused.

Each database is searched with the causal filter inside (its visible texts are the engine's
``allow`` set), so the ``k`` hits are ``k`` visible ones when there are that many. The stored
index keeps the vectors; the BM25 index is rebuilt from the stored texts on load (no
perception, no embedding), so the search is not part of the store's address
(``PersistentMemory.store_config``).

``retrieve`` has no model to write a request: it ranks with the fallback request (the bare
question for every database). Indexes persist (``PersistentMemory``).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Self

import anyio
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import span_label, time_label
from m3kit.memory.persistent import PersistentMemory, perception_jobs
from m3kit.memory.prompt import PromptBuilder, ask_model, json_object
from m3kit.memory.retrieval.config import FUSED_SEARCH, RetrievalConfig
from m3kit.memory.retrieval.hybrid import HybridIndex
from m3kit.memory.retrieval.query import RetrievalQuery
from m3kit.memory.retrieval.sharded import ShardedIndex
from m3kit.memory.store import IndexStore, StoredIndex
from m3kit.perception.base import TranscriptSegment
from m3kit.perception.detect import DET_TYPES, DETECTOR_CAVEAT, Detection, DetType, scene_text
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
from m3kit.schema.media import ImageRef
from m3kit.schema.prediction import Usage

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

Database = Literal["ASR", "OCR", "DET"]
DATABASES: tuple[Database, ...] = ("ASR", "OCR", "DET")
SHARD_SECONDS = 1800.0  # SuperMemory-VQA 4.2: 30-minute shards, one index each
RAG_THRESHOLD = 0.3  # Video-RAG's released rag_threshold
VIDEORAG_SEARCH = FUSED_SEARCH.model_copy(update={"min_cosine": RAG_THRESHOLD})
"""Video-RAG's default search: BM25 and dense fused over the request's texts (no views, no
rewriting), the dense hits gated at the released ``rag_threshold``; its ``dense`` mode is the
released search."""

REQUEST_PROMPT = """You will answer a question about a long video. First, say what to look up \
in three databases built from it: ASR (what was said), DET (objects detected in keyframes) and \
the type of object information needed.

Reply with one JSON object and nothing else:
{{"ASR": <a short phrase to search the speech for, or null>,
 "DET": <a list of object names to look for, or null>,
 "TYPE": <a list from "location", "number", "relation", or null>}}

Question: {question}"""


class RetrievalRequest(BaseModel):
    """The model's retrieval request (Video-RAG's JSON), read strictly."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    asr: str | None = Field(default=None, alias="ASR")
    det: list[str] | None = Field(default=None, alias="DET")
    type: list[DetType] | None = Field(default=None, alias="TYPE")


class _State(BaseModel):
    """What a stored videorag index keeps beyond items: the perception of every frame."""

    frames: list[FramePercept] = Field(default_factory=list)
    speech: list[TranscriptSegment] = Field(default_factory=list)


# The cosine gate's name among the settings and in the stored indexes' address before it became
# the retrieval record's ``min_cosine``.
THRESHOLD_KEY = "threshold"


class VideoRagMemory(PersistentMemory):
    """Video-RAG: ASR / OCR / DET databases per 30-minute shard, a model-written retrieval
    request fanned out over the shards before the cut, the merged texts and 32 frames.

    ``speech``: ``auto`` (the data's transcript events, else Whisper over the frames' video),
    ``transcripts`` (only the data's), ``whisper`` (Whisper always), ``none``. ``request``:
    ask the model for a retrieval request (else the bare question always). ``retrieval``: the
    search (module doc; ``mode`` ``hybrid``: BM25 + dense, fused; ``dense``: Video-RAG's cosine
    gate alone; ``lexical``: BM25 alone; ``min_cosine`` gates the dense hits).
    """

    name = "videorag"
    state_model = _State
    default_retrieval: ClassVar[RetrievalConfig] = VIDEORAG_SEARCH

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        k: int = 5,
        frames: int = 32,
        shard_seconds: float = SHARD_SECONDS,
        speech: Literal["auto", "transcripts", "whisper", "none"] = "auto",
        ocr: bool = True,
        detector: Literal["color-regions", "none"] = "color-regions",
        request: bool = True,
        retrieval: RetrievalConfig | None = None,
        store: str | Path | IndexStore | None | Literal[False] = None,
        executor: Executor = "inprocess",
        workers: int = 2,
        perceivers: Perceivers | None = None,
        progress: Progress | None = None,
    ) -> None:
        if k <= 0 or frames < 0 or shard_seconds <= 0:
            raise ValueError("k and shard_seconds must be positive, frames >= 0")
        perception = PerceptionConfig(
            ocr=ocr, detector=detector,
            speech="whisper" if speech in ("auto", "whisper") else "none")
        super().__init__(embedder=embedder, store=store, executor=executor,
                         workers=workers, perception=perception, perceivers=perceivers,
                         progress=progress, retrieval=retrieval)
        self.k = k
        self.frames = frames
        self.shard_seconds = shard_seconds
        self.speech = speech
        self.request = request

    @classmethod
    def from_settings(cls, **settings: Any) -> Self:
        """``Memory.from_settings``, taking the cosine gate also by its name before it joined
        the retrieval record (``threshold``), so ``-T memory_config={threshold: 0.5}`` keeps
        working."""
        if THRESHOLD_KEY in settings:
            if "min_cosine" in settings:
                raise ValueError("give the cosine gate once: threshold (its former name) or "
                                 "min_cosine")
            settings = {("min_cosine" if name == THRESHOLD_KEY else name): value
                        for name, value in settings.items()}
        return super().from_settings(**settings)

    def store_config(self) -> dict[str, Any]:
        """``PersistentMemory.store_config`` with the gate under its former name: it addressed
        the stored indexes before it became a search setting, and kept there they stay found
        (a rebuild costs the whole perception of the video)."""
        return {**super().store_config(), THRESHOLD_KEY: self.retrieval.min_cosine}

    def config(self) -> dict[str, Any]:
        return {
            "memory": self.name, "k": self.k, "frames": self.frames,
            "shard_seconds": self.shard_seconds, "speech": self.speech, "request": self.request,
            **self.base_config(),
        }

    def shard_of(self, t: float) -> int:
        return int(max(t, 0.0) // self.shard_seconds)

    # -- build -----------------------------------------------------------------------------------

    def _jobs(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None
              ) -> list[PerceptionJob]:
        has_transcripts = any(e.kind == "transcript" for e in new_events) or any(
            i.metadata.get("db") == "ASR" and i.metadata.get("released")
            for i in (stored.items if stored else ()))
        return perception_jobs(key, new_events, self.shard_seconds,
                               whisper=self._whisper(has_transcripts))

    def _finish(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None,
                results: list[JobResult]) -> tuple[StoredIndex, int, PerceptionCost]:
        state = _State.model_validate_json(stored.state) if stored else _State()
        cost = PerceptionCost()
        for result in results:
            cost = cost.add(result.cost)
            self._skip(key, result.skipped)
            state.frames.extend(result.frames)
            state.speech.extend(result.speech)
        new_items = self._new_items(key, new_events, results)
        texts = [i for i in new_items if i.metadata.get("db") and i.text.strip()]
        vectors = self.embed([i.text for i in texts])
        none = np.zeros(0, dtype="<U1")
        old_ids = stored.arrays.get("ids", none) if stored else none
        old_vectors = (stored.arrays.get("vectors") if stored else None)
        if old_vectors is None:
            old_vectors = np.zeros((0, self.embedder().dim), dtype=np.float32)
        new_ids = np.asarray([i.id for i in texts], dtype=str)
        arrays = {
            "ids": np.concatenate([old_ids.astype(str), new_ids]),
            "vectors": np.concatenate([old_vectors, vectors]).astype(np.float32),
        }
        items = [*(stored.items if stored else []), *new_items]
        items.sort(key=lambda i: (i.time if i.time is not None else 0.0))
        return (StoredIndex(key=key, event_hashes=[], items=items, arrays=arrays,
                            state=state.model_dump_json()), len(texts), cost)

    def _whisper(self, has_transcripts: bool) -> bool:
        return self.speech == "whisper" or (self.speech == "auto" and not has_transcripts)

    def _new_items(self, key: str, events: Sequence[MemoryEvent],
               results: Sequence[JobResult]) -> list[MemoryItem]:
        items: list[MemoryItem] = []
        caveat = DETECTOR_CAVEAT if self.perception.detector == "color-regions" and (
            self._perceivers is None or self._perceivers.detector is None
            or self._perceivers.detector.name == "color-regions") else ""
        # times written as the stream's own events write theirs (dates on a person's days)
        label = time_label(events)
        for event in events:
            t = float(event.time or 0.0)
            if event.kind in ("frame", "image"):
                items.append(MemoryItem(id=event.id, key=key, event_id=event.id, modality="frame",
                                        text="", source=event.media, time=event.time,
                                        metadata={"shard": self.shard_of(t), "when": label(t)}))
            elif event.text.strip():  # released speech, utterances, notes: the ASR database
                start = float(event.metadata.get("start", t))
                items.append(MemoryItem(
                    id=event.id, key=key, event_id=event.id, modality="transcript",
                    text=event.text.strip(), source=event.media, time=event.time,
                    metadata={"db": "ASR", "released": True, "shard": self.shard_of(start),
                              "when": event.metadata.get("when") or label(t)}))
        for result in results:
            for n, segment in enumerate(result.speech):
                items.append(MemoryItem(
                    id=f"asr:{result.job}#{n}", key=key, event_id=result.job,
                    modality="transcript", text=segment.text, time=segment.end,
                    metadata={"db": "ASR", "shard": self.shard_of(segment.start),
                              "when": span_label(segment.start, segment.end, label)}))
            for frame in result.frames:
                if not frame.keyframe:
                    continue
                meta = {"shard": self.shard_of(frame.time), "when": label(frame.time)}
                if frame.ocr.strip():
                    items.append(MemoryItem(
                        id=f"ocr:{frame.id}", key=key, event_id=frame.id, modality="ocr",
                        text=frame.ocr.replace("\n", " "), time=frame.time,
                        metadata={**meta, "db": "OCR"}))
                if frame.detections:
                    items.append(MemoryItem(
                        id=f"det:{frame.id}", key=key, event_id=frame.id, modality="text",
                        text=scene_text(frame.detections, frame.width, frame.height,
                                        caveat=caveat),
                        time=frame.time,
                        metadata={**meta, "db": "DET", "width": frame.width,
                                  "height": frame.height, "caveat": caveat,
                                  "detections": [d.model_dump(mode="json")
                                                 for d in frame.detections]}))
        return items

    def _load(self, key: str, stored: StoredIndex) -> HybridIndex:
        shard_of = {i.id: int(i.metadata.get("shard", 0)) for i in stored.items}
        vectors = ShardedIndex(self.embedder().dim, self.empty_vectors, shard_of.get)
        ids = [str(i) for i in stored.arrays.get("ids", ())]
        if ids:
            vectors.add(ids, stored.arrays["vectors"])
        return self.stored_engine(stored, vectors)

    # -- retrieval -------------------------------------------------------------------------------

    def search(self, key: str, query: str, request: RetrievalRequest | None,
               visible: Sequence[MemoryItem], expansions: Sequence[str] = ()
               ) -> list[tuple[MemoryItem, float]]:
        """The merged hits of ``request`` (``None``: the bare ``query`` for every database)
        over every shard with visible items, ``k`` per database (each through the search's
        gates: cosine >= ``min_cosine``, a positive BM25 score), best first; no reranking.
        Runs the embedder: call it from a worker thread."""
        queries = self.database_queries(query, request, visible, expansions)
        return _merged(self.candidates(key, queries, visible, self.k), self.k)

    def database_queries(self, query: str, request: RetrievalRequest | None,
                         visible: Sequence[MemoryItem], expansions: Sequence[str] = ()
                         ) -> dict[Database, RetrievalQuery]:
        """What each database is searched with (``_database_queries``), rewritten when the
        search rewrites, with ``expansions``."""
        return {db: self.rewrite(text, visible, expansions)
                for db, text in _database_queries(query, request).items()}

    def candidates(self, key: str, queries: dict[Database, RetrievalQuery],
                   visible: Sequence[MemoryItem], depth: int
                   ) -> dict[Database, list[tuple[MemoryItem, float]]]:
        """Each database's ``depth`` best visible hits for its query, best first: one engine
        search per database, its visible texts (every shard's) the filter. Worker thread."""
        if not queries:
            return {}
        engine = self._engines[key]
        # Every database's text in one batch, in sorted order (a batch decides the last bits
        # of its rows: the hits keep the scores they had).
        texts = sorted({q.text for q in queries.values()})
        vectors = (dict(zip(texts, self.embed(texts), strict=True))
                   if engine.mode != "lexical" else {})
        by_id = {i.id: i for i in visible if i.metadata.get("db")}
        allow: dict[str, list[str]] = {}
        for item in by_id.values():
            allow.setdefault(item.metadata["db"], []).append(item.id)
        out: dict[Database, list[tuple[MemoryItem, float]]] = {}
        for db, wanted in queries.items():
            if allow.get(db):
                hits = engine.search(wanted, depth, allow=allow[db],
                                     vector=vectors.get(wanted.text))
                out[db] = [(by_id[i], s) for i, s in hits]
        return out

    async def ranked(self, key: str, query: str, request: RetrievalRequest | None,
                     visible: Sequence[MemoryItem]) -> list[tuple[MemoryItem, float]]:
        """``search`` with the search's model steps: the expander's texts, and each
        database's top ``rerank_depth`` reranked before its ``k`` are kept."""
        expansions = await self.expander.expand(query) if self.expander else []
        queries = self.database_queries(query, request, visible, expansions)
        stage = self.rerank_stage
        found = await anyio.to_thread.run_sync(partial(
            self.candidates, key, queries, visible, max(self.k, stage.depth) if stage else self.k))
        if stage is not None:
            for db, hits in found.items():
                by_id = {item.id: item for item, _ in hits}
                reordered = await stage.apply(queries[db].text, [(i.id, s) for i, s in hits],
                                              {i: item.text for i, item in by_id.items()})
                found[db] = [(by_id[i], s) for i, s in reordered]
        return _merged(found, self.k)

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        ranked = [item for item, _ in await self.ranked(key, query, None, items)]
        return ranked if k is None else ranked[:k]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        wanted, request_usage, request_note = await self._request(request)
        hits = await self.ranked(key, request.query, wanted, items)
        types: Sequence[DetType] = (wanted.type if wanted and wanted.type else DET_TYPES)
        builder = PromptBuilder()
        for db, header in (("ASR", "Speech (ASR), oldest first:"),
                           ("OCR", "On-screen text (OCR), oldest first:"),
                           ("DET", "Objects detected (DET), oldest first:")):
            chosen = sorted((i for i, _ in hits if i.metadata.get("db") == db),
                            key=lambda i: i.time or 0.0)
            if chosen:
                builder.text(header)
            for item in chosen:
                builder.text(f"[{item.metadata.get('when')}] {self._text(item, types)}")
        frames = self._frames(items, hits)
        if frames:
            builder.text(f"{len(frames)} frames of the most relevant stretch, oldest first:")
            for frame in frames:
                # frame events carry ImageRefs (memory/events.py, harness/solvers.py): narrows only
                if isinstance(frame.source, ImageRef):
                    builder.image(frame.source)
        builder.question(request.prompt, request.images)
        answer = await ask_model(request, builder, retrieved_ids=[i.id for i, _ in hits])
        usage = answer.usage.model_copy(update={
            "prompt_tokens": answer.usage.prompt_tokens + request_usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens + request_usage.completion_tokens,
        })
        report = self.report(key)
        return answer.model_copy(update={"usage": usage, "metadata": {
            "request": request_note,
            "shard": frames[0].metadata.get("shard") if frames else None,
            "frames": [f.id for f in frames],
            "index": report.origin if report else None,
            "perception": report.cost.model_dump(mode="json") if report else None,
        }})

    async def _request(self, request: AnswerRequest
                       ) -> tuple[RetrievalRequest | None, Usage, str]:
        """The model's retrieval request, its cost, and ``model`` / ``fallback: why`` /
        ``off``."""
        if not self.request:
            return None, Usage(), "off"
        builder = PromptBuilder()
        builder.text(REQUEST_PROMPT.format(question=request.query))
        plain = AnswerRequest(prompt="", query=request.query, model=request.model,
                              generate_config=request.generate_config, cache=request.cache,
                              time=request.time)
        reply = await ask_model(plain, builder)
        if reply.error:
            return None, reply.usage, f"fallback: model error: {reply.error}".splitlines()[0]
        try:
            found = json_object(reply.output)
            if found is None:
                raise ValueError("the reply holds no JSON object")
            parsed = RetrievalRequest.model_validate(found)
        except (ValueError, ValidationError) as exc:
            return None, reply.usage, f"fallback: {str(exc).splitlines()[0]}"
        return parsed, reply.usage, "model"

    def _text(self, item: MemoryItem, types: Sequence[DetType]) -> str:
        if item.metadata.get("db") != "DET":
            return item.text
        detections = [Detection.model_validate(d) for d in item.metadata.get("detections", [])]
        return scene_text(detections, int(item.metadata.get("width", 0)),
                          int(item.metadata.get("height", 0)), types,
                          caveat=str(item.metadata.get("caveat", "")))

    def _frames(self, visible: Sequence[MemoryItem],
                hits: Sequence[tuple[MemoryItem, float]]) -> list[MemoryItem]:
        """``frames`` frames sampled uniformly from the most relevant shard (the highest summed
        hit score; without hits, the newest shard), among the visible ones."""
        frames = [i for i in visible if i.modality == "frame" and i.source is not None]
        if not frames or self.frames == 0:
            return []
        score: dict[int, float] = {}
        for item, s in hits:
            shard = int(item.metadata["shard"])
            score[shard] = score.get(shard, 0.0) + s
        shard = (max(score, key=lambda sh: (score[sh], sh)) if score
                 else int(frames[-1].metadata["shard"]))
        pool = [f for f in frames if int(f.metadata["shard"]) == shard]
        if not pool:
            return []
        picks = np.linspace(0, len(pool) - 1, min(self.frames, len(pool))).round().astype(int)
        return [pool[int(n)] for n in dict.fromkeys(picks.tolist())]


def _merged(found: dict[Database, list[tuple[MemoryItem, float]]], k: int
            ) -> list[tuple[MemoryItem, float]]:
    """The first ``k`` hits of each database, best score first (ties in database order)."""
    return sorted((hit for hits in found.values() for hit in hits[:k]), key=lambda hit: -hit[1])


def _database_queries(query: str, request: RetrievalRequest | None) -> dict[Database, str]:
    """The text each database is searched with: the request's (ASR phrase; DET names joined,
    with the question for OCR), or the bare question for all three."""
    if request is None:
        return {db: query for db in DATABASES}
    out: dict[Database, str] = {"OCR": query}
    if request.asr:
        out["ASR"] = request.asr
    if request.det:
        out["DET"] = " ".join(request.det)
    return out
