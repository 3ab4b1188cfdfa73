"""``mem0`` and ``mem0-vision``: the mem0 memory system (``mem0ai``) under m3kit's causal cut.

mem0 extracts facts from each conversation turn with a chat model of its own and stores them
in a vector store: what it holds cannot be cut at a question's time afterwards, so it runs on
the streaming path (``memory.stream``): each key gets its own mem0 ``Memory`` (faiss with
cosine, as the M3Exam release configured it, and its SQLite history) in its own folder, fed
one event at a time in time order up to each question's time, and asked then.

Each event is one ``Memory.add`` (``infer``: mem0's model extracts the facts; the release's
baselines/mem0 added with ``infer=False``, storing each round's text verbatim) with metadata
``{event_id, time, kind, when}``: a round as the user's message (its speaker named, its time
label first) and the assistant's reply; an attachment as a user message. ``mem0`` sends an
image's text surrogate (its released description, ``events.items_from_events``);
``mem0-vision`` sends the image itself as an ``image_url`` message with mem0's
``enable_vision``, which has mem0's model describe it (one call per image) before extraction.
(The release's mem0_visual sent each round as one message of its text and up to 10 images,
which mem0 replaced by the model's description of the whole message; it also showed the
answer model the images of the retrieved rounds, as ``mem0-vision`` does.)

A question searches the key's mem0 (``k`` memories) and the model under evaluation answers
from them (with their times) through ``memory.prompt``; ``usage.retrieved_ids`` are the events
the memories came from. mem0's own model and embedding calls are counted on the wire
(``adapters.usage``) and charged to the question whose advance made them (``Usage.ingest_*``).

An ``add`` that fails (the extraction model's reply unreadable, an HTTP error after the
client's retries, a timeout, a store error) costs that event only: a ``SkippedRecord`` names
it, and the stream goes on. A refused connection is no property of the event: the key's store
is dropped (it may hold part of a batch), the question fails with the error (the harness then
checks whether the server is down), and the next advance feeds the key from the start
(``memory.stream``: a replay).

mem0 is imported when the first key is stored, with its telemetry off and its home folder
(``MEM0_DIR``, where it writes a config file on import) under m3kit's cache, never ``~/.mem0``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from hashlib import sha256
from pathlib import Path
from typing import Any, cast

import anyio

from m3kit import package_version
from m3kit.errors import M3kitError
from m3kit.memory.adapters.endpoints import (
    DEFAULT_EMBEDDER,
    DEFAULT_LLM,
    NO_KEY,
    ChatEndpoint,
    EmbeddingsEndpoint,
    connection_refused,
    failure_text,
)
from m3kit.memory.adapters.served import ServedMemory
from m3kit.memory.adapters.usage import UsageMeter, UsageSnapshot, openai_client
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem, Modality
from m3kit.memory.events import VISUAL_KINDS, when_of
from m3kit.memory.prompt import PromptBuilder, ask_model, sent_as_image
from m3kit.memory.stream import IngestCost
from m3kit.schema.media import ImageRef
from m3kit.schema.skipped import SkippedRecord

__all__ = ["MEM0_EXTRA", "Mem0Memory", "Mem0NotInstalledError"]

MEM0_EXTRA = "pip install 'm3kit[mem0]'"
# The release's settings (baselines/mem0/evaluator.py): the extraction model's sampling.
TEMPERATURE = 0.0
MAX_TOKENS = 1024
# get_all's bound when the whole store is listed (mem0 returns 20 by default).
ALL_MEMORIES = 1_000_000
HEADER = "Memories (mem0), oldest first:"
# conversation_events writes a round as "{speaker}: {utterance}", then this and the reply.
_REPLY = "\nassistant: "


class Mem0NotInstalledError(M3kitError, ImportError):
    """The memory ``mem0`` needs the ``mem0ai`` package (and faiss): ``MEM0_EXTRA``."""


@dataclass
class _KeyStore:
    """One key's mem0: the ``Memory``, the meter its clients report to, its folder."""

    memory: Any  # mem0.Memory (typed loosely: mem0 ships no type information)
    meter: UsageMeter
    folder: Path


