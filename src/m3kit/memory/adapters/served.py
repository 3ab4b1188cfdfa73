"""``ServedMemory``: what every adapter of an external memory system shares.

Each system (mem0, Graphiti, MemoryOS, cognee) runs its own model on a served OpenAI-compatible
endpoint (``llm``), keeps its stores in a folder of the run (``RunFolder``, one per memory, a
folder per key under it), bounds each request of its clients (``timeout_s``, ``max_retries``),
and receives frames and images as their text surrogates (``ocr``: their description and their
OCR text, as ``rag`` reads them). It is fed on the streaming path (``memory.stream``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from m3kit.memory.adapters.endpoints import ChatEndpoint
from m3kit.memory.adapters.run_folder import RunFolder
from m3kit.memory.base import MemoryEvent, MemoryItem
from m3kit.memory.events import items_from_events
from m3kit.memory.ocr import OcrSurrogates
from m3kit.memory.stream import StreamingMemory
from m3kit.schema.skipped import SkippedRecord

__all__ = ["ServedMemory"]


class ServedMemory(OcrSurrogates, StreamingMemory):
    """Base of the adapters: the settings every system takes, checked and kept."""

    def __init__(self, *, llm: ChatEndpoint | Mapping[str, Any], store_dir: str | None,
                 timeout_s: float, max_retries: int, ocr: bool) -> None:
        super().__init__()
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
        self.llm = ChatEndpoint.model_validate(llm)
        self.store_dir = store_dir
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        # frames and images reach the system as text: their description and their OCR text
        self.ocr = ocr
        self._folder = RunFolder(store_dir, f"m3kit-{self.name}-")

    def served_config(self) -> dict[str, Any]:
        """The settings every adapter's ``config()`` records: the request bounds and how
        frames and images are read."""
        return {"timeout_s": self.timeout_s, "max_retries": self.max_retries,
                "ocr": self.ocr_config()}

    async def _surrogates(self, key: str, events: list[MemoryEvent]) -> list[MemoryItem]:
        """``events`` as the items the system is given (``events.items_from_events``, in a
        worker thread: OCR blocks); what they could not give is recorded as skips of ``key``."""
        skipped: list[SkippedRecord] = []
        items = await anyio.to_thread.run_sync(partial(
            items_from_events, key, events, reader=self.build_reader(), skipped=skipped))
        self._skip(key, skipped)
        return items
