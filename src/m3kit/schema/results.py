"""A run's results file: what ``m3kit eval`` printed, as numbers a script reads.

``m3kit eval`` writes one beside each log it prints a table for (``results-<log stem>.json``:
``results_path``), built from the log by ``m3kit.report.results`` through
the code that builds the printed summary: the benchmark's headline numbers with their
intervals (every one, unrounded; ``printed`` names those the summary prints and their labels),
its score card as ``m3kit score <verb> --json`` prints it, how many samples there were and
which failed (counted by kind, each reason's first line), how many records the loader skipped,
and the run's reproducibility card, which holds no credential. ``version`` changes when a field
changes meaning or goes away.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.schema.card import ReproCard
from m3kit.schema.failures import FailureCount

__all__ = ["RESULTS_PREFIX", "RESULTS_VERSION", "FailedSample", "HeadlineNumber", "RunResults",
           "is_results_file", "results_path"]

RESULTS_VERSION: Final = 1
# ``results-<log stem>.json``: a name that does not start with the log's timestamp, so inspect
# (``inspect view``, ``list_eval_logs``) never takes the file for a log; ``m3kit report`` passes
# it by this prefix
RESULTS_PREFIX = "results-"


class HeadlineNumber(BaseModel):
    """One headline number: its value, its percentile interval (``lo``/``hi``; None on fewer
    than 2 units) and ``n_units``, the units it rests on (``m3kit.metrics.bootstrap.Interval``'s
    fields, which this layer cannot import)."""

    model_config = ConfigDict(frozen=True)

    value: float | None
    lo: float | None
    hi: float | None
    n_units: int


class FailedSample(BaseModel):
    """A sample that got no answer (counted wrong): its id and its reason's first line."""

    model_config = ConfigDict(frozen=True)

    id: str
    reason: str


class RunResults(BaseModel):
    """The results of one run (see the module's docstring)."""

    model_config = ConfigDict(frozen=True)

    version: Literal[1] = RESULTS_VERSION
    task: str
    model: str
    status: str
    log: str
    benchmark: str | None = None
    n: int
    headline: dict[str, HeadlineNumber] = Field(default_factory=dict)
    printed: dict[str, str] = Field(default_factory=dict)
    ci_unit: str | None = None
    ci_level: float | None = None
    ci_resamples: int | None = None
    ci_seed: int | None = None
    score: dict[str, Any] | None = None
    failures: FailureCount
    failed_samples: list[FailedSample] = Field(default_factory=list)
    skipped_records: int = 0
    card: ReproCard | None = None


def results_path(log: str | Path) -> Path:
    """Where the results of the run logged at ``log`` go: beside it,
    ``results-<log stem>.json``."""
    path = Path(log)
    return path.with_name(f"{RESULTS_PREFIX}{path.stem}.json")


def is_results_file(name: str | Path) -> bool:
    """Whether ``name`` is a results file's name (not an eval log)."""
    base = Path(name).name
    return base.startswith(RESULTS_PREFIX) and base.endswith(".json")
