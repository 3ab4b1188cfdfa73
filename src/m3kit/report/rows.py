"""One row per answered question and the system that answered it: what report tables read.

Rows come from inspect eval logs (``rows_from_log``) or from scoring external predictions, so a
table never depends on how its results were produced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.metrics import ScoredAnswer
from m3kit.schema import Usage

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog


class SampleRow(BaseModel):
    """A scored answer, the system that gave it (model, memory) and what it cost."""

    model_config = ConfigDict(frozen=True)

    answer: ScoredAnswer
    model: str
    memory: str = "none"
    usage: Usage = Field(default_factory=Usage)

    @property
    def system(self) -> str:
        return self.model if self.memory in ("", "none") else f"{self.model} + {self.memory}"

    def label(self, key: str) -> Any:
        return self.answer.groups.get(key)


def rows_from_log(log: EvalLog) -> list[SampleRow]:
    """The rows of one eval log (read with its samples)."""
    from m3kit.harness.results import sample_results

    memory = str((log.eval.task_args or {}).get("memory") or "none")
    return [
        SampleRow(answer=result.answer, model=str(log.eval.model), memory=memory,
                  usage=result.usage)
        for result in sample_results(log)
    ]
