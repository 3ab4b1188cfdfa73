"""``SuiteConfig``: everything that decides a synthetic suite, with the quickstart preset."""

from __future__ import annotations

import hashlib
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from m3kit.synth.questions import Paradigm
from m3kit.synth.render import RENDER_VERSION
from m3kit.synth.script import SCRIPT_VERSION, Evidence

__all__ = ["ORDERS", "PARADIGMS", "SUITE_VERSION", "Condition", "SuiteConfig"]

# Bump when question generation or the suite layout changes: suites built before are rebuilt.
SUITE_VERSION: Final = 2
PARADIGMS: tuple[Paradigm, ...] = ("divided_attention", "interference", "interleaved", "nback")
Condition = Literal["retroactive", "proactive", "repeat_target", "repeat_interferer"]
# Concatenation order of each interference condition (the target is always Video 1).
ORDERS: dict[str, list[str]] = {
    "retroactive": ["video1", "video2"],
    "proactive": ["video2", "video1"],
    "repeat_target": ["video1", "video1", "video2"],
    "repeat_interferer": ["video1", "video2", "video2"],
}
_STORYLINE_PARADIGMS = {"divided_attention", "interleaved"}


class SuiteConfig(BaseModel):
    """Everything that decides a suite. Difficulty knobs: ``beat_seconds`` (clip length),
    ``swaps``, ``nback_n`` / ``nback_k``, ``similarity`` of the paired sources,
    ``interleave_segments``; the defaults follow M3Eval (10 swaps, 10 segments, all four
    interference orders)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    seed: int = 0
    paradigms: list[Paradigm] = Field(default_factory=lambda: list(PARADIGMS))
    evidence: list[Evidence] = Field(default_factory=lambda: list[Evidence](["text", "visual"]))
    # Sources
    pairs: int = Field(default=6, ge=1)
    beats: int = Field(default=10, ge=2, le=10)
    beat_seconds: float = Field(default=1.5, gt=0)
    fps: float = Field(default=10.0, gt=0)
    size: tuple[int, int] = (320, 240)
    actors: int = Field(default=4, ge=2, le=4)
    scene_runs: int = Field(default=3, ge=1)
    similarity: float = Field(default=0.8, ge=0.0, le=1.0)
    # Divided attention
    swaps: list[int] = Field(default_factory=lambda: [0, 10])
    storyline_targets: list[Literal["video1", "video2"]] = Field(
        default_factory=lambda: list[Literal["video1", "video2"]](["video1", "video2"]))
    source_memory_questions: int = Field(default=2, ge=0)
    # Interference
    interference_conditions: list[Condition] = Field(
        default_factory=lambda: list[Condition](
            ["retroactive", "proactive", "repeat_target", "repeat_interferer"]))
    interference_questions: int = Field(default=2, ge=0)
    # Interleaved
    interleave_segments: list[int] = Field(default_factory=lambda: [10])
    false_memory_questions: int = Field(default=2, ge=0)
    # N-back
    nback_n: list[int] = Field(default_factory=lambda: [1, 2, 3])
    nback_k: list[int] = Field(default_factory=lambda: [4, 6])
    nback_trials: int = Field(default=2, ge=1)
    nback_gap: float = Field(default=0.3, ge=0.0)

    @model_validator(mode="after")
    def _feasible(self) -> SuiteConfig:
        if self.size[0] % 2 or self.size[1] % 2:
            raise ValueError(f"size must be even (H.264), got {self.size}")
        if not self.evidence:
            raise ValueError("evidence must name at least one of text, visual")
        channel = self.beats // 2
        if _STORYLINE_PARADIGMS & set(self.paradigms) and channel < 4:
            raise ValueError(
                f"storyline questions need 4 beats per channel (beats >= 8), got beats={self.beats}"
            )
        frames = round(self.beats * self.beat_seconds * self.fps)
        if any(k < 0 or k + 1 > frames for k in self.swaps):
            raise ValueError(f"swaps must be in 0..{frames - 1}, got {self.swaps}")
        if any(n < 1 or n > frames for n in self.interleave_segments):
            raise ValueError(f"interleave_segments must be in 1..{frames}")
        if "nback" in self.paradigms and not any(
                n < k for n in self.nback_n for k in self.nback_k):
            raise ValueError("nback_n and nback_k need at least one pair with n < k")
        if any(n < 1 for n in self.nback_n):
            raise ValueError("nback_n values must be >= 1")
        return self

    @classmethod
    def small(cls, seed: int = 0) -> SuiteConfig:
        """The quickstart suite: 6 pairs of 12 s sources and 16 N-back trials, 22 units for
        the intervals of its headline (at least ``m3kit.metrics.bootstrap.MIN_UNITS``, the
        fewest at which a cluster-bootstrap interval is trusted); every paradigm and question
        kind in both evidence variants; gold letters balanced in whole cycles (12 items per
        kind and evidence variant); Yes/No balanced in each (evidence, N, K) cell of N-back;
        46 probes, 392 questions."""
        return cls(
            seed=seed, pairs=6, beats=8, swaps=[0, 4],
            interference_conditions=["retroactive", "proactive"], interference_questions=2,
            interleave_segments=[4], false_memory_questions=2, source_memory_questions=2,
            nback_n=[1, 2], nback_k=[3, 4], nback_trials=2,
        )

    def config_hash(self) -> str:
        """Names the suite a config builds; the code versions are part of it, so a suite built
        by older generation or rendering code is rebuilt, not reused."""
        text = f"{SUITE_VERSION}:{SCRIPT_VERSION}:{RENDER_VERSION}:{self.model_dump_json()}"
        return hashlib.sha256(text.encode()).hexdigest()
