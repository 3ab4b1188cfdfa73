"""Paired comparison of two runs of one benchmark on the same questions: ``compare_runs``.

A run is one system's typed per-item score records (``RunItems``), read from eval logs by the
one log reader (``run_from_logs``: one log, or a folder of one system's logs pooled as the
report pools them) or from another harness's predictions by the benchmark's
``items_from_predictions`` (``run_from_predictions``). Both runs must be of one benchmark and
ask the same questions: items are matched by id; items of one run only are listed and left
out; when the runs share no item, or less than ``MIN_SHARED`` of either run's items, they
refuse to compare (``CompareError``): numbers on different question sets are not comparable.

Per headline number of the benchmark (``Benchmark.headline``): both values, the difference
``b - a``, its percentile interval from the paired cluster bootstrap and a two-sided p-value
(``m3kit.metrics.bootstrap.paired_cluster_bootstrap``: a resample draws the benchmark's
independent units, ``Benchmark.cluster_of``, and takes both runs' items of each drawn unit, so
the pairing is kept). Where the benchmark has a binary correctness per item
(``Benchmark.item_correct``), McNemar's exact test on the shared questions too (McNemar 1947):
it looks only at the questions one run got right and the other wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from m3kit.benchmarks import Benchmark, benchmark_named
from m3kit.errors import M3kitError
from m3kit.metrics.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PairedDifference,
    group_units,
    mcnemar_exact,
    paired_cluster_bootstrap,
)
from m3kit.schema import LoggedSample, ScoreItem

__all__ = [
    "MIN_SHARED",
    "CompareError",
    "Comparison",
    "McNemarTest",
    "RunItems",
    "compare_runs",
    "run_from_logs",
    "run_from_predictions",
    "significant",
]

# The share of each run's items the two runs must have in common. Below it the runs ask
# mostly different questions (another split, another task of the benchmark, a run cut short),
# and a difference between them says more about the questions than about the systems.
MIN_SHARED = 0.5


class CompareError(M3kitError):
    """Two runs that cannot be compared: different benchmarks, different question sets, or an
    input that is not one system's run."""


class RunItems(BaseModel):
    """One system's run as ``compare_runs`` takes it: its benchmark, a label (the report's
    system label, or the predictions file's stem), where it was read from, and its per-item
    score records by item id (a log sample's id; ``<id>#<epoch>`` for epochs after the
    first)."""

    model_config = ConfigDict(frozen=True)

    benchmark: str
    label: str
    source: str
    items: dict[str, SerializeAsAny[ScoreItem]]
    # Where the run's card differs from the other's is checked by ``card_differences``; a run
    # without a card (a log written before cards, external predictions) has none.
    card: Any | None = None


class McNemarTest(BaseModel):
    """McNemar's exact test on the shared questions whose correctness both runs define:
    ``b`` questions only run A got right, ``c`` only run B, ``n`` questions counted."""

    model_config = ConfigDict(frozen=True)

    n: int
    b: int
    c: int
    p_value: float


class Comparison(BaseModel):
    """Run B against run A on their shared questions.

    ``numbers``: per headline number, A's and B's values, ``diff = b - a``, its interval
    ``[lo, hi]`` at ``level`` and the two-sided p-value; ``unit``: what the bootstrap resampled
    and ``n_units`` how many; ``only_a``/``only_b``: ids of the items one run has and the other
    has not (left out); ``card_differences``: the fields, other than the model, in which the
    two runs' reproducibility cards differ (each a reason to doubt the comparison).
    """

    model_config = ConfigDict(frozen=True)

    benchmark: str
    a: str
    b: str
    source_a: str
    source_b: str
    n_shared: int
    only_a: list[str] = Field(default_factory=list)
    only_b: list[str] = Field(default_factory=list)
    unit: str
    n_units: int
    resamples: int
    level: float
    seed: int
    numbers: dict[str, PairedDifference]
    mcnemar: McNemarTest | None = None
    card_differences: list[str] = Field(default_factory=list)


def significant(number: PairedDifference) -> bool:
    """Whether the interval of the difference excludes 0."""
    return number.lo is not None and number.hi is not None and (number.lo > 0 or number.hi < 0)


# -- runs ------------------------------------------------------------------------------------


def _sample_key(sample: LoggedSample) -> str:
    return sample.id if sample.epoch == 1 else f"{sample.id}#{sample.epoch}"


def _one_benchmark(logs: Sequence[Any], path: Path) -> Benchmark:
    from m3kit.report.logs import benchmark_of, foreign_task

    if any(foreign_task(log) for log in logs):
        raise CompareError("holds a log of a task that is not m3kit's: no headline numbers to "
                           "compare", path=path)
    benchmarks = {benchmark_of(log).name: benchmark_of(log) for log in logs}
    if len(benchmarks) > 1:
        raise CompareError(f"holds logs of several benchmarks ({', '.join(sorted(benchmarks))})"
                           ": give one system's logs of one benchmark", path=path)
    return next(iter(benchmarks.values()))


