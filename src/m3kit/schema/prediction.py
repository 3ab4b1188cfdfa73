"""Predictions: a model's (or memory system's) answer to one question, with its cost.

Cost is a result: every prediction carries its ``Usage`` next to the answer so tables can
report accuracy and cost side by side.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Prediction", "Usage"]

_RECORD = ConfigDict(extra="forbid", frozen=True)


class Usage(BaseModel):
    """What answering one question cost.

    ``raw_media_escalations`` counts how often a memory fell back from text surrogates to raw
    images or pages (M3Proctor's cascade); ``retrieved_ids`` lists the memory records
    retrieved, in rank order, for evidence-recall diagnostics.
    """

    model_config = _RECORD

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    images_sent: int = Field(default=0, ge=0)
    raw_media_escalations: int = Field(default=0, ge=0)
    index_build_seconds: float = Field(default=0.0, ge=0)
    # the calls to the answering model this question took (1 for a single prompt; an agent
    # that asks again, VideoAgent, or a cascade that escalates, more); 0 where not reported
    model_calls: int = Field(default=0, ge=0)
    retrieved_ids: list[str] = Field(default_factory=list)
    # What feeding a streaming memory up to this question cost (``memory.stream.IngestCost``):
    # the events fed, the memory's own model calls and tokens while storing them, seconds, and
    # replays. Paid by the question that caused the feed: their sum over a key's questions is
    # the key's ingestion. Zero for an index memory (its build is ``index_build_seconds``).
    ingest_events: int = Field(default=0, ge=0)
    ingest_calls: int = Field(default=0, ge=0)
    ingest_prompt_tokens: int = Field(default=0, ge=0)
    ingest_completion_tokens: int = Field(default=0, ge=0)
    ingest_seconds: float = Field(default=0.0, ge=0)
    ingest_replays: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        """The combined cost of two steps (counts summed, retrieved ids concatenated)."""
        if not isinstance(other, Usage):
            return NotImplemented
        summed = {name: getattr(self, name) + getattr(other, name)
                  for name in Usage.model_fields}  # lists concatenate, counts add
        return Usage(**summed)


class Prediction(BaseModel):
    """The answer produced for question ``id``.

    ``prediction`` is the raw output text (answer parsing is the metrics' job); ``error`` is
    set instead of a usable answer when the model call failed, so the run can go on and the
    failure is still counted.
    """

    model_config = _RECORD

    id: str = Field(min_length=1)
    prediction: str = ""
    model: str | None = None
    usage: Usage | None = None
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
