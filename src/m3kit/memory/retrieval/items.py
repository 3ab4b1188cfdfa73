"""What a memory stores and retrieval ranks: a text surrogate with its modality and its raw source.

It lives on the retrieval floor because every index, view and rewriting rule reads it; the memory
protocol (``m3kit.memory.base``) re-exports it for the memories above.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.schema.media import MediaRef

Modality = Literal["frame", "image", "pdf_page", "transcript", "text", "ocr", "caption"]


class MemoryItem(BaseModel):
    """A unit a memory stores: a text surrogate with its modality and its raw source."""

    model_config = ConfigDict(frozen=True)

    id: str
    key: str
    event_id: str
    modality: Modality
    text: str
    source: MediaRef | None = None
    time: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