class Mem0Memory(ServedMemory):
    """mem0 (``mem0ai``) per memory key, fed in time order and asked at each question's time.

    ``llm``: the chat endpoint mem0 extracts facts with (and, ``vision``, describes images);
    ``embedder``: the embeddings endpoint it stores and searches with (``dims``: the vectors'
    length). ``k``: memories a question is answered from. ``infer``: mem0's model extracts
    facts (else each message is stored as it is). ``store_dir``: where the run's folder is made
    (the system's temporary folder by default); it is removed on ``close`` and at exit, a key's
    folder on ``forget``. ``timeout_s``/``max_retries``: each request of mem0's clients.
    """

    name = "mem0"

    def __init__(
        self,
        *,
        llm: ChatEndpoint | Mapping[str, Any] = DEFAULT_LLM,
        embedder: EmbeddingsEndpoint | Mapping[str, Any] = DEFAULT_EMBEDDER,
        k: int = 5,
        vision: bool = False,
        infer: bool = True,
        store_dir: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        ocr: bool = True,
    ) -> None:
        super().__init__(llm=llm, store_dir=store_dir, timeout_s=timeout_s,
                         max_retries=max_retries, ocr=ocr)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        missing = [name for name in ("mem0", "faiss") if importlib.util.find_spec(name) is None]
        if missing:
            raise Mem0NotInstalledError(f"the memory mem0 needs {' and '.join(missing)}: "
                                        f"{MEM0_EXTRA}")
        self.embedder = EmbeddingsEndpoint.model_validate(embedder)
        self.k = k
        self.vision = vision
        self.infer = infer
        self._stores: dict[str, _KeyStore] = {}

    def config(self) -> dict[str, Any]:
        # endpoints by URL, model and the *name* of their key's variable: never a key
        return {
            "memory": self.name,
            "mem0": package_version("mem0ai"),
            "vision": self.vision,
            "infer": self.infer,
            "k": self.k,
            "llm": self.llm.model_dump(),
            "embedder": self.embedder.model_dump(),
            "vector_store": "faiss/cosine",
            "temperature": TEMPERATURE,
            "max_tokens": MAX_TOKENS,
            **self.served_config(),
        }

    def close(self) -> None:
        """Drop every key's store and remove the run's folder."""
        for key in list(self._stores):
            self._drop(key)
        self._folder.remove()

    # -- the streaming protocol --------------------------------------------------------------------

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        store = await anyio.to_thread.run_sync(self._open, key, self._folder.path())
        start = store.meter.snapshot()
        items = await self._surrogates(key, events)
        by_id = {event.id: event for event in events}
        for item in items:
            event = by_id[item.event_id]
            before = store.meter.snapshot()
            try:
                messages = await anyio.to_thread.run_sync(self._messages, event, item)
                await anyio.to_thread.run_sync(partial(
                    store.memory.add, messages, user_id=_user_id(key), infer=self.infer,
                    metadata=_metadata(event)))
            except Exception as exc:  # mem0 raises anything: named, per event
                if connection_refused(exc):  # the server's, not the event's: the base starts over
                    raise
                self._skip(key, [_skip_record(key, event, failure_text(exc))])
                continue
            unread = _unreadable_reply(store.meter.snapshot() - before)
            if unread is not None:
                self._skip(key, [_skip_record(
                    key, event, f"the extraction model's reply is not mem0's JSON, nothing "
                                f"stored: {unread[:120]!r}")])
        spent = store.meter.snapshot() - start
        return IngestCost(calls=spent.calls, prompt_tokens=spent.prompt_tokens,
                          completion_tokens=spent.completion_tokens)

    async def _reset(self, key: str) -> None:
        await anyio.to_thread.run_sync(self._drop, key)

    def _forget(self, key: str) -> None:
        self._drop(key)

    def _stored(self, key: str) -> list[MemoryItem]:
        store = self._stores.get(key)
        if store is None:
            return []
        found = store.memory.get_all(filters={"user_id": _user_id(key)}, top_k=ALL_MEMORIES)
        events = {event.id: event for event in self.stream(key)}
        items = [_item(key, row, events) for row in found["results"]]
        return sorted(items, key=lambda i: (i.time is not None, i.time or 0.0))

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        store = self._stores.get(key)
        if store is None or not items:
            return []
        found = await anyio.to_thread.run_sync(partial(
            store.memory.search, query, top_k=k or self.k, filters={"user_id": _user_id(key)}))
        # the store holds only events up to the question (the advance): the visible items are
        # the same memories, and the cut is checked again here
        by_id = {item.id: item for item in items}
        return [by_id[row["id"]] for row in found["results"] if row["id"] in by_id]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        # ``_retrieve``, not ``retrieve``: the key's turn is held by ``answer`` already
        retrieved = await self._retrieve(key, request.query, items, None)
        chosen = {item.id for item in retrieved}
        shown = [item for item in items if item.id in chosen]  # time order: a story
        builder = PromptBuilder()
        builder.items(HEADER, shown, send_images=False)
        if self.vision:  # the images the retrieved memories came from, once each
            sent: set[str] = set()
            for item in shown:
                if (sent_as_image(item, True) and isinstance(item.source, ImageRef)
                        and item.event_id not in sent):
                    sent.add(item.event_id)
                    builder.text(f"{item.modality} {item.event_id}:")
                    builder.image(item.source)
        builder.question(request.prompt, request.images)
        sources = list(dict.fromkeys(item.event_id for item in retrieved))
        return await ask_model(request, builder, retrieved_ids=sources)

    # -- mem0 ------------------------------------------------------------------------------------

    def _open(self, key: str, run_folder: Path) -> _KeyStore:
        """``key``'s store, made on first use in a folder of its own under ``run_folder`` (a
        worker thread's job: mem0 creates files)."""
        store = self._stores.get(key)
        if store is not None:
            return store
        memory_class = _mem0_memory_class()
        folder = run_folder / sha256(key.encode("utf-8")).hexdigest()[:24]
        folder.mkdir(parents=True, exist_ok=True)
        memory = memory_class.from_config(self._mem0_config(folder))
        meter = UsageMeter()
        # mem0 builds plain SDK clients (no timeout, no retry bound, nothing counted): its
        # LLM and embedder call ``self.client``, replaced by clients that bound and count
        memory.llm.client = openai_client(self.llm, meter, timeout_s=self.timeout_s,
                                          max_retries=self.max_retries)
        memory.embedding_model.client = openai_client(
            self.embedder, meter, timeout_s=self.timeout_s, max_retries=self.max_retries)
        store = self._stores[key] = _KeyStore(memory, meter, folder)
        return store

    def _mem0_config(self, folder: Path) -> dict[str, Any]:
        # mem0's config never holds the key (``NO_KEY``): the clients set in ``_open`` do
        llm: dict[str, Any] = {"model": self.llm.model, "api_key": NO_KEY,
                               "openai_base_url": self.llm.base_url,
                               "temperature": TEMPERATURE, "max_tokens": MAX_TOKENS}
        if self.vision:
            llm.update(enable_vision=True, vision_details="auto")
        return {
            "llm": {"provider": "openai", "config": llm},
            # no ``embedding_dims`` here: mem0 would send it as ``dimensions``, which servers
            # of fixed-size models refuse; the store is told the size instead
            "embedder": {"provider": "openai", "config": {
                "model": self.embedder.model, "api_key": NO_KEY,
                "openai_base_url": self.embedder.base_url}},
            "vector_store": {"provider": "faiss", "config": {
                "collection_name": "mem0", "path": str(folder / "faiss"),
                "distance_strategy": "cosine", "embedding_model_dims": self.embedder.dims}},
            "history_db_path": str(folder / "history.db"),
            "version": "v1.1",
        }

    def _drop(self, key: str) -> None:
        store = self._stores.pop(key, None)
        if store is None:
            return
        store.memory.close()
        for client in (store.memory.llm.client, store.memory.embedding_model.client):
            client.close()
        shutil.rmtree(store.folder, ignore_errors=True)

    def _messages(self, event: MemoryEvent, item: MemoryItem) -> list[dict[str, Any]]:
        """The messages one event is added as (a worker thread's job: an image is read)."""
        when = when_of(event)
        prefix = f"[{when}] " if when else ""
        if event.kind == "round":
            said, _, reply = event.text.partition(_REPLY)
            messages: list[dict[str, Any]] = [{"role": "user", "content": prefix + said}]
            return messages + ([{"role": "assistant", "content": reply}] if reply else [])
        by = f" by {event.speaker}" if event.speaker else ""
        if self.vision and sent_as_image(item, True) and isinstance(item.source, ImageRef):
            from m3kit.media.image import image_data_uri

            url = image_data_uri(item.source.path, record=event.id)
            return [{"role": "user", "content": f"{prefix}{event.kind} {event.id} attached{by}:"},
                    {"role": "user", "content": {"type": "image_url", "image_url": {"url": url}}}]
        return [{"role": "user",
                 "content": f"{prefix}{event.kind} {event.id} attached{by}: {item.text}"}]



