"""Paired comparison of two runs of one benchmark on the same questions: ``compare_runs``.

A run is one system's typed per-item score records (``RunItems``), read from eval logs by the
one log reader (``runs_from_logs``: one log, or a folder of logs pooled per system as the
report pools them), from another harness's predictions by the benchmark's
``items_from_predictions`` (``run_from_predictions``), or from a score file that
``m3kit score VERB --json --items`` wrote (``run_from_score_file``). Where the two sides hold
logs of several benchmarks (a quickstart's folder: M3Eval's and SuperMemory-VQA's), each
benchmark both sides hold is compared on its own and the others are named
(``compare_inputs``); where they hold several systems of one benchmark (the model direct and
through a memory), the systems of one label are compared pairwise (``pair_systems``). Two runs
compared must be of one benchmark and ask the same questions: items are matched by id; items
of one run only are listed and left out; when the runs share no item, or less than
``MIN_SHARED`` of either run's items, they refuse to compare (``CompareError``): numbers on
different question sets are not comparable.

Per headline number of the benchmark (its scoring's ``headline``): both values, the difference
``b - a``, its percentile interval from the paired cluster bootstrap and a two-sided p-value
(``m3kit.metrics.bootstrap.paired_cluster_bootstrap``: a resample draws the benchmark's
independent units, its ``cluster_of``, and takes both runs' items of each drawn unit, so
the pairing is kept). Where the benchmark has a binary correctness per item
(its ``item_correct``), McNemar's exact test on the shared questions too (McNemar 1947):
it looks only at the questions one run got right and the other wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from m3kit.benchmarks import BENCHMARKS, Benchmark, benchmark_named
from m3kit.errors import M3kitError
from m3kit.metrics.bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    MIN_UNITS,
    PairedDifference,
    group_units,
    mcnemar_exact,
    number_text,
    paired_cluster_bootstrap,
)
from m3kit.report.inputs import is_log_json, pooled_runs, read_inputs, read_json
from m3kit.schema import LoggedSample, ScoreItem
from m3kit.schema.card import ReproCard, card_differences, text_sha256
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import NA, ReportSection, Table

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

__all__ = [
    "MIN_SHARED",
    "MODEL_FIELDS",
    "CompareError",
    "Comparison",
    "Comparisons",
    "McNemarTest",
    "RunItems",
    "baseline_section",
    "by_benchmark",
    "compare_inputs",
    "compare_runs",
    "comparison_blocks",
    "comparison_table",
    "data_note",
    "noise_note",
    "pair_systems",
    "run_from_logs",
    "run_from_predictions",
    "run_from_score_file",
    "run_items",
    "runs_at",
    "runs_from_logs",
    "significant",
]

# The share of each run's items the two runs must have in common. Below it the runs ask
# mostly different questions (another split, another task of the benchmark, a run cut short),
# and a difference between them says more about the questions than about the systems.
MIN_SHARED = 0.5

# The card fields that belong to the model compared, and the predictions file it wrote: two
# runs differing in these alone differ by the model, which is what a comparison asks about.
MODEL_FIELDS = ("model", "model_args", "model_base_url", "predictions_sha256")


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
    # How the run was made; None for a log written before cards were recorded.
    card: ReproCard | None = None
    # A run pooled from several tasks' logs (a quickstart's four M3Eval paradigms): each task's
    # own card, by task. ``card`` is then only the latest-started log's, whichever task that
    # was, so the two runs are compared task by task.
    task_cards: dict[str, ReproCard] = Field(default_factory=dict)

    def data_fingerprint(self) -> str | None:
        """The data the run read: its card's fingerprint, or for a run of several tasks one
        sha256 over each task's name and fingerprint (``None`` where one is not recorded)."""
        if not self.task_cards:
            return self.card.data_fingerprint if self.card is not None else None
        prints = {task: card.data_fingerprint for task, card in self.task_cards.items()}
        if None in prints.values():
            return None
        return text_sha256("\n".join(f"{task} {prints[task]}" for task in sorted(prints)))


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
    two runs' reproducibility cards differ (each a reason to doubt the comparison);
    ``data_a``/``data_b``: each run's data fingerprint (``None``: not recorded), which differ
    when the runs read other question files, videos, transcripts or images.
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
    data_a: str | None = None
    data_b: str | None = None

    @property
    def other_data(self) -> bool:
        """Whether the two runs were made on data known to differ (their data fingerprints
        are both recorded and differ)."""
        return None not in (self.data_a, self.data_b) and self.data_a != self.data_b


