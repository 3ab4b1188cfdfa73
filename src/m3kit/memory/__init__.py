"""Memory systems behind one protocol: ingest events per key, retrieve, answer with usage
accounting.

    memory = make_memory("rag", k=8)
    await memory.ingest("video-17", frame_events(store, video, indices))
    ranked = await memory.retrieve("video-17", question, time=42.0)  # best first
    answer = await memory.answer("video-17", prompt, get_model(...), time=42.0, query=question)

Importing this package loads no model, no faiss and no inspect-ai: each loads on first use.
"""

from m3kit.memory.base import (
    AnswerRequest,
    EventKind,
    Memory,
    MemoryAnswer,
    MemoryEvent,
    MemoryItem,
    Modality,
)
from m3kit.memory.context import ContextMemory
from m3kit.memory.events import (
    conversation_events,
    frame_events,
    item_label,
    items_from_events,
    merge_events,
    transcript_events,
)
from m3kit.memory.hierarchical import HierarchicalMemory
from m3kit.memory.indexed import IndexedMemory
from m3kit.memory.proctor import ProctorMemory
from m3kit.memory.prompt import PromptBuilder, ask_model
from m3kit.memory.rag import RagMemory
from m3kit.memory.registry import make_memory, memory_names
from m3kit.memory.retrieval.index import (
    INDEXES,
    FaissIndex,
    Hit,
    NumpyIndex,
    VectorIndex,
    make_index,
)

__all__ = [
    "INDEXES",
    "AnswerRequest",
    "ContextMemory",
    "EventKind",
    "FaissIndex",
    "HierarchicalMemory",
    "Hit",
    "IndexedMemory",
    "Memory",
    "MemoryAnswer",
    "MemoryEvent",
    "MemoryItem",
    "Modality",
    "NumpyIndex",
    "ProctorMemory",
    "PromptBuilder",
    "RagMemory",
    "VectorIndex",
    "ask_model",
    "conversation_events",
    "frame_events",
    "item_label",
    "items_from_events",
    "make_index",
    "make_memory",
    "memory_names",
    "merge_events",
    "transcript_events",
]
