"""The typed parts a benchmark declares: how it scores (``BenchmarkScoring``) and how ``m3kit
report`` shows its runs (``BenchmarkReporting``, given a ``ReportContext``).

Each benchmark builds one record of each, ``SCORING`` in its ``score.py`` and ``REPORTING`` in its
``report.py``; its declaration points at the two (``Benchmark.scoring``,
``Benchmark.reporting``), loaded on first use, so reading the declarations imports no benchmark
module. The type checker sees every part: the benchmark's functions against these signatures
where it builds the record, and each caller's use of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if TYPE_CHECKING:
    from m3kit.benchmarks.declaration import Benchmark
    from m3kit.benchmarks.intervals import HeadlineIntervals
    from m3kit.schema import PredictionsCard, ScoreItem
    from m3kit.schema.evallog import LoggedRun, LoggedSample
    from m3kit.schema.report import ReportSection, Table

__all__ = ["BenchmarkReporting", "BenchmarkScoring", "CardT", "ItemT", "ReportContext"]

ItemT = TypeVar("ItemT", bound="ScoreItem")
CardT = TypeVar("CardT", bound="PredictionsCard")

SummaryRows = tuple[list[str], list[list[str]]]


@dataclass(frozen=True)
class BenchmarkScoring(Generic[ItemT, CardT]):
    """How a benchmark scores: its per-item record and its score card.

    - ``item``: the per-item record its scorer writes (a ``m3kit.schema.ScoreItem``), what
      ``m3kit.report.logs`` reads a score's metadata back into;
    - ``score_predictions``: ``(data path, predictions path, **options)`` -> the score card (a
      ``m3kit.schema.PredictionsCard``: what was skipped, which predictions match no
      question), ``NothingToScoreError`` when nothing can be scored; ``scores_from_log``: a
      run's ``LoggedSample``s -> the same card; ``score_text``: ``(card, predictions path)`` ->
      what ``m3kit score <verb>`` prints without ``--json``, blocks of text and ``Table``s;
    - ``summary_rows``: ``LoggedSample``s -> the columns and rows ``m3kit eval`` prints;
    - ``headline``: per-item records -> the headline numbers, flat names, on the card's scale;
      ``cluster_of``: the independent unit an item belongs to (what the bootstrap resamples);
      ``item_correct``: whether an item was answered correctly (McNemar's test; ``None``
      where the benchmark has no binary correctness); ``items_from_log``: ``LoggedSample``s ->
      the per-item records as ``scores_from_log`` counts them (ids set);
      ``items_from_predictions``: ``(data path, predictions path, **options)`` -> the same
      from external predictions, as ``score_predictions`` counts them;
    - ``data_files``: ``(data path, **options)`` -> the question files, in load order, and
      ``data_media``: ``(data path, **options)`` -> the media files its samples read: the
      reproducibility card's fingerprint; ``scoring_rules``: ``(**options)`` -> the rule
      variants in force, by name. Each takes the ``score_predictions`` options it names.

    The parts a benchmark may lack are ``None``.
    """

    item: type[ItemT]
    score_predictions: Callable[..., CardT]
    scores_from_log: Callable[[Sequence[LoggedSample]], CardT]
    score_text: Callable[[CardT, Path], Sequence[Table | str]]
    summary_rows: Callable[[Sequence[LoggedSample]], SummaryRows]
    headline: Callable[[Sequence[ItemT]], dict[str, float | None]] | None = None
    cluster_of: Callable[[ItemT], str] | None = None
    item_correct: Callable[[ItemT], bool | None] | None = None
    items_from_log: Callable[[Sequence[LoggedSample]], list[ItemT]] | None = None
    items_from_predictions: Callable[..., list[ItemT]] | None = None
    data_files: Callable[..., list[Path]] | None = None
    data_media: Callable[..., list[Path]] | None = None
    scoring_rules: Callable[..., dict[str, str]] | None = None


@dataclass(frozen=True)
class ReportContext:
    """What ``m3kit.report.build`` hands a benchmark's report: the benchmark's declaration, its
    runs (one per system: a system's logs pooled), the folder its figures go to, score files by
    system (``m3kit score <verb> --json``), human reference scores, and each logged system's
    headline intervals (``m3kit.benchmarks.intervals.system_intervals``, computed once: the
    report's table of them, which ``build`` appends, and the figures' error bars share them)."""

    benchmark: Benchmark
    runs: Sequence[LoggedRun]
    out_dir: Path
    cards: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    humans: Mapping[str, Any] | None = None
    headline: Mapping[str, HeadlineIntervals] = field(default_factory=dict)


@dataclass(frozen=True)
class BenchmarkReporting:
    """How ``m3kit report`` shows a benchmark's runs: ``sections`` renders them (tables, figures
    written into ``ReportContext.out_dir``, notes); ``system_label`` names a run's system (runs of
    one label are pooled, and a label is a column of the report's interval table)."""

    sections: Callable[[ReportContext], list[ReportSection]]
    system_label: Callable[[LoggedRun], str]