class Comparisons(BaseModel):
    """What ``m3kit compare`` compared: per benchmark both sides hold (in name order), one
    ``Comparison`` per pair of systems (one pair for two runs of one system each; one per
    shared system label otherwise); by benchmark, the labels of the systems only side A or
    only side B holds (left out); the benchmarks only side A or only side B holds (left out);
    and, where several benchmarks were compared, those that could not be, with the reason
    (``not_compared``: another question set, no system of the ``--system`` label...)."""

    model_config = ConfigDict(frozen=True)

    comparisons: list[Comparison]
    systems_only_a: dict[str, list[str]] = Field(default_factory=dict)
    systems_only_b: dict[str, list[str]] = Field(default_factory=dict)
    benchmarks_only_a: list[str] = Field(default_factory=list)
    benchmarks_only_b: list[str] = Field(default_factory=list)
    not_compared: dict[str, str] = Field(default_factory=dict)


class _OfBenchmark(Protocol):
    benchmark: str


B = TypeVar("B", bound=_OfBenchmark)


def by_benchmark(items: Sequence[B]) -> dict[str, list[B]]:
    """``items`` (comparisons, runs) keyed by their benchmark's name, each benchmark's in
    their order: ``m3kit compare --json``, and the sides a comparison pairs."""
    keyed: dict[str, list[B]] = {}
    for item in items:
        keyed.setdefault(item.benchmark, []).append(item)
    return keyed


def significant(number: PairedDifference) -> bool:
    """Whether the difference is marked ``*``: its interval excludes 0 and it rests on at
    least ``MIN_UNITS`` units (``PairedDifference.significant``)."""
    return number.significant


# -- runs ------------------------------------------------------------------------------------


def _by_benchmark(logs: Sequence[EvalLog]) -> list[tuple[Benchmark, list[EvalLog]]]:
    """The logs grouped by their benchmark, in benchmark name order (``read_inputs`` has
    already set aside the logs of tasks that are not m3kit's)."""
    from m3kit.report.logs import benchmark_of

    groups: dict[str, tuple[Benchmark, list[EvalLog]]] = {}
    for log in logs:
        benchmark = benchmark_of(log)
        groups.setdefault(benchmark.name, (benchmark, []))[1].append(log)
    return [groups[name] for name in sorted(groups)]


def _keyed(items: Sequence[ScoreItem], source: Path, suffix: str = "") -> dict[str, ScoreItem]:
    keyed: dict[str, ScoreItem] = {}
    for item in items:
        key = f"{item.id}{suffix}"
        if item.id is None or key in keyed:
            what = "an item without an id" if item.id is None else f"question {key!r} twice"
            raise CompareError(f"holds {what}: items are matched by id", path=source)
        keyed[key] = item
    return keyed


def _log_items(benchmark: Benchmark, samples: Sequence[LoggedSample],
               source: Path) -> dict[str, ScoreItem]:
    """The run's items by id, as the benchmark counts them (its scoring's
    ``items_from_log``); an epoch after the first is its own item, ``<id>#<epoch>``."""
    items_from_log = benchmark.scoring.load().items_from_log
    if items_from_log is None:
        raise CompareError(f"{benchmark.title} declares no per-item records to compare",
                           path=source)
    epochs: dict[int, list[LoggedSample]] = {}
    for sample in samples:
        epochs.setdefault(sample.epoch, []).append(sample)
    keyed: dict[str, ScoreItem] = {}
    for epoch, members in sorted(epochs.items()):
        keyed |= _keyed(items_from_log(members), source, "" if epoch == 1 else f"#{epoch}")
    return keyed


