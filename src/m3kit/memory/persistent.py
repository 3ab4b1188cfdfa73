"""``PersistentMemory``: the base of the long-video memories whose index outlives the process.

``videorag`` and ``egorag`` run perception (decode, keyframes, OCR, detection, speech) and
embeddings over hours of video per key; neither may be paid twice. Their build goes through the
``IndexStore``: the stored version for (config, key, events) is loaded and nothing is computed;
a stored version built from a prefix of the events is extended with the new events only
(incremental ingest); otherwise the index is built and stored. A damaged stored version (any
way it fails to load, or arrays and state that are not what this memory writes) is reported in
``skipped(key)`` as a rebuilt index (``store.rebuilt_record``: the file, the key and why) and
rebuilt. A store that cannot be written (read-only, full) costs one warning per memory: each
index is then kept in memory for the run (``BuildReport.saved`` false), not thrown away.

``report(key)`` says how the key's index came about (``stored``, ``extended``, ``built``), how
many events were perceived, and the perception cost: the usage record's index-build account.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
import numpy as np
from pydantic import BaseModel, Field

from m3kit.memory.base import MemoryEvent, MemoryItem
from m3kit.memory.retrieval.config import FUSED_SEARCH, RetrievalConfig
from m3kit.memory.retrieval.hybrid import HybridIndex, TieOrder
from m3kit.memory.retrieval.index import VectorIndex
from m3kit.memory.retrieval.lexical import LexicalIndex
from m3kit.memory.store import (
    CorruptIndexError,
    IndexStore,
    IndexWriteError,
    StoredIndex,
    event_hash,
    rebuilt_record,
    unsaved_record,
)
from m3kit.memory.vectors import VectorMemory
from m3kit.perception.base import embed_queries
from m3kit.perception.pipeline import (
    Executor,
    FrameInput,
    JobResult,
    Perceivers,
    PerceptionConfig,
    PerceptionCost,
    PerceptionJob,
    Progress,
    run_jobs,
)
from m3kit.schema.media import ImageRef

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

logger = logging.getLogger(__name__)

Origin = Literal["stored", "extended", "built"]


class BuildReport(BaseModel):
    """How a key's index came about: loaded as stored, extended with new events, or built; the
    events perceived and the texts embedded this time; the perception cost; whether it is
    stored (``saved`` false: the store could not be written, the index lives in memory)."""

    origin: Origin
    events: int
    new_events: int
    embedded: int = 0
    corrupt_store: bool = False
    saved: bool = True
    cost: PerceptionCost = Field(default_factory=PerceptionCost)


@dataclass(frozen=True)
class _Plan:
    key: str
    hashes: list[str]
    new_events: list[MemoryEvent]
    stored: StoredIndex | None
    corrupt: bool

    @property
    def complete(self) -> bool:
        return self.stored is not None and not self.new_events


class PersistentMemory(VectorMemory):
    """A memory with a text embedder, a perception pipeline and a stored index per key.

    Subclasses implement ``_jobs`` and ``_finish`` (items, arrays and state from new events,
    given what is already stored) and ``_load`` (the search engine of a key from a stored
    version, ``stored_engine``). ``store=False`` keeps nothing on disk (each process builds
    again). ``retrieval`` (``retrieval.config``; default ``default_retrieval``) is how the
    subclasses search: unless its mode is ``dense``, each loaded key also gets a BM25 index over
    its stored texts (by the stored ``ids`` array).
    """

    # The stored index keeps each text's vector only: no views to search.
    default_retrieval: ClassVar[RetrievalConfig] = FUSED_SEARCH
    # Settings of ``config()`` that change how a stored index is searched, not what it holds
    # (the search's record but the vector engine): left out of its address (``store_config``),
    # so a dense and a hybrid run share one build.
    search_settings: ClassVar[frozenset[str]] = frozenset(
        field.serialization_alias or name for name, field in RetrievalConfig.model_fields.items()
        if name != "index")
    # How a stored index writes its texts; part of its address, so that a change (2: times on
    # a person's days as dates, ``events.time_label``, not hours since 1970) makes the stores
    # written before it miss and rebuild instead of serving the old texts.
    text_format: ClassVar[int] = 2
    # The record a stored ``state.json`` holds: checked on load, so that a state that does not
    # parse is a damaged store (rebuilt), not a failed sample.
    state_model: ClassVar[type[BaseModel]]

    def __init__(
        self,
        *,
        embedder: TextEmbedder | str | None = None,
        store: str | Path | IndexStore | None | Literal[False] = None,
        executor: Executor = "inprocess",
        workers: int = 2,
        perception: PerceptionConfig | None = None,
        perceivers: Perceivers | None = None,
        progress: Progress | None = None,
        retrieval: RetrievalConfig | None = None,
    ) -> None:
        super().__init__(embedder=embedder, retrieval=retrieval)
        if self.retrieval.views:
            raise ValueError(f"memory {self.name!r} searches no views (its stored index keeps "
                             "each text's vector only): set views: false")
        self._engines: dict[str, HybridIndex] = {}
        self.store = (None if store is False else
                      store if isinstance(store, IndexStore) else IndexStore(store))
        self.executor: Executor = executor
        self.workers = workers
        self.perception = perception or PerceptionConfig()
        self._perceivers = perceivers
        self._progress = progress
        self._reports: dict[str, BuildReport] = {}
        self._unsaved_warned = False
        self._warn_lock = threading.Lock()

    # -- what subclasses share -------------------------------------------------------------------

    def base_config(self) -> dict[str, Any]:
        """What every persistent memory's config names: the search (``retrieval``'s record),
        embedder, engine, perception (the executor and the store's place are not there: they
        never change the index)."""
        perceivers = self._perceivers
        names = {}
        if perceivers is not None:  # models given by the caller: their names, not the defaults
            names = {"reader": getattr(perceivers.reader, "name", None),
                     "detector": getattr(perceivers.detector, "name", None),
                     "recognizer": getattr(perceivers.recognizer, "name", None)}
        return {
            **self.search_config(),
            "text_format": self.text_format,
            "perception": self.perception.model_dump(mode="json"),
            **({"perceivers": names} if names else {}),
        }

    def store_config(self) -> dict[str, Any]:
        """The part of ``config()`` that addresses the stored index: all of it but the
        ``search_settings``."""
        return {k: v for k, v in self.config().items() if k not in self.search_settings}

    def new_index(self, ids: Sequence[str], vectors: np.ndarray) -> VectorIndex:
        index = self.empty_vectors()
        if len(ids):
            index.add(list(ids), vectors)
        return index

    def stored_engine(self, stored: StoredIndex, vectors: VectorIndex, *,
                      ties: TieOrder = "index") -> HybridIndex:
        """The search over a stored version: ``vectors`` (its arrays, in the subclass's
        indexes) and, unless the mode is ``dense``, BM25 over its texts by the stored ``ids``
        (rebuilt on every load: cheap and nothing perceived, so never stored), in this
        memory's mode, with its cosine gate."""
        lexical = None
        if self.retrieval.mode != "dense":
            text_of = {i.id: i.text for i in stored.items}
            ids = [str(i) for i in stored.arrays.get("ids", ())]
            lexical = LexicalIndex()
            lexical.add(ids, [text_of.get(i, "") for i in ids])
        return HybridIndex(self.embedder(), vectors, mode=self.retrieval.mode, lexical=lexical,
                           min_cosine=self.retrieval.min_cosine, ties=ties,
                           fusion=self.retrieval.fusion, feedback=self.retrieval.feedback)

    def embed(self, texts: Sequence[str], *, queries: bool = False) -> np.ndarray:
        """Rows for ``texts`` (zero rows for none): stored texts, or search ``queries``
        (``perception.base.embed_queries``). Runs the embedder: call from a thread."""
        if not texts:
            return np.zeros((0, self.embedder().dim), dtype=np.float32)
        if queries:
            return embed_queries(self.embedder(), list(texts))
        return np.asarray(self.embedder().embed(list(texts)), dtype=np.float32)

    def perceive(self, jobs: Sequence[PerceptionJob]) -> list[JobResult]:
        """Run ``jobs`` through the perception pipeline with this memory's executor."""
        if not jobs:
            return []
        return run_jobs(jobs, self.perception, executor=self.executor,
                        perceivers=self._perceivers if self.executor == "inprocess" else None,
                        workers=self.workers, progress=self._progress)

    def report(self, key: str) -> BuildReport | None:
        """How the index of ``key`` came about in this process (``None`` before ingest)."""
        return self._reports.get(key)

    # -- the build -------------------------------------------------------------------------------

    async def _build(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        return await anyio.to_thread.run_sync(self._build_sync, key, events)

    def _build_sync(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        plan = self._plan(key, events)
        jobs = [] if plan.complete else self._jobs(key, plan.new_events, plan.stored)
        return self._complete(plan, self.perceive(jobs))

    async def ingest_many(self, streams: Mapping[str, Sequence[MemoryEvent]]) -> None:
        """``ingest`` for many keys at once, their perception in one pipeline run: with
        ``executor="ray"``, the jobs of every video go to the workers together (one key's
        ingest can only spread its own shards). Keys already ingested are left as they are."""
        todo = {k: list(v) for k, v in streams.items() if not self.is_ingested(k)}
        started = time.perf_counter()

        def build() -> None:
            plans = [self._plan(key, events) for key, events in todo.items()]
            jobs = [[] if p.complete else self._jobs(p.key, p.new_events, p.stored)
                    for p in plans]
            results = self.perceive([job for group in jobs for job in group])
            at = 0
            for plan, group in zip(plans, jobs, strict=True):
                items = self._complete(plan, results[at:at + len(group)])
                at += len(group)
                self._items[plan.key] = items
                self._build_seconds[plan.key] = time.perf_counter() - started

        for key in todo:
            self._skipped[key] = []
        await anyio.to_thread.run_sync(build)

    def _plan(self, key: str, events: Sequence[MemoryEvent]) -> _Plan:
        """What the build of ``key`` starts from: the stored version it can use (complete, or a
        prefix to extend), a damaged one reported in ``skipped``."""
        ordered = sorted(events, key=lambda e: (e.time if e.time is not None else 0.0))
        hashes = [event_hash(e) for e in ordered]
        stored: StoredIndex | None = None
        corrupt = False
        if self.store is not None:
            try:
                stored = self.store.lookup(self.store_config(), key, hashes)
                if stored is not None:
                    self._check_stored(stored)
            except CorruptIndexError as exc:
                logger.warning("memory %s: damaged stored index %s; building it again", key, exc)
                self._skip(key, [rebuilt_record(key, exc)])
                stored, corrupt = None, True
        done = len(stored.event_hashes) if stored is not None else 0
        return _Plan(key=key, hashes=hashes, new_events=ordered[done:], stored=stored,
                     corrupt=corrupt)

    def _complete(self, plan: _Plan, results: list[JobResult]) -> list[MemoryItem]:
        """The items of ``plan.key`` once its perception ``results`` are in: computed, stored,
        loaded (or, for a complete stored version, loaded alone)."""
        key, stored = plan.key, plan.stored
        if plan.complete:
            assert stored is not None
            self._engines[key] = self._load(key, stored)
            self._reports[key] = BuildReport(origin="stored", events=len(plan.hashes),
                                             new_events=0)
            return stored.items
        result, embedded, cost = self._finish(key, plan.new_events, stored, results)
        result.key = key
        result.event_hashes = plan.hashes
        saved = self.store is not None and self._save(result)
        self._engines[key] = self._load(key, result)
        self._reports[key] = BuildReport(
            origin="extended" if stored is not None else "built", events=len(plan.hashes),
            new_events=len(plan.new_events), embedded=embedded, corrupt_store=plan.corrupt,
            saved=saved, cost=cost)
        return result.items

    def _save(self, index: StoredIndex) -> bool:
        """Store ``index``; False when the store cannot be written (warned once per memory: a
        read-only or full store would otherwise warn for every key of the run)."""
        assert self.store is not None
        try:
            self.store.save(self.store_config(), index)
        except IndexWriteError as exc:
            with self._warn_lock:
                first, self._unsaved_warned = not self._unsaved_warned, True
            if first:
                logger.warning("memory %s: %s; indexes are kept in memory for this run (and "
                               "built again by the next)", self.name, exc)
                # the one warning reaches the run's summary too, with the key's ingest skips
                self._skip(index.key, [unsaved_record(index.key, exc)])
            return False
        return True

    def _check_stored(self, stored: StoredIndex) -> None:
        """Raise ``CorruptIndexError`` unless ``stored`` holds what this memory writes: ``ids``
        (one per row) and ``vectors`` of the embedder's dimension, a state that parses."""
        where = stored.path or Path(".")
        ids, vectors = stored.arrays.get("ids"), stored.arrays.get("vectors")
        dim = self.embedder().dim
        if ids is None or vectors is None or ids.ndim != 1 or ids.dtype.kind not in "US" \
                or vectors.ndim != 2 or vectors.dtype.kind != "f" \
                or vectors.shape != (len(ids), dim):
            shapes = ", ".join(f"{name} {a.dtype}{list(a.shape)}"
                               for name, a in stored.arrays.items()) or "no arrays"
            raise CorruptIndexError(f"arrays are not ids and vectors of dimension {dim} "
                                    f"({shapes})", path=where / "arrays.npz")
        try:
            self.state_model.model_validate_json(stored.state)
        except ValueError as exc:  # pydantic's ValidationError
            raise CorruptIndexError(f"state invalid: {str(exc).splitlines()[0]}",
                                    path=where / "state.json") from None

    def _forget(self, key: str) -> None:
        self._reports.pop(key, None)
        self._engines.pop(key, None)
        self._drop(key)

    @abstractmethod
    def _jobs(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None
              ) -> list[PerceptionJob]:
        """The perception jobs of ``new_events`` (time order) of ``key``, given what ``stored``
        holds (``None``: nothing yet)."""

    @abstractmethod
    def _finish(self, key: str, new_events: list[MemoryEvent], stored: StoredIndex | None,
                results: list[JobResult]) -> tuple[StoredIndex, int, PerceptionCost]:
        """The index of ``key`` once ``new_events`` and their perception ``results`` join what
        ``stored`` holds, the number of texts embedded, and the perception cost. Runs in a
        worker thread."""

    @abstractmethod
    def _load(self, key: str, stored: StoredIndex) -> HybridIndex:
        """The search engine of ``key`` from a stored (or just computed) version
        (``stored_engine``), and whatever else the subclass keeps in memory for it."""

    def _drop(self, key: str) -> None:
        """Drop what the subclass keeps in memory for ``key`` beside its engine."""


# -- from events to perception jobs ----------------------------------------------------------------


def perception_jobs(key: str, events: Sequence[MemoryEvent], span: float, *,
                    whisper: bool) -> list[PerceptionJob]:
    """One job per ``span`` seconds of the stream and per source video in it (a person's
    sessions are separate videos: each job's speech comes from one file), in time order."""
    groups: dict[tuple[int, str], list[MemoryEvent]] = {}
    for event in events:
        part = int(max(float(event.time or 0.0), 0.0) // span)
        groups.setdefault((part, str(event.metadata.get("video", ""))), []).append(event)
    jobs = []
    for (part, _), group in sorted(groups.items(), key=lambda g: (g[0][0], g[1][0].time or 0.0)):
        frames = frame_inputs(group)
        audio = speech_job_audio(group) if whisper else None
        if not frames and audio is None:
            continue
        first = frames[0].id if frames else "audio"
        jobs.append(PerceptionJob(
            id=f"{key}/part-{part:05d}/{first}", frames=tuple(frames),
            audio=audio[0] if audio else None, audio_span=audio[1] if audio else None,
            audio_offset=audio[2] if audio else 0.0))
    return jobs


def frame_inputs(events: Sequence[MemoryEvent]) -> list[FrameInput]:
    """The frames among ``events`` that have an image file, as pipeline inputs."""
    return [FrameInput(id=e.id, path=e.media.path, time=float(e.time or 0.0))
            for e in events if e.kind == "frame" and isinstance(e.media, ImageRef)]


def speech_job_audio(events: Sequence[MemoryEvent],
                     ) -> tuple[str, tuple[float, float], float] | None:
    """The one video the frames of ``events`` come from, the span they cover on its clock, and
    the offset from its clock to the stream's (``metadata["video"]``, ``time_offset``); ``None``
    when the frames name no video or more than one."""
    frames = [e for e in events if e.kind == "frame" and e.metadata.get("video")]
    videos = {str(e.metadata["video"]) for e in frames}
    if len(videos) != 1:
        return None
    offset = float(frames[0].metadata.get("time_offset", 0.0) or 0.0)
    times = [float(e.time or 0.0) - offset for e in frames]
    start, end = min(times), max(times)
    step = (end - start) / max(len(times) - 1, 1) if len(times) > 1 else 1.0
    return videos.pop(), (max(start, 0.0), end + step), offset
