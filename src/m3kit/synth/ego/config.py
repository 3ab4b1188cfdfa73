"""``EgoSuiteConfig``: everything that decides a synthetic egocentric suite."""

from __future__ import annotations

import hashlib
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["EGO_SUITE_VERSION", "EgoSuiteConfig"]

# Bump when generation, rendering or the layout changes what a config produces: suites built
# before are rebuilt, not reused.
EGO_SUITE_VERSION: Final = 1  # Final: typed as the literal ``suite.json`` records


class EgoSuiteConfig(BaseModel):
    """Persons, their sessions (one per day), how long and how large each is rendered, and
    how many questions of each kind are kept per person.

    The default is the quickstart's: 10 persons (the unit of SuperMemory-VQA's intervals:
    fewer than 10 give no p-value) × 3 days of 48 s at 2 fps, 256×256, 8 questions each (one
    answerable per skill, two unanswerable); ``EgoSuiteConfig.large()`` is a longer one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    persons: int = Field(default=10, ge=1, le=99)
    sessions: int = Field(default=3, ge=2, le=30, description="sessions (days) per person")
    segment_seconds: float = Field(default=6.0, gt=0, description="length of one scene")
    segments: int = Field(default=8, ge=8, description="scenes per session")
    fps: float = Field(default=2.0, gt=0, le=30)
    size: int = Field(default=256, ge=128, description="frame width = height (pixels)")
    transcript_only: int = Field(
        default=1, ge=0, description="sessions released without video (transcript only)")
    answerable_per_skill: int = Field(default=1, ge=1, description="per person and skill")
    unanswerable: int = Field(default=2, ge=0, description="per person")

    @model_validator(mode="after")
    def _feasible(self) -> EgoSuiteConfig:
        if self.size % 2:
            raise ValueError(f"size must be even (H.264), got {self.size}")
        if self.transcript_only > self.persons:
            raise ValueError("at most one transcript-only session per person")
        if abs(self.segment_seconds * self.fps - round(self.segment_seconds * self.fps)) > 1e-6:
            raise ValueError("segment_seconds × fps must be a whole number of frames")
        return self

    @property
    def session_seconds(self) -> float:
        return self.segments * self.segment_seconds

    @classmethod
    def large(cls, seed: int = 0) -> EgoSuiteConfig:
        """10 persons × 7 days of 5-minute sessions at 4 fps, 384×384."""
        return cls(seed=seed, persons=10, sessions=7, segments=50, fps=4.0, size=384,
                   transcript_only=1, answerable_per_skill=6, unanswerable=10)

    def config_hash(self) -> str:
        """Names the suite a config builds (the code version is part of it)."""
        text = f"{EGO_SUITE_VERSION}:{self.model_dump_json()}"
        return hashlib.sha256(text.encode()).hexdigest()