def runs_from_logs(path: str | Path) -> list[RunItems]:
    """The runs in an eval log, or in a folder of logs: one per benchmark and system
    (``BenchmarkReporting.system_label``), in benchmark name order, each system's logs pooled as
    ``m3kit report`` pools them (each sample once, from the latest-started log). A folder
    holding no log of an m3kit benchmark is a ``CompareError``; in one that does, a log of
    another task is skipped by name (``m3kit.report.inputs.read_inputs``)."""
    where = Path(path)
    inputs = read_inputs([where])
    if not inputs.logs:
        raise CompareError("holds no eval log (a score file is compared by its own name, "
                           "once written by 'm3kit score VERB --json --items')", path=where)
    return [run_items(benchmark, run, where)
            for benchmark, logs in _by_benchmark(inputs.logs)
            for run in pooled_runs(benchmark, logs)]


def run_from_logs(path: str | Path) -> RunItems:
    """The run in an eval log, or in a folder of one system's logs of one benchmark
    (``runs_from_logs``); a folder holding several benchmarks or several systems is a
    ``CompareError``."""
    runs = runs_from_logs(path)
    benchmarks = sorted({run.benchmark for run in runs})
    if len(benchmarks) > 1:
        raise CompareError(f"holds logs of several benchmarks ({', '.join(benchmarks)}): give "
                           "one system's logs of one benchmark", path=path)
    if len(runs) > 1:
        names = ", ".join(sorted(run.label for run in runs))
        raise CompareError(f"holds runs of {len(runs)} systems ({names}): give one system's "
                           "logs", path=path)
    return runs[0]


def run_items(benchmark: Benchmark, run: LoggedRun, source: str | Path) -> RunItems:
    """A run read from logs as ``compare_runs`` takes it: labelled as ``benchmark`` labels it
    (``BenchmarkReporting.system_label``), its items as the benchmark counts them, with its
    card."""
    label = benchmark.reporting.load().system_label
    return RunItems(benchmark=benchmark.name, label=label(run), source=str(source),
                    items=_log_items(benchmark, run.samples, Path(source)), card=run.card,
                    task_cards={part.task: part.card for part in run.parts
                                if part.card is not None})


def run_from_predictions(benchmark: Benchmark, data: str | Path, predictions: str | Path,
                         **options: Any) -> RunItems:
    """The run of another harness's predictions on ``data``, scored item by item by the
    benchmark's ``items_from_predictions`` (``options``: its scoring options); labelled by the
    predictions file's stem."""
    read = benchmark.scoring.load().items_from_predictions
    if read is None:
        raise CompareError(f"{benchmark.title} cannot score predictions item by item",
                           field="--score")
    file = Path(predictions)
    items = read(Path(data), file, **options)
    return RunItems(benchmark=benchmark.name, label=file.stem, source=str(file),
                    items=_keyed(items, file),
                    card=benchmark.predictions_card(data, file, options))


def _is_score_file(data: Any) -> bool:
    """Whether ``data`` is what ``m3kit score VERB --json`` prints: its per-item records, its
    reproducibility card, or a score card's keys (``Benchmark.score_file_keys``)."""
    return isinstance(data, dict) and (
        "items" in data or isinstance(data.get("card"), dict)
        or any(b.score_file_keys & set(data) for b in BENCHMARKS))


