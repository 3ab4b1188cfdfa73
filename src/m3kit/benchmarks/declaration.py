"""What a benchmark is, declared once: ``Benchmark``.

Each ``m3kit.benchmarks.<name>/__init__.py`` exposes one ``BENCHMARK = Benchmark(...)``; the
registry (``inspect eval m3kit/<task>``), ``m3kit eval``'s task checks and summary table,
``m3kit score <verb>`` and ``m3kit report`` all read the declarations and keep no table of
their own. A declaration names its typed parts (``m3kit.benchmarks.protocol``: its scoring, its
report) and its registry components as ``Ref``s (``"module:attribute"``), loaded on first use,
so that reading the declarations imports neither inspect-ai nor any benchmark module.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from m3kit.errors import M3kitError
from m3kit.media.sampling import MAX_SAMPLING_FPS

if TYPE_CHECKING:
    from m3kit.benchmarks.protocol import BenchmarkReporting, BenchmarkScoring

__all__ = [
    "FPS_RANGE",
    "SHARED_RANGES",
    "ArgRange",
    "Benchmark",
    "FailurePolicy",
    "Ref",
    "ScoreCommand",
    "ScoreOption",
    "Treatment",
    "UnknownTaskError",
]

T = TypeVar("T")


class UnknownTaskError(M3kitError):
    """No m3kit benchmark declares a task of this name."""


@dataclass(frozen=True)
class Ref(Generic[T]):
    """A module attribute named ``"package.module:attribute"``, imported by ``load``."""

    target: str

    def load(self) -> T:
        module, _, name = self.target.partition(":")
        if not name:
            raise ValueError(f"a reference is 'module:attribute', got {self.target!r}")
        return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class ArgRange:
    """The values a numeric ``-T`` argument may take: ``check(value)`` true, ``wanted`` says
    what that is (``> 0``)."""

    check: Callable[[Any], bool]
    wanted: str


# Options several benchmarks' tasks share, and what their values must be (None always means
# "the default").
# a frame rate past the sampler's bound would fail every sample: refused before any work
FPS_RANGE = ArgRange(lambda v: 0 < v <= MAX_SAMPLING_FPS, f"> 0 and <= {MAX_SAMPLING_FPS:g}")
SHARED_RANGES: Mapping[str, ArgRange] = {
    "fps": FPS_RANGE,
    "frames": ArgRange(lambda v: v >= 0, ">= 0"),
    "max_side": ArgRange(lambda v: v > 0, "> 0"),
}


@dataclass(frozen=True)
class ScoreOption:
    """One option of ``m3kit score <verb>`` beyond ``--data``, ``--predictions`` and ``--json``,
    passed to the benchmark's ``score_predictions`` as the keyword ``name``.

    ``flags``: how it is spelled (``("--judge-model",)``, ``("-M",)``); ``type``: the value's
    type (``str``, ``Path``, ``int``, ``float``); ``default``: the value when it is not given.
    ``multiple``: repeatable, a list (``None`` when never given). ``flag``: a switch without a
    value, passing ``on`` when given. ``key_values``: repeatable ``key=value`` pairs, read by the
    command line's one rule into a mapping (``{}`` when never given).
    """

    name: str
    flags: tuple[str, ...]
    help: str
    type: type = str
    default: Any = None
    multiple: bool = False
    flag: bool = False
    on: Any = True
    key_values: bool = False


@dataclass(frozen=True)
class ScoreCommand:
    """``m3kit score <verb> --data D --predictions P [--json] [options]``, declared as data:
    ``m3kit.cli.score`` builds the command from it. ``help`` is the command's help line; the
    other texts are the common options' help; ``predictions_flags`` spells ``--predictions``
    (and its short form, if any)."""

    verb: str
    help: str
    data_help: str
    predictions_help: str
    json_help: str = "Print the result as JSON."
    predictions_flags: tuple[str, ...] = ("--predictions",)
    options: tuple[ScoreOption, ...] = ()


class Treatment(StrEnum):
    """What a run's numbers do with a sample of one kind: count it wrong, or leave it out (and
    count it beside the numbers)."""

    COUNTED_WRONG = "counted wrong"
    LEFT_OUT = "left out"


@dataclass(frozen=True)
class FailurePolicy:
    """What a benchmark's numbers do with the samples of a run that got no answer, read by the
    one loop over a run's samples (``m3kit.benchmarks.logged.logged_items``).

    ``errored``: a sample inspect recorded as errored, or without the benchmark's score record;
    ``unreadable_media``: a sample whose media could not be read
    (``m3kit.schema.LoggedSample.excluded``). The default is the documented rule (README,
    "Evaluating a model"; docs/metrics.md): a failed sample is counted wrong, never dropped; one
    whose media could not be read is left out of every number and counted (``excluded``).
    """

    errored: Treatment = Treatment.COUNTED_WRONG
    unreadable_media: Treatment = Treatment.LEFT_OUT


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its tasks, scoring, tables and score command.

    - ``tasks``: the registered task names it owns (``inspect eval m3kit/<task>``), all defined
      in ``task_module``; ``components``: further solvers and scorers registered with them;
      ``scorer``: the name of its inspect scorer;
    - ``scoring``: its typed scoring parts (``m3kit.benchmarks.protocol.BenchmarkScoring``: the
      per-item record its scorer writes, the score card from a predictions file or a run's
      samples, what ``m3kit score`` and ``m3kit eval`` print, the headline numbers and their
      unit, the data set's files), ``reporting``: what ``m3kit report`` renders for its runs
      (``BenchmarkReporting``: its sections, a run's system label);
    - ``failures``: what its numbers do with a sample that got no answer (``FailurePolicy``;
      the default is the documented rule);
    - ``score_file_keys``: top-level keys that mark a JSON file as this benchmark's score card
      (the report's external-score inputs; empty: it takes none);
    - ``score_command``: the ``m3kit score <verb>`` parameters (``score_predictions``'s
      options);
    - ``ranges``: what numeric ``-T`` arguments of its tasks must be;
    - ``ci_unit``: what the bootstrap resamples (``BenchmarkScoring.cluster_of``'s unit), in
      words; ``headline_format``: how a headline number is printed (a format spec);
      ``summary_intervals``: the headline numbers ``m3kit eval``'s summary prints with their
      intervals, by name, labelled as its columns, on the scale of its score card (one scale
      per benchmark: its paper's, in every table m3kit prints), in ``summary_format`` (the
      summary table's own digits); ``interval_format``: how ``m3kit report`` prints an interval
      (its tables of headline numbers and of the figures' numbers; ``None``:
      ``headline_format``): a benchmark whose quickstart section prints the same numbers on
      the same page sets that section's digits, so one interval reads the same wherever the
      page shows it (``interval_spec``);
    - ``stratum``: what ``m3kit eval --limit N --stratify`` samples evenly over, a field of
      ``m3kit.schema.Question`` or ``metadata.<key>`` of its metadata, several joined by
      ``+`` (default ``question_type``, which every benchmark's loader sets).
    """

    name: str
    title: str
    tasks: tuple[str, ...]
    task_module: str
    scorer: str
    scoring: Ref[BenchmarkScoring[Any, Any]]
    reporting: Ref[BenchmarkReporting]
    score_command: ScoreCommand
    components: tuple[Ref[Any], ...] = ()
    failures: FailurePolicy = FailurePolicy()
    score_file_keys: frozenset[str] = frozenset()
    ranges: Mapping[str, ArgRange] = field(default_factory=lambda: dict(SHARED_RANGES))
    ci_unit: str = "question"
    headline_format: str = ".2f"
    summary_intervals: Mapping[str, str] = field(default_factory=dict)
    summary_format: str = ".1f"
    interval_format: str | None = None
    stratum: str = "question_type"

    @property
    def interval_spec(self) -> str:
        """How ``m3kit report`` prints an interval: ``interval_format``, else
        ``headline_format``."""
        return self.interval_format or self.headline_format

    @property
    def score_verb(self) -> str:
        """The verb of ``m3kit score <verb>``."""
        return self.score_command.verb

    def headline_intervals(self, items: Sequence[Any], *, resamples: int | None = None,
                           level: float | None = None,
                           seed: int | None = None) -> dict[str, Any]:
        """Each headline number of ``items`` with its percentile cluster-bootstrap interval
        (``m3kit.metrics.bootstrap.Interval`` by name), resampling ``cluster_of``'s units;
        ``None`` arguments take the bootstrap's defaults. Raises ``ValueError`` when the
        benchmark declares no headline."""
        from m3kit.metrics import bootstrap

        scoring = self.scoring.load()
        if scoring.headline is None or scoring.cluster_of is None:
            raise ValueError(f"benchmark {self.name!r} declares no headline numbers")
        return bootstrap.cluster_bootstrap(
            bootstrap.group_units(items, scoring.cluster_of), scoring.headline,
            resamples=bootstrap.DEFAULT_RESAMPLES if resamples is None else resamples,
            level=bootstrap.DEFAULT_LEVEL if level is None else level,
            seed=bootstrap.DEFAULT_SEED if seed is None else seed,
        )

    def predictions_card(self, data: Any, predictions: Any,
                         options: Mapping[str, Any]) -> Any:
        """The reproducibility card (``m3kit.schema.card.ReproCard``) of a score of the
        external predictions file ``predictions`` against ``data``: versions, the data set's
        fingerprint, the scoring rules in force (``options``: ``score_predictions``'s, each
        function taking those it names), the predictions file's sha256; the model unknown."""
        from m3kit.harness.card import data_fingerprint, predictions_card
        from m3kit.schema.card import ReproCard

        scoring = self.scoring.load()

        def call(function: Callable[..., Any], *args: Any) -> Any:
            names = inspect.signature(function).parameters
            return function(*args, **{k: v for k, v in options.items() if k in names})

        files = call(scoring.data_files, data) if scoring.data_files is not None else []
        media = (call(scoring.data_media, data) if files and scoring.data_media is not None
                 else [])
        card = ReproCard(
            benchmark=self.name,
            data_fingerprint=data_fingerprint(files, media),
            scoring=call(scoring.scoring_rules) if scoring.scoring_rules is not None else {},
            judge_model=(str(options["judge_model"]) if options.get("judge_model") is not None
                         else None),
        )
        return predictions_card(card, predictions)

    def owns(self, task: str) -> bool:
        """Whether ``task`` (with or without the ``m3kit/`` prefix) is one of this benchmark's
        tasks."""
        return task.rsplit("/", 1)[-1] in self.tasks

    def task_functions(self) -> list[Callable[..., Any]]:
        """The registered ``@task`` functions, in ``tasks`` order (imports ``task_module``)."""
        module = importlib.import_module(self.task_module)
        return [getattr(module, name) for name in self.tasks]

    def task_function(self, task: str) -> Callable[..., Any]:
        """The ``@task`` function of ``task``."""
        return getattr(importlib.import_module(self.task_module), task.rsplit("/", 1)[-1])