def run_from_logs(path: str | Path) -> RunItems:
    """The run in an eval log, or in a folder of one system's logs of one benchmark (pooled
    as ``m3kit report`` pools them: each sample once, from the latest-started log). A folder
    holding several systems (``Benchmark.system_label``), several benchmarks or no log is a
    ``CompareError``."""
    from m3kit.report.build import pooled_runs, read_inputs

    where = Path(path)
    inputs = read_inputs([where])
    if not inputs.logs:
        raise CompareError("holds no eval log (score files carry no per-item records: compare "
                           "their predictions with --score)", path=where)
    benchmark = _one_benchmark(inputs.logs, where)
    runs = pooled_runs(benchmark, inputs.logs)
    label = benchmark.system_label.load()
    if len(runs) > 1:
        names = ", ".join(sorted({label(run) for run in runs}))
        raise CompareError(f"holds runs of {len(runs)} systems ({names}): give one system's "
                           "logs", path=where)
    (run,) = runs
    items = benchmark.items_from_log.load()(run.samples) if benchmark.items_from_log else None
    if items is None:
        keyed = {_sample_key(s): s.item for s in run.samples if s.item is not None}
    else:
        keyed = dict(items)
    return RunItems(benchmark=benchmark.name, label=label(run), source=str(where),
                    items=keyed, card=getattr(run, "card", None))


def run_from_predictions(benchmark: Benchmark, data: str | Path, predictions: str | Path,
                         **options: Any) -> RunItems:
    """The run of another harness's predictions on ``data``, scored item by item by the
    benchmark's ``items_from_predictions`` (``options``: its scoring options); labelled by the
    predictions file's stem."""
    if benchmark.items_from_predictions is None:
        raise CompareError(f"{benchmark.title} cannot score predictions item by item",
                           field="--score")
    items = benchmark.items_from_predictions.load()(Path(data), Path(predictions), **options)
    keyed = {str(item.id): item for item in items}
    return RunItems(benchmark=benchmark.name, label=Path(predictions).stem,
                    source=str(predictions), items=keyed)


# -- the comparison --------------------------------------------------------------------------


def _shared_ids(a: RunItems, b: RunItems) -> list[str]:
    if a.benchmark != b.benchmark:
        raise CompareError(f"run A is {a.benchmark}, run B is {b.benchmark}: only runs of one "
                           "benchmark compare")
    shared = [key for key in a.items if key in b.items]
    if not shared:
        raise CompareError(f"the runs share no question (A: {len(a.items)} items, B: "
                           f"{len(b.items)}): they ran different question sets")
    for run in (a, b):
        if len(shared) < MIN_SHARED * len(run.items):
            raise CompareError(
                f"the runs share {len(shared)} of {len(run.items)} questions of {run.label} "
                f"({run.source}), under {MIN_SHARED:.0%}: they ran different question sets")
    return shared


def _card_differences(a: RunItems, b: RunItems) -> list[str]:
    """Fields other than the model in which the two runs' reproducibility cards differ;
    none when either run has no card."""
    if a.card is None or b.card is None:
        return []
    from m3kit.schema.card import card_differences

    return list(card_differences(a.card, b.card))


def _mcnemar(benchmark: Benchmark, pairs: Sequence[tuple[ScoreItem, ScoreItem]]
             ) -> McNemarTest | None:
    if benchmark.item_correct is None:
        return None
    correct = benchmark.item_correct.load()
    n = only_a = only_b = 0
    for item_a, item_b in pairs:
        right_a, right_b = correct(item_a), correct(item_b)
        if right_a is None or right_b is None:  # excluded in either run: not a pair
            continue
        n += 1
        only_a += right_a and not right_b
        only_b += right_b and not right_a
    return McNemarTest(n=n, b=only_a, c=only_b, p_value=mcnemar_exact(only_a, only_b))


def compare_runs(a: RunItems, b: RunItems, *, resamples: int = DEFAULT_RESAMPLES,
                 level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED) -> Comparison:
    """Run B against run A on the questions both have (see the module docstring);
    ``CompareError`` for runs of different benchmarks or question sets."""
    benchmark = benchmark_named(a.benchmark) if a.benchmark == b.benchmark else None
    shared = _shared_ids(a, b)
    assert benchmark is not None  # _shared_ids refused runs of two benchmarks
    headline = benchmark.headline.load()
    cluster_of = benchmark.cluster_of.load()
    pairs = [(a.items[key], b.items[key]) for key in shared]
    units = group_units(pairs, lambda pair: cluster_of(pair[0]))
    numbers = paired_cluster_bootstrap(units, headline, resamples=resamples, level=level,
                                       seed=seed)
    return Comparison(
        benchmark=benchmark.name, a=a.label, b=b.label, source_a=a.source, source_b=b.source,
        n_shared=len(shared),
        only_a=[key for key in a.items if key not in b.items],
        only_b=[key for key in b.items if key not in a.items],
        unit=benchmark.ci_unit, n_units=len(units), resamples=resamples, level=level,
        seed=seed, numbers=numbers, mcnemar=_mcnemar(benchmark, pairs),
        card_differences=_card_differences(a, b),
    )


def comparison_rows(comparison: Comparison, digits: int = 2) -> list[list[str]]:
    """The comparison's numbers as table rows: name, A, B, B − A (``*`` where its interval
    excludes 0), the interval, p."""
    def number(x: float | None, signed: bool = False) -> str:
        if x is None:
            return "—"
        return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"

    rows = []
    for name, d in comparison.numbers.items():
        mark = "*" if significant(d) else ""
        interval = (f"[{number(d.lo, True)}, {number(d.hi, True)}]"
                    if d.lo is not None and d.hi is not None else "—")
        p = "—" if d.p_value is None else f"{d.p_value:.3f}"
        rows.append([name, number(d.a), number(d.b), number(d.diff, True) + mark, interval, p])
    return rows


def _unused(_: Mapping[str, Any]) -> None:  # pragma: no cover
    return None