def run_from_score_file(path: str | Path, data: Any = None) -> RunItems:
    """The run in a score file that ``m3kit score VERB --json --items`` wrote (``data``: its
    JSON, when already read): its ``benchmark``'s per-item records (``BenchmarkScoring.item``),
    labelled by the file's stem, with the score's card. A score file without ``items`` is a
    ``CompareError`` saying how to write one that has them."""
    from pydantic import ValidationError

    file = Path(path)
    data = read_json(file, CompareError) if data is None else data
    if not isinstance(data, dict) or "items" not in data:
        raise CompareError("a score file without per-item records: re-run 'm3kit score VERB "
                           "... --json --items' to write one that compares", path=file,
                           field="items")
    name = data.get("benchmark")
    benchmark = benchmark_named(name) if isinstance(name, str) else None
    if benchmark is None:
        known = ", ".join(b.name for b in BENCHMARKS)
        raise CompareError(f"names no benchmark m3kit declares ({name!r}; one of {known})",
                           path=file, field="benchmark")
    if not isinstance(data["items"], list):
        raise CompareError("not a list of per-item records", path=file, field="items")
    record: type[ScoreItem] = benchmark.scoring.load().item
    items: list[ScoreItem] = []
    for index, raw in enumerate(data["items"]):
        try:
            items.append(record.model_validate(raw))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"]) or "items"
            raise CompareError(error["msg"], path=file, record=f"items[{index}]",
                               field=where) from exc
    card = None
    if data.get("card") is not None:
        try:
            card = ReproCard.model_validate(data["card"])
        except ValidationError as exc:
            raise CompareError(f"not a reproducibility card: {exc.errors()[0]['msg']}",
                               path=file, field="card") from exc
    return RunItems(benchmark=benchmark.name, label=file.stem, source=str(file),
                    items=_keyed(items, file), card=card)


def runs_at(path: str | Path) -> list[RunItems]:
    """The runs ``path`` holds, one per system: a score file with per-item records
    (``run_from_score_file``), or an eval log or folder of logs (``runs_from_logs``)."""
    where = Path(path)
    if where.is_file() and where.suffix == ".json":
        data = read_json(where, CompareError)
        if not is_log_json(data):
            if not _is_score_file(data):
                raise CompareError("neither an inspect eval log nor a score file of 'm3kit "
                                   "score VERB --json --items'", path=where)
            return [run_from_score_file(where, data)]
    return runs_from_logs(where)


def _pick(runs: Sequence[RunItems], system: str, side: str) -> RunItems:
    if len(runs) == 1:
        return runs[0]
    for run in runs:
        if run.label == system:
            return run
    names = ", ".join(sorted(run.label for run in runs))
    raise CompareError(f"run {side} holds no system {system!r} (its systems: {names})",
                       path=runs[0].source, field="--system")


def pair_systems(a: Sequence[RunItems], b: Sequence[RunItems], system: str | None = None
                 ) -> tuple[list[tuple[RunItems, RunItems]], list[str], list[str]]:
    """The pairs of runs to compare, then the labels of the systems only ``a``, only ``b``
    holds (left out). One system on each side: that pair, whatever the labels. ``system``:
    on each side holding several, the run of that label. Otherwise each label both sides hold
    is a pair, in label order; none shared is a ``CompareError``."""
    if system is not None:
        return [(_pick(a, system, "A"), _pick(b, system, "B"))], [], []
    if len(a) == 1 and len(b) == 1:
        return [(a[0], b[0])], [], []
    by_label = {run.label: run for run in b}
    pairs = [(run, by_label[run.label]) for run in sorted(a, key=lambda r: r.label)
             if run.label in by_label]
    if not pairs:
        raise CompareError(
            f"the runs share no system (A: {', '.join(sorted(r.label for r in a))}; B: "
            f"{', '.join(sorted(r.label for r in b))}): give --system LABEL or one system's "
            "logs")
    shared = {run.label for run, _ in pairs}
    return (pairs, sorted(r.label for r in a if r.label not in shared),
            sorted(r.label for r in b if r.label not in shared))


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
    """The fields other than the model's in which the two runs' reproducibility cards
    differ; none when either run has no card. Runs of several tasks are compared task by task
    (the tasks both ran), the fields that differ in any of them listed once; a task one run
    has and the other has not is ``task``."""
    if a.task_cards and b.task_cards:
        shared = [task for task in a.task_cards if task in b.task_cards]
        fields = {name for task in shared for name in card_differences(
            a.task_cards[task], b.task_cards[task], ignore=MODEL_FIELDS)}
        if set(a.task_cards) != set(b.task_cards):
            fields.add("task")
        return sorted(fields)
    if a.card is None or b.card is None:
        return []
    return card_differences(a.card, b.card, ignore=MODEL_FIELDS)


