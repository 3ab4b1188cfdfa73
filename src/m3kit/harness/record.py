"""What the harness records about each sample, next to inspect's own record.

Kept in the sample's metadata under ``"m3kit"`` so that it lands in the eval log: the frames
shown (paths into the frame store, not pixels), what the answer cost, and why a sample failed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

from m3kit.schema import Usage

__all__ = ["RECORD_KEY", "SampleRecord", "read_record"]

RECORD_KEY = "m3kit"


class SampleRecord(BaseModel):
    """The harness's account of one sample.

    ``failure`` is set when no answer could be had (the model call failed after its retries, the
    memory reported an error, the media could not be read): the scorer counts the sample wrong.
    ``seconds`` splits the harness's time: ``frames`` (selection and decoding), ``ingest``
    (memory index building, first sample of a key only), ``answer`` (the model call or the
    memory's answer).
    """

    frames: list[str] = Field(default_factory=list)
    frame_times: list[float] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    failure: str | None = None
    memory: str | None = None
    seconds: dict[str, float] = Field(default_factory=dict)


def read_record(metadata: Mapping[str, Any] | None) -> SampleRecord | None:
    """The record stored in a sample's metadata, or ``None`` when the harness wrote none."""
    raw = (metadata or {}).get(RECORD_KEY)
    return SampleRecord.model_validate(raw) if raw is not None else None