def _item(key: str, row: Mapping[str, Any], events: Mapping[str, MemoryEvent]) -> MemoryItem:
    """One memory mem0 lists as an item: its time and raw source those of the event it came
    from (``metadata``), its modality the event's (a round's fact is text)."""
    meta = row.get("metadata") or {}
    event_id = str(meta.get("event_id", ""))
    event = events.get(event_id)
    kind = str(meta.get("kind", "text"))
    modality = cast(Modality, kind) if kind in VISUAL_KINDS else "text"
    time = meta.get("time")
    return MemoryItem(
        id=str(row["id"]), key=key, event_id=event_id, modality=modality,
        text=str(row.get("memory", "")), source=event.media if event is not None else None,
        time=float(time) if isinstance(time, int | float) else None,
        metadata={"event_id": event_id, "kind": kind, "when": meta.get("when")},
    )


def _user_id(key: str) -> str:
    # mem0 refuses an id with whitespace; each key has a store of its own, so any id will do
    return "_".join(key.split()) or "key"


def _metadata(event: MemoryEvent) -> dict[str, Any]:
    return {"event_id": event.id, "time": event.time, "kind": event.kind, "when": when_of(event)}


def _skip_record(key: str, event: MemoryEvent, reason: str) -> SkippedRecord:
    return SkippedRecord(file=key, record=event.id, field="mem0",
                         reason=f"mem0 did not store this {event.kind}: {' '.join(reason.split())}")