def _mcnemar(benchmark: Benchmark, pairs: Sequence[tuple[ScoreItem, ScoreItem]]
             ) -> McNemarTest | None:
    correct = benchmark.scoring.load().item_correct
    if correct is None:
        return None
    n = only_a = only_b = 0
    for item_a, item_b in pairs:
        right_a, right_b = correct(item_a), correct(item_b)
        if right_a is None or right_b is None:  # excluded in either run: not a pair
            continue
        n += 1
        only_a += right_a and not right_b
        only_b += right_b and not right_a
    return McNemarTest(n=n, b=only_a, c=only_b, p_value=mcnemar_exact(only_a, only_b))


def _check_bootstrap(resamples: int, level: float) -> None:
    if resamples < 1:
        raise CompareError(f"resamples must be >= 1, got {resamples}", field="--resamples")
    if not 0 < level < 1:
        raise CompareError(f"the level must be in (0, 1), got {level}", field="--level")


def compare_runs(a: RunItems, b: RunItems, *, resamples: int = DEFAULT_RESAMPLES,
                 level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED) -> Comparison:
    """Run B against run A on the questions both have (see the module docstring);
    ``CompareError`` for runs of different benchmarks or question sets."""
    _check_bootstrap(resamples, level)
    shared = _shared_ids(a, b)
    benchmark = benchmark_named(a.benchmark)
    if benchmark is None:
        raise CompareError(f"no benchmark is named {a.benchmark!r}")
    scoring = benchmark.scoring.load()
    headline, cluster_of = scoring.headline, scoring.cluster_of
    if headline is None or cluster_of is None:
        raise CompareError(f"{benchmark.title} declares no headline numbers to compare")
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
        data_a=a.data_fingerprint(), data_b=b.data_fingerprint(),
    )


