"""What a construction pipeline (M3Eval's question generation, SuperMemory-VQA's annotation)
reports while it runs: stages of units, each unit finished or reused from an earlier run, and
messages (retries, what a stage skipped). ``m3kit.cli.progress.StageProgress`` draws it; a
library caller that wants none passes nothing and gets ``SilentProgress``."""

from __future__ import annotations

from typing import Protocol

__all__ = ["ConstructionProgress", "SilentProgress"]


class ConstructionProgress(Protocol):
    def stage(self, name: str, total: int) -> None:
        """``total`` units of stage ``name`` are about to run."""

    def advance(self, name: str, *, reused: bool = False) -> None:
        """One unit of ``name`` finished (``reused``: taken from an earlier run)."""

    def message(self, text: str) -> None: ...


class SilentProgress:
    """Progress nobody watches."""

    def stage(self, name: str, total: int) -> None:
        pass

    def advance(self, name: str, *, reused: bool = False) -> None:
        pass

    def message(self, text: str) -> None:
        pass