def _unreadable_reply(spent: UsageSnapshot) -> str | None:
    """The first extraction reply (JSON asked for) that mem0 could not read, judged as mem0
    does (``remove_code_blocks``, then the JSON or the JSON found in it, a ``memory`` list):
    mem0 logs it and stores nothing, silently. ``None`` when each was read."""
    from mem0.memory.utils import extract_json, remove_code_blocks

    for reply in spent.replies:
        if not reply.json_mode:
            continue
        text = remove_code_blocks(reply.content)
        if not text or not text.strip():
            continue  # an empty reply: nothing to extract, not an error
        parsed: Any = None
        for candidate in (text, extract_json(text)):
            try:
                parsed = json.loads(candidate, strict=False)
                break
            except ValueError:
                continue
        if not (isinstance(parsed, dict) and isinstance(parsed.get("memory", []), list)):
            return reply.content
    return None




def _mem0_memory_class() -> Any:
    """mem0's ``Memory``, imported with its telemetry off and its home folder (``MEM0_DIR``,
    read on import) under m3kit's cache unless the user set one: mem0 writes a config file
    there on import and would otherwise write it to ``~/.mem0``."""
    if "mem0" not in sys.modules:
        from m3kit.paths import cache_dir

        os.environ["MEM0_TELEMETRY"] = "False"
        os.environ.setdefault("MEM0_DIR", str(cache_dir() / "mem0"))
    try:
        # mem0's client module turns every DeprecationWarning of the process back on when it
        # is imported (``warnings.filterwarnings("default", ...)``): the filters are restored
        with warnings.catch_warnings():
            from mem0 import Memory
            from mem0.memory import telemetry
    except ImportError as exc:
        raise Mem0NotInstalledError(f"the memory mem0 cannot import mem0 ({exc}): "
                                    f"{MEM0_EXTRA}") from exc
    if telemetry.MEM0_TELEMETRY:
        raise M3kitError("mem0 was imported with its telemetry on before m3kit could turn it "
                         "off: set MEM0_TELEMETRY=False in the environment")
    return Memory
