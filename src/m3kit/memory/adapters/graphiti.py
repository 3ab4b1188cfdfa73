"""``graphiti``: the Graphiti temporal knowledge graph (``graphiti-core``) under m3kit's causal cut.

Graphiti has a model of its own extract entities and the facts between them (edges, with the
times they hold: ``valid_at``/``invalid_at``) from each episode it is given, merging them into
one graph: what it holds cannot be cut at a question's time afterwards, so it runs on the
streaming path (``memory.stream``). Each key gets its own graph, an embedded Kuzu database in a
folder of its own (one file per key: ``group_id`` partitions fail on Kuzu in 0.31.2), fed one
event at a time in time order up to each question's time, and asked then.

Each event is one ``add_episode``: its text (a round as ``speaker: utterance`` and
``assistant: reply`` lines; an image or frame as its text surrogate,
``events.items_from_events``), named by the event id, its source description naming the event,
at the event's absolute time (``reference_time``: the session's date plus the round's offset
for a dated conversation, the date itself on a wall clock; a stream without dates counts from
1970-01-01 UTC, which keeps the order and nothing else).

A question searches the key's graph for ``k`` facts (Graphiti's hybrid edge search: BM25 and
cosine, reciprocal-rank fused; no cross-encoder, so the client given for it is never called)
and the model under evaluation answers from them (with their validity) and the episodes they
came from, through ``memory.prompt``; ``usage.retrieved_ids`` are those episodes' events. The
graph holds only events up to the question (the advance); a fact is also shown only when every
episode it came from is (its item's time is its latest episode's), a second check of the cut.
Graphiti's model and embedding calls are counted on the wire (``adapters.usage``) and charged
to the question whose advance made them (``Usage.ingest_*``).

An ``add_episode`` that raises (the model's reply not JSON or not Graphiti's shape, an HTTP
error after the client's retries, a timeout) costs that event only: a ``SkippedRecord`` names
it, and the stream goes on (Graphiti's own retry of unreadable replies, up to four tries with
waits of 5 s or more, is left out: a reply at temperature 0 reads the same again). A refused
connection is no property of the event: the key's graph is dropped, the question fails with the
error, and the next advance feeds the key from the start (``memory.stream``: a replay).

Graphiti is imported when the first key is stored, with its telemetry (PostHog) off.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

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
from m3kit.memory.adapters.usage import UsageMeter, async_openai_client
from m3kit.memory.base import AnswerRequest, MemoryAnswer, MemoryEvent, MemoryItem
from m3kit.memory.events import time_label, wall_clock, when_of
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.stream import IngestCost
from m3kit.schema.skipped import SkippedRecord

if TYPE_CHECKING:
    from graphiti_core import Graphiti
    from graphiti_core.driver.kuzu_driver import KuzuDriver
    from graphiti_core.llm_client import LLMClient

__all__ = ["GRAPHITI_EXTRA", "GraphitiMemory", "GraphitiNotInstalledError"]

GRAPHITI_EXTRA = "pip install 'm3kit[graphiti]'"
# Graphiti's calls are extractions (JSON of a schema): sampled greedily, and bounded so that a
# small-context server (llama.cpp's) takes them; Graphiti's own default asks for 16384.
TEMPERATURE = 0.0
MAX_TOKENS = 1024
# The clock of a stream without dates starts here (Graphiti needs an absolute time).
UNDATED_ORIGIN = datetime(1970, 1, 1, tzinfo=UTC)
FACTS_HEADER = "Facts (Graphiti knowledge graph), oldest first:"
EPISODES_HEADER = "Episodes the facts come from, oldest first:"
# How Graphiti's model is asked for JSON of a schema: ``json_schema`` (OpenAI's, vLLM's and
# llama.cpp's own server constrain the reply to it); ``json_object`` (the schema in the prompt,
# any server with a JSON mode); ``json_object+schema`` (both, and the schema beside
# ``json_object``, which llama-cpp-python's server, refusing ``json_schema``, constrains to).
StructuredOutput = Literal["json_schema", "json_object", "json_object+schema"]
_EPISODES = "MATCH (e:Episodic) RETURN e.uuid AS uuid, e.name AS name, e.content AS content"
_EDGES = ("MATCH (e:RelatesToNode_) RETURN e.uuid AS uuid, e.fact AS fact, "
          "e.episodes AS episodes, e.valid_at AS valid_at, e.invalid_at AS invalid_at")


class GraphitiNotInstalledError(M3kitError, ImportError):
    """The memory ``graphiti`` needs ``graphiti-core`` with Kuzu: ``GRAPHITI_EXTRA``."""


@dataclass
class _KeyGraph:
    """One key's graph: Graphiti on its Kuzu file, the meter its clients report to, the event
    loop those clients belong to, and what the graph holds (read after each feed)."""

    graphiti: Graphiti
    driver: KuzuDriver
    meter: UsageMeter
    folder: Path
    loop: asyncio.AbstractEventLoop | None = None
    items: list[MemoryItem] = field(default_factory=list)
    episodes: dict[str, tuple[str, str]] = field(default_factory=dict)  # uuid: (event, text)


class GraphitiMemory(ServedMemory):
    """Graphiti (``graphiti-core``, Kuzu) per memory key, fed in time order and asked at each
    question's time.

    ``llm``: the chat endpoint Graphiti extracts entities and facts with (JSON of a schema,
    ``response_format: json_schema``); ``embedder``: the embeddings endpoint it stores and
    searches with (``dims``: the vectors' length). ``k``: facts a question is answered from.
    ``max_tokens``: the bound on each of Graphiti's replies; ``structured_output``: how they
    are asked for (``StructuredOutput``). ``store_dir``: where the run's
    folder is made (the system's temporary folder by default); it is removed on ``close`` and
    at exit, a key's folder on ``forget``. ``timeout_s``/``max_retries``: each request of
    Graphiti's clients. ``concurrency``: how many of its calls Graphiti runs at once (its
    ``max_coroutines``; it extracts in parallel): 1 for a server with one slot, such as
    llama.cpp's, where queued requests would time out.
    """

    name = "graphiti"

    def __init__(
        self,
        *,
        llm: ChatEndpoint | Mapping[str, Any] = DEFAULT_LLM,
        embedder: EmbeddingsEndpoint | Mapping[str, Any] = DEFAULT_EMBEDDER,
        k: int = 5,
        max_tokens: int = MAX_TOKENS,
        structured_output: StructuredOutput = "json_schema",
        store_dir: str | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        ocr: bool = True,
        concurrency: int = 4,
    ) -> None:
        super().__init__(llm=llm, store_dir=store_dir, timeout_s=timeout_s,
                         max_retries=max_retries, ocr=ocr)
        if k <= 0:
            raise ValueError(f"k must be positive, got {k}")
        if max_tokens <= 0:
            raise ValueError(f"max_tokens must be positive, got {max_tokens}")
        if concurrency <= 0:
            raise ValueError(f"concurrency must be positive, got {concurrency}")
        if structured_output not in get_args(StructuredOutput):
            raise ValueError(f"structured_output must be one of "
                             f"{', '.join(get_args(StructuredOutput))}, got {structured_output!r}")
        missing = [name for name in ("graphiti_core", "kuzu", "httpx")
                   if importlib.util.find_spec(name) is None]
        if missing:
            raise GraphitiNotInstalledError(f"the memory graphiti needs {' and '.join(missing)}: "
                                            f"{GRAPHITI_EXTRA}")
        self.embedder = EmbeddingsEndpoint.model_validate(embedder)
        self.k = k
        self.max_tokens = max_tokens
        self.structured_output = structured_output
        self.concurrency = concurrency
        self._graphs: dict[str, _KeyGraph] = {}

    def config(self) -> dict[str, Any]:
        # endpoints by URL, model and the *name* of their key's variable: never a key
        return {
            "memory": self.name,
            "graphiti": package_version("graphiti-core"),
            "kuzu": package_version("kuzu"),
            "k": self.k,
            "llm": self.llm.model_dump(),
            "embedder": self.embedder.model_dump(),
            "search": "edges: bm25 + cosine, rrf",
            "temperature": TEMPERATURE,
            "max_tokens": self.max_tokens,
            "structured_output": self.structured_output,
            **self.served_config(),
            "concurrency": self.concurrency,
        }

    def close(self) -> None:
        """Drop every key's graph and remove the run's folder."""
        for key in list(self._graphs):
            self._drop(key)
        self._folder.remove()

    # -- the streaming protocol --------------------------------------------------------------------

    async def _observe(self, key: str, events: list[MemoryEvent]) -> IngestCost:
        graph = await self._open(key)
        start = graph.meter.snapshot()
        items = await self._surrogates(key, events)
        by_id = {event.id: event for event in events}
        origin, _ = _origin(self.stream(key))
        for item in items:
            event = by_id[item.event_id]
            body = _episode_body(event, item)
            if not body:
                self._skip(key, [_skip_record(key, event, "it has no text (no description, "
                                                          "nothing read in it)")])
                continue
            try:
                await graph.graphiti.add_episode(
                    name=event.id, episode_body=body,
                    source_description=f"{event.kind} {event.id}",
                    reference_time=_reference_time(event, origin))
            except Exception as exc:  # Graphiti raises anything: named, per event
                if connection_refused(exc):  # the server's, not the event's: the base restarts
                    raise
                self._skip(key, [_skip_record(key, event, failure_text(exc))])
        await self._read_graph(key, graph)
        spent = graph.meter.snapshot() - start
        return IngestCost(calls=spent.calls, prompt_tokens=spent.prompt_tokens,
                          completion_tokens=spent.completion_tokens)

    async def _reset(self, key: str) -> None:
        graph = self._graphs.get(key)
        if graph is not None and graph.loop is _running_loop():
            # both hold the AsyncOpenAI client ``_bind`` gave them (``client``)
            holders: list[Any] = [graph.graphiti.llm_client, graph.graphiti.embedder]
            for holder in holders:
                await holder.client.close()
        await anyio.to_thread.run_sync(self._drop, key)

    def _forget(self, key: str) -> None:
        self._drop(key)

    def _stored(self, key: str) -> list[MemoryItem]:
        graph = self._graphs.get(key)
        return list(graph.items) if graph is not None else []

    async def _retrieve(self, key: str, query: str, items: list[MemoryItem], k: int | None
                        ) -> list[MemoryItem]:
        graph = self._graphs.get(key)
        if graph is None or not items:
            return []
        from graphiti_core.search.search_config_recipes import EDGE_HYBRID_SEARCH_RRF

        self._bind(graph)
        visible = {item.id: item for item in items}
        wanted = k or self.k
        # the facts not visible at the question's time (none, as the graph is fed only up to
        # it) are searched past, never shown
        config = EDGE_HYBRID_SEARCH_RRF.model_copy(
            update={"limit": wanted + len(graph.items) - len(visible)})
        found = await graph.graphiti.search_(query, config=config)
        ranked = [visible[edge.uuid] for edge in found.edges if edge.uuid in visible]
        return ranked[:wanted]

    async def _answer(self, key: str, items: list[MemoryItem], request: AnswerRequest
                      ) -> MemoryAnswer:
        # ``_retrieve``, not ``retrieve``: the key's turn is held by ``answer`` already
        retrieved = await self._retrieve(key, request.query, items, None)
        graph = self._graphs.get(key)
        episodes = graph.episodes if graph is not None else {}
        events = {event.id: event for event in self.stream(key)}
        _, dated = _origin(self.stream(key))
        facts = sorted(retrieved, key=_item_order)  # time order: a story
        builder = PromptBuilder()
        if facts:
            builder.text(FACTS_HEADER)
        for fact in facts:
            builder.text(f"- {_fact_line(fact, dated)}")
        sources = list(dict.fromkeys(event_id for fact in retrieved
                                     for event_id in fact.metadata["events"]))
        shown = [(event_id, text) for event_id, text in episodes.values() if event_id in sources]
        shown.sort(key=lambda pair: _event_order(events.get(pair[0])))
        if shown:
            builder.text(EPISODES_HEADER)
        for event_id, text in shown:
            builder.text(f"{_event_label(events.get(event_id), event_id)}: {text}")
        builder.question(request.prompt, request.images)
        return await ask_model(request, builder, retrieved_ids=sources)

    # -- Graphiti ----------------------------------------------------------------------------------

    async def _open(self, key: str) -> _KeyGraph:
        """``key``'s graph, made on first use in a folder of its own, with its full-text
        indices (Graphiti 0.31.2 never makes them on Kuzu: its search would fail)."""
        graph = self._graphs.get(key)
        if graph is None:
            folder = self._folder.path() / sha256(key.encode("utf-8")).hexdigest()[:24]
            graph = await anyio.to_thread.run_sync(self._new_graph, folder)
            from graphiti_core.driver.driver import GraphProvider
            from graphiti_core.graph_queries import get_fulltext_indices

            for statement in get_fulltext_indices(GraphProvider.KUZU):
                await graph.driver.execute_query(statement)
            self._graphs[key] = graph
        self._bind(graph)
        return graph

    def _new_graph(self, folder: Path) -> _KeyGraph:
        """Graphiti on a new Kuzu file in ``folder`` (a worker thread's job: files are made);
        its model clients are given by ``_bind``."""
        modules = _graphiti_modules()
        folder.mkdir(parents=True, exist_ok=True)
        driver = modules.KuzuDriver(db=str(folder / "graph.kuzu"))
        # the keys of the configs are never read: ``_bind`` gives both their clients
        llm = modules.llm_client(modules.LLMConfig(
            api_key=NO_KEY, base_url=self.llm.base_url, model=self.llm.model,
            small_model=self.llm.model, temperature=TEMPERATURE, max_tokens=self.max_tokens),
            self.structured_output)
        embedder = modules.OpenAIEmbedder(modules.OpenAIEmbedderConfig(
            api_key=NO_KEY, base_url=self.embedder.base_url,
            embedding_model=self.embedder.model, embedding_dim=self.embedder.dims))
        graphiti = modules.Graphiti(graph_driver=driver, llm_client=llm, embedder=embedder,
                                    cross_encoder=modules.reranker,
                                    max_coroutines=self.concurrency)
        return _KeyGraph(graphiti, driver, UsageMeter(), folder)

    def _bind(self, graph: _KeyGraph) -> None:
        """Give ``graph``'s model calls clients that bound and count them, made for the running
        event loop (an async client's connections belong to the loop that made them: a new
        loop, as each ``asyncio.run`` is, gets new clients)."""
        loop = _running_loop()
        if graph.loop is loop:
            return
        # both Graphiti clients call ``self.client`` (typed on their subclasses only)
        holders: list[Any] = [graph.graphiti.llm_client, graph.graphiti.embedder]
        for holder, endpoint in zip(holders, (self.llm, self.embedder), strict=True):
            holder.client = async_openai_client(endpoint, graph.meter, timeout_s=self.timeout_s,
                                                max_retries=self.max_retries)
        graph.loop = loop

    async def _read_graph(self, key: str, graph: _KeyGraph) -> None:
        """Read what ``graph`` holds now: its episodes and its facts, as items."""
        episodes, _, _ = await graph.driver.execute_query(_EPISODES)
        edges, _, _ = await graph.driver.execute_query(_EDGES)
        graph.episodes = {str(row["uuid"]): (str(row["name"]), str(row["content"] or ""))
                          for row in _rows(episodes)}
        events = {event.id: event for event in self.stream(key)}
        items = [_fact_item(key, row, graph.episodes, events) for row in _rows(edges)]
        graph.items = sorted(items, key=_item_order)

    def _drop(self, key: str) -> None:
        graph = self._graphs.pop(key, None)
        if graph is None:
            return
        graph.driver.client.close()  # Kuzu's connections and their threads
        graph.driver.db.close()
        shutil.rmtree(graph.folder, ignore_errors=True)


@dataclass(frozen=True)
class _GraphitiModules:
    """What the adapter builds from graphiti-core, imported once it is needed."""

    Graphiti: Any
    KuzuDriver: Any
    LLMConfig: Any
    OpenAIEmbedder: Any
    OpenAIEmbedderConfig: Any
    llm_client: Any  # (LLMConfig, StructuredOutput) -> the chat client, one try per call
    reranker: Any  # the cross-encoder, never called


def _graphiti_modules() -> _GraphitiModules:
    """graphiti-core's parts, imported with its telemetry off (read at each event it would
    send, so set whether or not Graphiti was imported before)."""
    os.environ["GRAPHITI_TELEMETRY_ENABLED"] = "false"
    try:
        from graphiti_core import Graphiti
        from graphiti_core.cross_encoder.client import CrossEncoderClient
        from graphiti_core.driver.kuzu_driver import KuzuDriver
        from graphiti_core.embedder.openai import OpenAIEmbedder, OpenAIEmbedderConfig
        from graphiti_core.llm_client.config import LLMConfig, ModelSize
        from graphiti_core.llm_client.openai_generic_client import OpenAIGenericClient
        from graphiti_core.prompts.models import Message
    except ImportError as exc:
        raise GraphitiNotInstalledError(f"the memory graphiti cannot import graphiti-core "
                                        f"({exc}): {GRAPHITI_EXTRA}") from exc
    from pydantic import BaseModel

    class OneTryClient(OpenAIGenericClient):
        """Graphiti's OpenAI-compatible client without its own retry (4 tries, waits of 5 to
        120 s, on unreadable replies too): the SDK client retries what a retry can cure. Each
        reply bounded by the memory's ``max_tokens``: Graphiti asks its edge extraction and
        node dedupe for up to 16,384 tokens itself, which a small served model that loops
        fills (8,525 tokens, 12 minutes, in one SmolLM2 run)."""

        # tenacity's decorator types the base method as ``_RetryDecorated``: same call
        async def _generate_response_with_retry(  # type: ignore[override]
            self, messages: list[Message], response_model: type[BaseModel] | None = None,
            max_tokens: int = MAX_TOKENS, model_size: ModelSize = ModelSize.medium, *,
            model: str | None = None,
        ) -> dict[str, Any]:
            return await self._generate_response(messages, response_model,
                                                 min(max_tokens, self.max_tokens),
                                                 model_size, model=model)

    class SchemaBesideJsonObject(OneTryClient):
        """``json_object+schema``: Graphiti's ``json_object`` mode (the schema in the prompt)
        with the schema also sent beside ``json_object`` (llama-cpp-python constrains to it)."""

        def _build_response_format(self, response_model: type[BaseModel] | None
                                   ) -> dict[str, Any]:
            if response_model is None:
                return {"type": "json_object"}
            return {"type": "json_object", "schema": response_model.model_json_schema()}

    class NoReranker(CrossEncoderClient):
        """Graphiti builds an OpenAI reranker (api.openai.com) unless given one; the hybrid
        RRF search never calls it."""

        async def rank(self, query: str, passages: list[str]) -> list[tuple[str, float]]:
            raise M3kitError("the graphiti memory searches without a cross-encoder")

    def llm_client(config: LLMConfig, structured: StructuredOutput) -> LLMClient:
        if structured == "json_schema":
            return OneTryClient(config=config, max_tokens=config.max_tokens)
        made = SchemaBesideJsonObject if structured == "json_object+schema" else OneTryClient
        return made(config=config, max_tokens=config.max_tokens,
                    structured_output_mode="json_object")

    return _GraphitiModules(Graphiti, KuzuDriver, LLMConfig, OpenAIEmbedder,
                            OpenAIEmbedderConfig, llm_client, NoReranker())


def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def _rows(result: Any) -> list[Mapping[str, Any]]:
    """The rows of one statement's result (Kuzu's driver gives a list of rows per statement)."""
    return [row for row in result if isinstance(row, Mapping)]


def _origin(stream: Sequence[MemoryEvent]) -> tuple[datetime, bool]:
    """The moment ``stream``'s clock counts from, and whether it is a real date: a wall clock
    counts from the epoch; a dated conversation (each event with its session's ISO date,
    ``events.conversation_events``) from its first session's date, the latest of each event's
    session date less its time (a session's first round is at its date); else ``UNDATED_ORIGIN``."""
    timed = [event for event in stream if event.time is not None]
    if not timed:
        return UNDATED_ORIGIN, False
    if time_label(timed) is wall_clock:
        return datetime.fromtimestamp(0, tz=UTC), True
    origins: list[datetime] = []
    for event in timed:
        date = _session_date(event)
        if date is None:
            return UNDATED_ORIGIN, False
        origins.append(date - timedelta(seconds=event.time or 0.0))
    return max(origins), True


def _session_date(event: MemoryEvent) -> datetime | None:
    raw = event.metadata.get("session_date")
    if not isinstance(raw, str):
        return None
    try:
        date = datetime.fromisoformat(raw)
    except ValueError:
        return None
    return date if date.tzinfo is not None else date.replace(tzinfo=UTC)


def _reference_time(event: MemoryEvent, origin: datetime) -> datetime:
    return origin + timedelta(seconds=event.time or 0.0)


def _episode_body(event: MemoryEvent, item: MemoryItem) -> str:
    """What Graphiti is given of one event: a round's lines as they are (``speaker: text``,
    ``assistant: reply``), a transcript as its speaker's line, an attachment or a frame as a
    line naming it with its text surrogate; '' when there is no text."""
    text = item.text.strip()
    if not text:
        return ""
    if event.kind == "round":
        return text
    if event.kind == "transcript":
        return f"{event.speaker or 'speaker'}: {text}"
    by = f"{event.speaker or 'user'}: " if event.kind != "frame" else ""
    return f"{by}[{event.kind} {event.id}] {text}"


def _fact_item(key: str, row: Mapping[str, Any], episodes: Mapping[str, tuple[str, str]],
               events: Mapping[str, MemoryEvent]) -> MemoryItem:
    """One fact (an edge) as an item: from the events of the episodes it came from, its time
    the latest of theirs (visible only once all are), its event the first."""
    sources = [episodes[uuid][0] for uuid in row.get("episodes") or [] if uuid in episodes]
    sources = sorted(dict.fromkeys(sources), key=lambda source: _event_order(events.get(source)))
    times = [t for t in (getattr(events.get(event_id), "time", None) for event_id in sources)
             if t is not None]
    return MemoryItem(
        id=str(row["uuid"]), key=key, event_id=sources[0] if sources else "", modality="text",
        text=str(row.get("fact") or ""), time=max(times) if times else None,
        metadata={"events": sources, "valid_at": _iso(row.get("valid_at")),
                  "invalid_at": _iso(row.get("invalid_at"))},
    )


def _iso(value: object) -> str | None:
    return value.isoformat() if isinstance(value, datetime) else None


def _fact_line(fact: MemoryItem, dated: bool) -> str:
    """``fact (valid from .. until ..) [from d1-2]``; the validity only for a dated stream
    (on an undated one Graphiti's dates count from 1970 and mean nothing)."""
    line = fact.text
    valid, invalid = fact.metadata.get("valid_at"), fact.metadata.get("invalid_at")
    if dated and (valid or invalid):
        span = " ".join(part for part in (f"from {valid[:10]}" if valid else "",
                                          f"until {invalid[:10]}" if invalid else "") if part)
        line += f" (valid {span})"
    return f"{line} [from {', '.join(fact.metadata['events'])}]"


def _event_label(event: MemoryEvent | None, event_id: str) -> str:
    """``[when] kind id``: the event's time as the data labels it (its clock time else)."""
    if event is None:
        return event_id
    when = when_of(event)
    return f"[{when}] {event.kind} {event.id}" if when else f"{event.kind} {event.id}"


def _event_order(event: MemoryEvent | None) -> tuple[bool, float]:
    return (event is not None and event.time is not None,
            event.time or 0.0 if event is not None else 0.0)


def _item_order(item: MemoryItem) -> tuple[bool, float, str]:
    return (item.time is not None, item.time or 0.0, item.id)


def _skip_record(key: str, event: MemoryEvent, reason: str) -> SkippedRecord:
    return SkippedRecord(file=key, record=event.id, field="graphiti",
                         reason=f"graphiti did not store this {event.kind}: "
                                f"{' '.join(reason.split())}")


