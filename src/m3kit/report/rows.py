"""One flat row per scored sample: what every m3kit table is computed from.

Rows come from inspect eval logs (``rows_from_log``) or from scoring external predictions, so a
table never depends on how its results were produced.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class SampleRow(BaseModel):
    """A scored answer with the question's facets and what the answer cost."""

    id: str
    model: str = ""
    memory: str = "none"
    paradigm: str = ""
    question_type: str = ""
    condition: str = ""
    evidence: str = ""  # "text" when on-screen text suffices, "visual" when only pixels help
    attribute: str | None = None  # N-back: scene / action
    n: int | None = None  # N-back lag
    k: int | None = None  # N-back sequence length
    correct: bool = False
    invalid: bool = False  # the answer could not be parsed
    failed: bool = False  # the model call failed after retries: counted as wrong
    role: str | None = None  # the role of the chosen option (correct, intrusion, ...)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    images_sent: int = 0
    raw_media_escalations: int = 0
    index_build_seconds: float = 0.0
    metadata: dict[str, Any] = Field(default_factory=dict)
