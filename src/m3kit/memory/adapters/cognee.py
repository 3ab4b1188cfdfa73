"""``cognee``: the cognee graph memory (``cognee`` 1.6.5) under m3kit's causal cut.

cognee turns documents into a knowledge graph with a chat model of its own (``cognify``:
chunks, entities and their relations, summaries) and embeds its nodes and edges: what it holds
cannot be cut at a question's time afterwards, so it runs on the streaming path
(``memory.stream``). Each memory key is a cognee *dataset* of its own, and cognee's access
control (on, its default) gives each dataset its own graph (Ladybug, cognee's Kuzu) and vector
store (LanceDB) files; the datasets share the run's folder and its SQLite catalogue. A key's
advance ``add``s each event of the batch as one text document, labelled with its time and its
event id (rounds, transcript lines, the text surrogates of images and frames,
``events.items_from_events``), then ``cognify``s the key's dataset once: the graph is extended
by the batch, at the cost of cognee's extraction and summary calls (the ingestion cost).

A question asks cognee for what its ``GRAPH_COMPLETION`` search would give its own answer model
(``only_context``: the triplets found by vector search over the graph's nodes and edges, with
the chunks' text, rendered by cognee) and the model under evaluation answers from that context
through ``memory.prompt``: no cognee answer call. Graph completion rather than ``CHUNKS``
because the graph is what cognee adds to a plain RAG: ``CHUNKS`` would never read what
``cognify`` built. ``usage.retrieved_ids`` are the events whose documents or chunks are
endpoints of the retrieved triplets (an entity alone names no event).

cognee's state is its process's: one configuration (models, folders) and engines cached by
it. So one ``CogneeMemory`` uses cognee in a process at a time: the last one started (a run's;
an earlier one used again raises), on an event loop of its own in a thread of its own (cognee's
engines are bound to the loop that made them; the harness's loops come and go), one piece of
work at a time, so that each key's calls are counted exactly. They are counted on the wire
(``adapters.usage``): the chat calls through litellm's shared HTTP client
(``litellm.aclient_session``), the embeddings through the client of cognee's embedding engine.
The question's own embedding (cognee's search) is counted by neither: it is no ingestion, and
no call of the model under evaluation.

Structured output (``structured_output``): ``json_object``, cognee's own way with an
OpenAI-compatible endpoint (its ``litellm_native`` framework: the schema written into the
system prompt, ``response_format: json_object``, the reply validated and, invalid, asked again
with the error, three times); or ``json_schema`` (cognee's ``instructor`` framework in its
``json_schema`` mode: the schema sent as ``response_format``, which vLLM and llama.cpp's own
server constrain decoding to; llama-cpp-python's server refuses it). cognee retries a failed
model call for at least 2 attempts and 240 s (``cognee.infrastructure.llm.retry_config``),
waiting 8 to 128 s between them, and an embeddings call for up to 128 s: each bad reply of a
small model would cost minutes. Bounded here: each is tried ``1 + max_retries`` times (cognee's
waits between tries kept), each request of its clients gives up after ``timeout_s``.

A batch cognee cannot store (its extraction reply invalid after cognee's retries, an HTTP
error, a store error) costs the batch's events: a ``SkippedRecord`` names each, their documents
are deleted from the dataset (cognee would try them again at every later ``cognify``), and the
stream goes on. A refused
connection is no property of the events: the question fails with the error, and the key's
dataset is dropped and fed from the start at its next question (``memory.stream``).

Before cognee is imported its telemetry is turned off (``TELEMETRY_DISABLED``), its session
memory too (``CACHING=false``: it stores earlier questions and answers and searches them, which
would carry one question into another's context), its first-run connection test skipped, and
its tokenizer pointed at the tiktoken files litellm ships (cognee would download them).
cognee's pins cannot share m3kit's environment: it lives in an environment of its own
(``COGNEE_EXTRA``; README, "Memory").
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import anyio

from m3kit import package_version
from m3kit.errors import M3kitError
from m3kit.memory.adapters.endpoints import (
    DEFAULT_EMBEDDER,
    DEFAULT_LLM,
    ChatEndpoint,
    EmbeddingsEndpoint,
    connection_refused,
    failure_text,
)
from m3kit.memory.adapters.served import ServedMemory
from m3kit.memory.adapters.usage import UsageMeter, async_openai_client
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import when_of
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.stream import IngestCost
from m3kit.schema.skipped import SkippedRecord

__all__ = ["COGNEE_EXTRA", "CogneeMemory", "CogneeNotInstalledError"]

COGNEE_EXTRA = ("cognee's own virtualenv: python -m venv ENV && ENV/bin/pip install -e "
                "'.[cognee]' (README, Memory; its pins conflict with m3kit's main environment)")
HEADER = "Memory (cognee's knowledge graph):"
# What cognee's search answers with: the context its graph completion would be given.
SEARCH_TYPE = "GRAPH_COMPLETION"

T = TypeVar("T")
StructuredOutput = Literal["json_object", "json_schema"]
# the bound on each of cognee's replies (as graphiti's and mem0's)
MAX_TOKENS = 1024
# cognee's extraction model samples greedily (as mem0's here, and the M3Exam release's).
TEMPERATURE = 0.0



class CogneeNotInstalledError(M3kitError, ImportError):
    """The memory ``cognee`` needs the ``cognee`` package, in an environment of its own:
    ``COGNEE_EXTRA``."""


@dataclass
class _KeyStore:
    """One key's cognee dataset: its name (a new one after each reset), the items it was given
    (one document each) and which event each document and chunk text came from."""

    dataset: str
    items: list[MemoryItem] = field(default_factory=list)
    documents: dict[str, str] = field(default_factory=dict)  # document text -> event id
    dataset_id: Any = None  # cognee's UUID, once ``add`` made the dataset


class _CogneeLoop:
    """An event loop in a thread of its own, where one memory's cognee calls run, one at a
    time (cognee's engines belong to the loop that made them, and some of its caches to the
    loop too: each memory gets a fresh one)."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._lock: asyncio.Lock | None = None  # made on the loop
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="m3kit-cognee")
        self._thread.start()

    def run(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work()`` on the loop, after the work before it, and wait for it (from any
        thread but the loop's)."""
        async def call() -> T:
            if self._lock is None:
                self._lock = asyncio.Lock()
            async with self._lock:
                return await work()

        return asyncio.run_coroutine_threadsafe(call(), self._loop).result()

    def close(self) -> None:
        """Cancel what cognee left running (litellm's logging worker), then stop the loop."""
        async def cancel_the_rest() -> None:
            rest = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
            for task in rest:
                task.cancel()
            await asyncio.gather(*rest, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(cancel_the_rest(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


# The memory cognee is configured for now (cognee's configuration is per process): the last
# one that started. An earlier one that is used again raises rather than use its stores with
# another's configuration.
_CURRENT_LOCK = threading.Lock()
_current: list[CogneeMemory] = []


class CogneeMemory(ServedMemory):
    """cognee (``cognee``) per memory key, fed in time order and asked at each question's time.

    ``llm``: the chat endpoint cognee builds its graph with; ``embedder``: the embeddings
    endpoint it indexes and searches with (``dims``: the vectors' length). ``k``: the triplets
    a question's context is made of. ``store_dir``: where the run's folder is made (the
    system's temporary folder by default); it is removed on ``close``. ``timeout_s`` /
    ``max_retries``: each request of the clients cognee is given. ``structured_output``: how
    cognee asks its model for JSON (``json_object``: the schema in the prompt; ``json_schema``:
    the schema as ``response_format``).
    """

    name = "cognee"

    def __init__(
        self,
        *,
        llm: ChatEndpoint | Mapping[str, Any] = DEFAULT_LLM,
        embedder: EmbeddingsEndpoint | Mapping[str, Any] = DEFAULT_EMBEDDER,
        k: int = 5,
        store_dir: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        ocr: bool = True,
        max_tokens: int = MAX_TOKENS,
        structured_output: StructuredOutput = "json_object",
    ) -> None:
        super().__init__(llm=llm, store_dir=store_dir, timeout_s=timeout_s,
                         max_retries=max_retries, ocr=ocr)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if structured_output not in ("json_object", "json_schema"):
            raise ValueError(f"structured_output must be json_object or json_schema, got "
                             f"{structured_output!r}")
        if importlib.util.find_spec("cognee") is None:
            raise CogneeNotInstalledError(f"the memory cognee needs cognee 1.6.5 in "
                                          f"{COGNEE_EXTRA}")
        self.embedder = EmbeddingsEndpoint.model_validate(embedder)
        self.k = k
        if max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        self.max_tokens = max_tokens
        self.structured_output = structured_output
        self._loop: _CogneeLoop | None = None
        self._meter = UsageMeter()
        self._stores: dict[str, _KeyStore] = {}
        self._generation = 0  # numbers the datasets: a reset key gets a new one

    def config(self) -> dict[str, Any]:
        # endpoints by URL, model and the *name* of their key's variable: never a key
        return {
            "memory": self.name,
            "cognee": package_version("cognee"),
            "k": self.k,
            "search": SEARCH_TYPE,
            "llm": self.llm.model_dump(),
            "embedder": self.embedder.model_dump(),
            "stores": "sqlite+lancedb+ladybug, one dataset per key",
            "structured_output": self.structured_output,
            **self.served_config(),
            "max_tokens": self.max_tokens,
            "attempts": 1 + self.max_retries,
            "temperature": TEMPERATURE,
        }

    def close(self) -> None:
        """Stop this memory's cognee loop and remove the run's folder (every key's dataset)."""
        self._stores.clear()
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        with _CURRENT_LOCK:
            if self in _current:
                _current.remove(self)
        self._folder.remove()

    # -- the streaming protocol --------------------------------------------------------------------

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        items = await self._surrogates(key, events)
        store = self._stores.setdefault(key, self._new_store(key))
        by_id = {event.id: event for event in events}
        documents = {_document(by_id.get(item.event_id), item): item
                     for item in items if item.text.strip()}
        if not documents:
            return IngestCost()
        start = self._meter.snapshot()
        try:
            await self._cognee(partial(self._store, store, list(documents)))
        except Exception as exc:  # cognee raises anything: named, per batch
            if connection_refused(exc):  # the server's, not the events': the base starts over
                raise
            reason = f"cognee did not store this batch: {' '.join(failure_text(exc).split())}"
            self._skip(key, [SkippedRecord(file=key, record=item.event_id, field="cognee",
                                           reason=reason) for item in documents.values()])
        else:
            store.items.extend(documents.values())
            store.documents.update({text: item.event_id for text, item in documents.items()})
        spent = self._meter.snapshot() - start
        return IngestCost(calls=spent.calls, prompt_tokens=spent.prompt_tokens,
                          completion_tokens=spent.completion_tokens)

    async def _reset(self, key: str) -> None:
        store = self._stores.pop(key, None)
        if store is not None and store.dataset_id is not None:
            await self._cognee(partial(_empty_dataset, store.dataset_id))

    def _forget(self, key: str) -> None:
        # synchronous: the dataset is left in the run's folder (removed on close), never
        # searched again (a key fed again gets a new dataset)
        self._stores.pop(key, None)

    def _stored(self, key: str) -> list[MemoryItem]:
        store = self._stores.get(key)
        return list(store.items) if store is not None else []

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        store = self._stores.get(key)
        context, sources = "", list[str]()
        if store is not None and items:
            context, sources = await self._cognee(partial(self._search, store, request.query))
        builder = PromptBuilder()
        if context.strip():
            builder.text(HEADER)
            builder.text(context.strip())
        builder.question(request.prompt, request.images)
        return await ask_model(request, builder, retrieved_ids=sources)

    # -- cognee (on its loop) ----------------------------------------------------------------------

    async def _cognee(self, work: Callable[[], Awaitable[T]]) -> T:
        """``work()`` run on this memory's cognee loop (cognee configured for it on first
        use)."""
        return await anyio.to_thread.run_sync(self._run, work)

    def _run(self, work: Callable[[], Awaitable[T]]) -> T:
        with _CURRENT_LOCK:
            if self._loop is not None and self not in _current:
                raise M3kitError("another cognee memory was started in this process after "
                                 "this one: cognee's configuration is per process, and is "
                                 "now that memory's")
            _current[:] = [self]
        if self._loop is None:
            loop = _CogneeLoop()
            try:
                loop.run(self._configure)
            except BaseException:
                loop.close()
                raise
            self._loop = loop
        return self._loop.run(work)

    async def _store(self, store: _KeyStore, documents: list[str]) -> None:
        import cognee

        added = await cognee.add(documents, dataset_name=store.dataset)
        store.dataset_id = getattr(added, "dataset_id", store.dataset_id)
        try:
            await cognee.cognify(datasets=[store.dataset])
        except Exception:
            # a document cognify failed on stays in the dataset, and every later cognify of
            # the dataset would try it again (and fail again): the batch's are deleted
            await _delete_documents(store.dataset_id, documents)
            raise

    async def _search(self, store: _KeyStore, query: str) -> tuple[str, list[str]]:
        import cognee
        from cognee import SearchType

        found = await cognee.search(query_text=query, query_type=SearchType[SEARCH_TYPE],
                                    datasets=[store.dataset], top_k=self.k, only_context=True,
                                    verbose=True)
        contexts: list[str] = []
        sources: list[str] = []
        for result in found:
            row = result if isinstance(result, Mapping) else vars(result)
            context = row.get("context_result")
            if isinstance(context, str) and context.strip():
                contexts.append(context)
            for edge in row.get("objects_result") or []:
                for node in (getattr(edge, "node1", None), getattr(edge, "node2", None)):
                    event_id = _source_event(node, store.documents)
                    if event_id is not None and event_id not in sources:
                        sources.append(event_id)
        return "\n\n".join(contexts), sources

    # -- the run --------------------------------------------------------------------------------

    def _new_store(self, key: str) -> _KeyStore:
        self._generation += 1
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
        return _KeyStore(dataset=f"m3kit_{digest}_{self._generation}")

    async def _configure(self) -> None:
        """Point cognee at this run's folder and endpoints, and count its calls. On cognee's
        loop (``_CogneeLoop``): the HTTP clients made here belong to it."""
        folder = await anyio.to_thread.run_sync(self._folder.path)
        cognee = await anyio.to_thread.run_sync(_import_cognee)
        import litellm
        from cognee.infrastructure.databases.cache.config import get_cache_config
        from cognee.infrastructure.databases.vector.embeddings.get_embedding_engine import (
            get_embedding_engine,
        )

        # CACHING=false reaches the configurations cognee builds from now on; this one may
        # have been built at its import (before this memory, by another importer)
        get_cache_config().caching = False
        cognee.config.system_root_directory(str(folder / "system"))
        cognee.config.data_root_directory(str(folder / "data"))
        # the keys are read from the environment now and held in cognee's memory only (its
        # setters that persist write a .env file; these do not)
        cognee.config.set_llm_config({
            "llm_provider": "custom", "llm_model": f"openai/{self.llm.model}",
            "llm_endpoint": self.llm.base_url, "llm_api_key": self.llm.api_key(),
            # every completion call's arguments: litellm's SDK client times out, and retries,
            # as told (its default: 2 retries, 600 s); instructor takes ``max_retries`` as its
            # own (validation retries, 1 here), so under it the SDK keeps its 2 retries
            # each reply bounded: cognee's own cap is 16,384 tokens, sent as
            # ``max_completion_tokens``, which llama.cpp's server does not read
            "llm_max_completion_tokens": self.max_tokens,
            "llm_args": {"temperature": TEMPERATURE, "timeout": self.timeout_s,
                         "max_tokens": self.max_tokens,
                         **({"max_retries": self.max_retries}
                            if self.structured_output == "json_object" else {})},
            **_FRAMEWORKS[self.structured_output]})
        cognee.config.set_embedding_config({
            "embedding_provider": "openai_compatible", "embedding_model": self.embedder.model,
            "embedding_endpoint": self.embedder.base_url,
            "embedding_api_key": self.embedder.api_key(),
            "embedding_dimensions": self.embedder.dims})
        # every chat call cognee makes goes through litellm's shared client: counted there
        litellm.aclient_session = _litellm_session(self._meter, self.timeout_s)
        engine = get_embedding_engine()
        engine._client = async_openai_client(self.embedder, self._meter,
                                             timeout_s=self.timeout_s,
                                             max_retries=self.max_retries)
        _bound_retries(1 + self.max_retries)


# cognee's LLM settings for each ``structured_output`` (set each time: they are per process).
_FRAMEWORKS: Mapping[str, Mapping[str, str]] = {
    "json_object": {"structured_output_framework": "litellm_native", "llm_instructor_mode": ""},
    "json_schema": {"structured_output_framework": "instructor",
                    "llm_instructor_mode": "json_schema_mode"},
}


def _bound_retries(attempts: int) -> None:
    """Try each of cognee's model calls (structured output, both frameworks) and embeddings
    calls at most ``attempts`` times. cognee sets no bound but time (240 s, 128 s); its
    ``tenacity`` decorators read their stop condition from the ``retry`` object they expose,
    so setting it there bounds every later call (cognee's state is per process)."""
    from cognee.infrastructure.databases.vector.embeddings import (
        OpenAICompatibleEmbeddingEngine as embeddings,
    )
    from cognee.infrastructure.llm.structured_output_framework.litellm_instructor.llm.generic_llm_api import (  # noqa: E501 (cognee's module path)
        adapter as generic_adapter,
    )
    from cognee.infrastructure.llm.structured_output_framework.litellm_native import (
        native_adapter,
    )
    from tenacity import stop_after_attempt

    for method in (native_adapter.NativeLiteLLMAdapter.acreate_structured_output,
                   generic_adapter.GenericAPIAdapter.acreate_structured_output,
                   embeddings.OpenAICompatibleEmbeddingEngine.embed_text):
        method.retry.stop = stop_after_attempt(attempts)


async def _delete_documents(dataset_id: Any, documents: list[str]) -> None:
    """Delete ``documents`` (and what cognee derived from them) from the dataset: cognee
    names a text document ``text_<md5 of its text>``."""
    import cognee

    names = {_document_name(text) for text in documents}
    for row in await cognee.datasets.list_data(dataset_id):
        if getattr(row, "name", None) in names:
            await cognee.datasets.delete_data(dataset_id, row.id)


def _document_name(text: str) -> str:
    """The name cognee gives the text document ``text``."""
    return "text_" + hashlib.md5(text.encode("utf-8")).hexdigest()


async def _empty_dataset(dataset_id: Any) -> None:
    import cognee

    await cognee.datasets.empty_dataset(dataset_id)


def _document(event: MemoryEvent | None, item: MemoryItem) -> str:
    """The text of the cognee document an event's item is stored as: its time (as the data
    labels it, else its clock time), kind and event id first, so cognee's graph and the answer
    model both see when and where it came from (``event``: the item's, when it is one of the
    batch's as given; merged events make items of their own)."""
    when = when_of(item)
    prefix = f"[{when}] " if when else ""
    kind = event.kind if event is not None else item.modality
    return f"{prefix}{kind} {item.event_id}: {item.text}"


def _source_event(node: Any, documents: Mapping[str, str]) -> str | None:
    """The event a retrieved graph node came from: a document (named ``text_<md5 of its
    text>`` by cognee) or a chunk of one (its text is part of the document's); ``None`` for
    an entity or a summary."""
    attributes = getattr(node, "attributes", None)
    if not isinstance(attributes, Mapping):
        return None
    kind = attributes.get("type")
    if kind == "TextDocument":
        name = str(attributes.get("name", ""))
        for text, event_id in documents.items():
            if name == _document_name(text):
                return event_id
    elif kind == "DocumentChunk":
        chunk = str(attributes.get("text", "")).strip()
        for text, event_id in documents.items():
            if chunk and chunk in text:
                return event_id
    return None


def _litellm_session(meter: UsageMeter, timeout_s: float) -> Any:
    """The HTTP client litellm sends every OpenAI-compatible call through, reporting each
    response to ``meter``."""
    from openai import DefaultAsyncHttpxClient

    return DefaultAsyncHttpxClient(timeout=timeout_s,
                                   event_hooks={"response": [meter.on_async_response]})




def _import_cognee() -> Any:
    """cognee, imported with its telemetry and session memory off, its first-run connection
    test skipped and its tokenizer files those litellm ships (cognee would download them)."""
    os.environ["TELEMETRY_DISABLED"] = "1"
    os.environ["CACHING"] = "false"
    os.environ["COGNEE_SKIP_CONNECTION_TEST"] = "true"
    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin is not None:
        tokenizers = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(tokenizers))
    try:
        import cognee
    except ImportError as exc:
        raise CogneeNotInstalledError(f"the memory cognee cannot import cognee ({exc}): "
                                      f"{COGNEE_EXTRA}") from exc
    return cognee
