"""What a memory is fed for an M3Exam (or LoCoMo) conversation: one function, used by the task's
memory solver and by the memory benchmark (``perf/memory_recall.py``), so the benchmark measures
the input the eval gives."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from m3kit.errors import M3kitError
from m3kit.schema import Conversation, PdfPageRef

if TYPE_CHECKING:
    from m3kit.memory.base import MemoryEvent

__all__ = ["conversation_stream"]

logger = logging.getLogger(__name__)


def conversation_stream(conversation: Conversation) -> list[MemoryEvent]:
    """The conversation as memory events (``m3kit.memory.events.conversation_events``), with
    each PDF page's text layer as its text when the data gives the page no description."""
    from m3kit.media.pdf import pdf_page_text
    from m3kit.memory.events import conversation_events

    events = conversation_events(conversation)
    out = []
    for event in events:
        if event.kind == "pdf_page" and isinstance(event.media, PdfPageRef) and not event.text:
            try:
                text = pdf_page_text(event.media.path, event.media.page)
            except M3kitError as exc:
                logger.warning("PDF page without text: %s", exc)
                text = ""
            event = event.model_copy(update={"text": text})
        out.append(event)
    return out