def _score_options(benchmark: Benchmark, given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` (``name: value``) as the keywords of the benchmark's
    ``items_from_predictions``: each a declared ``ScoreOption`` of its score verb, its value of
    the option's type (a list for a repeatable option)."""
    declared = {o.name: o for o in benchmark.score_command.options}
    options: dict[str, Any] = {}
    for name, value in given.items():
        option = declared.get(name)
        if option is None:
            known = ", ".join(declared) or "none"
            raise CompareError(f"m3kit score {benchmark.score_verb} has no option {name!r} "
                               f"(its options: {known})", field="--score-option")
        if option.multiple:
            values = value if isinstance(value, list) else [value]
            options[name] = [option.type(v) for v in values]
        elif value is None or option.flag or option.key_values:
            options[name] = value
        else:
            options[name] = option.type(value)
    return options


def compare_inputs(runs: Sequence[str | Path], *, score: str | None = None,
                   data: str | Path | None = None, predictions: Sequence[str | Path] = (),
                   score_options: Mapping[str, Any] | None = None, system: str | None = None,
                   resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                   seed: int = DEFAULT_SEED) -> Comparisons:
    """``m3kit compare``'s two forms: ``runs``, A then B, each an eval log, a folder of logs
    or a score file with per-item records (``runs_at``), each benchmark both hold compared on
    its own, its systems paired by ``pair_systems`` (``system``: the one label to compare; see
    ``Comparisons``); or, with ``score`` (a ``m3kit score`` verb), two ``predictions`` files
    on one ``data``, scored with ``score_options`` (the verb's options by keyword name:
    M3Exam's ``fj_rule``, ``judge_model``...). Anything else is a ``CompareError`` saying what
    to give."""
    _check_bootstrap(resamples, level)
    usage = ("give two runs: 'm3kit compare LOG_A LOG_B' (eval logs, folders of logs, or "
             "score files of 'm3kit score VERB --json --items'), or 'm3kit compare --score "
             "VERB --data DIR --predictions A --predictions B'")
    if score is None:
        if len(runs) != 2 or data is not None or predictions or score_options:
            raise CompareError(usage)
        side_a, side_b = (runs_at(path) for path in runs)
        return _compare_sides(side_a, side_b, system, resamples=resamples, level=level,
                              seed=seed)
    if runs or data is None or len(predictions) != 2 or system is not None:
        raise CompareError(usage)
    benchmark = next((b for b in BENCHMARKS if b.score_verb == score), None)
    if benchmark is None:
        verbs = ", ".join(b.score_verb for b in BENCHMARKS)
        raise CompareError(f"unknown benchmark {score!r} (one of {verbs})", field="--score")
    options = _score_options(benchmark, score_options or {})
    run_a, run_b = (run_from_predictions(benchmark, data, file, **options)
                    for file in predictions)
    return Comparisons(comparisons=[compare_runs(run_a, run_b, resamples=resamples,
                                                 level=level, seed=seed)])


def _compare_sides(side_a: Sequence[RunItems], side_b: Sequence[RunItems], system: str | None,
                   *, resamples: int, level: float, seed: int) -> Comparisons:
    """Each benchmark both sides hold, compared on its own (``pair_systems``, then
    ``compare_runs``). With one such benchmark, what cannot be compared is a ``CompareError``;
    with several, a benchmark that cannot be is left out with its reason, and only when none
    can is the first reason the error. No benchmark in common is a ``CompareError``."""
    runs_a = by_benchmark(side_a)
    runs_b = by_benchmark(side_b)
    shared = sorted(set(runs_a) & set(runs_b))
    if not shared:
        raise CompareError(f"the runs share no benchmark (A: {', '.join(sorted(runs_a))}; B: "
                           f"{', '.join(sorted(runs_b))}): only runs of one benchmark compare")
    comparisons: list[Comparison] = []
    only_a: dict[str, list[str]] = {}
    only_b: dict[str, list[str]] = {}
    not_compared: dict[str, str] = {}
    errors: list[CompareError] = []
    for name in shared:
        try:
            pairs, labels_a, labels_b = pair_systems(runs_a[name], runs_b[name], system)
            found = [compare_runs(a, b, resamples=resamples, level=level, seed=seed)
                     for a, b in pairs]
        except CompareError as exc:
            if len(shared) == 1:
                raise
            errors.append(exc)
            not_compared[name] = str(exc)
            continue
        comparisons += found
        if labels_a:
            only_a[name] = labels_a
        if labels_b:
            only_b[name] = labels_b
    if not comparisons:
        raise errors[0]
    return Comparisons(comparisons=comparisons, systems_only_a=only_a, systems_only_b=only_b,
                       benchmarks_only_a=sorted(set(runs_a) - set(runs_b)),
                       benchmarks_only_b=sorted(set(runs_b) - set(runs_a)),
                       not_compared=not_compared)


def _number(value: float | None, spec: str, signed: bool = False) -> str:
    return number_text(value, spec, signed=signed, missing=NA)


def _p_text(p_value: float | None, resamples: int) -> str:
    if p_value is None:
        return NA
    # no resample crossed 0: p is below the bootstrap's resolution, not 0
    return f"<{1 / resamples:.2g}" if p_value == 0 else f"{p_value:.3f}"


def comparison_table(comparison: Comparison, title: str | None = None, *, a: str = "A",
                     b: str = "B", diff: str = "B − A") -> Table:
    """The comparison's numbers as a table: the number, A, B, the difference (``*`` where its
    interval excludes 0 on at least ``MIN_UNITS`` units), the interval, p and the units the
    difference rests on, in the benchmark's number format; ``a``, ``b``, ``diff`` name the
    columns. Numbers neither run defines (no question of their kind) are left out."""
    found = benchmark_named(comparison.benchmark)
    spec = found.headline_format if found is not None else ".2f"
    level = f"{comparison.level:.0%}"
    rows = []
    for name, d in comparison.numbers.items():
        if d.a is None and d.b is None:  # neither run has questions of this kind
            continue
        mark = "*" if significant(d) else ""
        rows.append([name, _number(d.a, spec), _number(d.b, spec),
                     _number(d.diff, spec, True) + mark, d.interval_text(spec, missing=NA),
                     _p_text(d.p_value, comparison.resamples), str(d.n_units)])
    return Table(title=title or f"B − A, {level} paired cluster-bootstrap interval",
                 columns=["number", a, b, diff, f"{level} interval", "p", "units"], rows=rows)


def noise_note(level: float) -> str:
    """The line under every comparison table: what ``*`` means, and why a difference on few
    units has neither p nor ``*``."""
    return (f"* the {level:.0%} interval of the difference excludes 0. Differences without * "
            "are inside the noise: their interval includes 0. A difference resting on fewer "
            f"than {MIN_UNITS} units (the units column) gets no p and no *: the percentile "
            "bootstrap undercovers with few units; on fewer than 2 it has no interval.")


def data_note(comparison: Comparison) -> str:
    """The line saying two runs read different data, with their data fingerprints."""
    return (f"The runs were made on different data (data fingerprint A "
            f"{(comparison.data_a or '')[:12]}, B {(comparison.data_b or '')[:12]}): their "
            "question files or media (videos, transcripts, images) differ, so the difference "
            "is not the systems' alone.")


def comparison_blocks(comparison: Comparison) -> list[str | Table]:
    """What ``m3kit compare`` prints: who is compared on what, the table, McNemar's test and
    the note on the noise."""
    benchmark = benchmark_named(comparison.benchmark)
    title = benchmark.title if benchmark is not None else comparison.benchmark
    who = (f"{title}: A = {comparison.a} ({comparison.source_a}), "
           f"B = {comparison.b} ({comparison.source_b})")
    what = (f"{comparison.n_shared} shared questions; resampled unit: {comparison.unit}, "
            f"{comparison.n_units} of them; {comparison.resamples} resamples, seed "
            f"{comparison.seed}")
    blocks: list[str | Table] = [who, what]
    if comparison.other_data:
        blocks.append(data_note(comparison))
    blocks.append(comparison_table(comparison))
    if comparison.mcnemar is not None:
        m = comparison.mcnemar
        blocks.append(f"McNemar's exact test on {m.n} questions: {m.b} right in A only, "
                      f"{m.c} right in B only, p = {m.p_value:.4g}")
    blocks.append(noise_note(comparison.level))
    return blocks


def baseline_section(benchmark: Benchmark, baseline: RunItems, runs: Sequence[LoggedRun], *,
                     resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
                     seed: int = DEFAULT_SEED) -> ReportSection:
    """``m3kit report --baseline``'s section for ``benchmark``: each run (but the baseline
    itself, where it is among the report's runs) against the baseline, one table per run with
    a ``Δ vs baseline`` column, ``*`` where its interval excludes 0. A run on another question
    set gets a note saying why it is not compared, not a table."""
    tables: list[Table] = []
    notes: list[str] = []
    for run in runs:
        items = run_items(benchmark, run, run.location)
        if (items.label, items.card, items.items) == (baseline.label, baseline.card,
                                                      baseline.items):
            continue  # the baseline itself, among the report's inputs
        try:
            comparison = compare_runs(baseline, items, resamples=resamples, level=level,
                                      seed=seed)
        except CompareError as exc:
            notes.append(f"{items.label}: not compared: {exc}")
            continue
        tables.append(comparison_table(
            comparison, f"{items.label} vs baseline {baseline.label} "
            f"({comparison.n_shared} shared questions)",
            a="baseline", b=items.label, diff="Δ vs baseline"))
        if comparison.card_differences:
            notes.append(f"{items.label}: its card differs from the baseline's in "
                         f"{', '.join(comparison.card_differences)}")
    return ReportSection(
        benchmark=benchmark.name, title=f"{benchmark.title}: comparison with baseline "
        f"{baseline.label}", tables=tables,
        notes=[f"Paired cluster bootstrap over the {benchmark.ci_unit}, {resamples} "
               f"resamples, seed {seed}. " + noise_note(level), *notes])
