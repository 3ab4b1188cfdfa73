"""SuperMemory-VQA's part of ``m3kit quickstart``: the synthetic egocentric suite
(``m3kit.synth.ego``, cached) answered directly (the question session's frames and transcript
up to the question), blind (question and options only: the seed's Table 3) and through each
memory the quickstart runs (``rag``: the person's days up to the question), with Table 2's
numbers, each with its n and 95 % interval over persons, and readings derived from them.

The suite plants facts recorded only *after* some questions' time; the answer they support is a
wrong option. The section counts how often each way picked it: a cut that holds shows 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from m3kit.benchmarks.intervals import item_intervals
from m3kit.benchmarks.supermemory import BENCHMARK as DECLARED
from m3kit.benchmarks.supermemory.item import SuperMemoryItem
from m3kit.benchmarks.supermemory.score import cluster_of, headline, items_from_log
from m3kit.metrics.bootstrap import (
    MIN_UNITS,
    Interval,
    group_units,
    number_text,
    paired_cluster_bootstrap,
)
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.report import ReportSection, Table

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog
    from inspect_ai.model import Model

    from m3kit.synth.ego import EgoSuite, EgoSuiteConfig

__all__ = ["quickstart_section", "section_from_runs"]

_NUMBERS = (("ans_f1", "Ans-F1"), ("qa_acc", "Acc"), ("qa_mrr", "MRR"))
_CHANCE_ACC = 25.0  # four options, one gold

Progress = Callable[[str, int, int], None]
ReadRun = Callable[["EvalLog"], LoggedRun]


def quickstart_section(out_dir: Path, *, model: str | Model, limit: int | None, progress: Progress,
                       read_run: ReadRun, memories: Sequence[str] = ("none", "rag"),
                       config: EgoSuiteConfig | None = None) -> tuple[ReportSection, list[str]]:
    """Build (or reuse) the synthetic suite of ``config`` (default: the quickstart's, cached
    under the m3kit cache), evaluate ``model`` directly (when ``memories`` holds ``none``),
    blind, and through each other memory (logs under ``out_dir/logs``), and return the section
    and the eval-log paths. ``read_run`` is the log reader (``m3kit.report.logs.read_run``),
    passed in because a benchmark does not import the report layer."""
    from m3kit.benchmarks import run_benchmark_task
    from m3kit.synth.ego import build_ego_suite

    progress("supermemory: suite", 0, 1)
    suite = build_ego_suite(config=config)
    ways = _ways(memories)
    runs: dict[str, LoggedRun] = {}
    logs: list[str] = []
    for done, (label, args, memory) in enumerate(ways):
        progress(f"eval: supermemory ({label})", done, len(ways))
        log = run_benchmark_task("supermemory", model, memory=memory,
                                 task_args={"data": str(suite.root), **args}, limit=limit,
                                 log_dir=Path(out_dir) / "logs")
        logs.append(log.location)
        runs[label] = read_run(log)
    return section_from_runs(runs, suite), logs


def _ways(memories: Sequence[str]) -> list[tuple[str, dict[str, object], str | None]]:
    """How to answer, in the order printed: (label, task arguments, memory)."""
    ways: list[tuple[str, dict[str, object], str | None]] = []
    if "none" in memories:
        ways.append(("direct", {}, None))
    ways.append(("blind", {"blind": True}, None))
    ways += [(memory, {}, memory) for memory in memories if memory != "none"]
    return ways


def section_from_runs(runs: Mapping[str, LoggedRun], suite: EgoSuite) -> ReportSection:
    """The section of runs by framework label (``direct``, ``blind``, a memory's name)."""
    items = {label: items_from_log(run.samples) for label, run in runs.items()}
    table = _headline_table(items)
    notes = [*_readings(items), *_leak_notes(items, suite), _BASELINE_NOTE]
    return ReportSection(benchmark="supermemory",
                         title="SuperMemory-VQA synthetic egocentric suite", tables=[table],
                         notes=notes)


_BASELINE_NOTE = (
    "m3kit/builtin reads frames with OCR and transcripts as text, ranks the options by their "
    "support and abstains below its threshold; blind it has no evidence, so it always "
    "abstains and its accuracy is the share of unanswerable questions. Gold letters are "
    "balanced by construction. The suite is synthetic: compare ways of answering, not with the "
    "paper's Table 2.")


def _headline_table(items: Mapping[str, Sequence[SuperMemoryItem]]) -> Table:
    rows = []
    units = 0
    for label, its in items.items():
        # the report's computation (its table of headline numbers, its figures): one
        # number, one interval on the page
        intervals = item_intervals(DECLARED, its).ci
        units = max([units, *(i.n_units for i in intervals.values())])
        rows.append([label, *(_cell(intervals[name]) for name, _ in _NUMBERS), len(its)])
    caption = (f"0-100; 95 % intervals over {units} persons (cluster bootstrap, 2000 "
               "resamples, seed 0)")
    if units < MIN_UNITS:
        caption += f"; fewer than {MIN_UNITS} persons: intervals are rough"
    return Table(title="SuperMemory-VQA (Table 2's numbers) by way of answering",
                 columns=["answered", *(label for _, label in _NUMBERS), "n"], rows=rows,
                 caption=caption)


def _cell(interval: Interval) -> str:
    """``value [lo, hi]`` (the caption says how many persons the intervals rest on)."""
    if interval.value is None:
        return "-"
    text = number_text(interval.value, ".1f")
    if interval.lo is not None and interval.hi is not None:
        text += f" [{number_text(interval.lo, '.1f')}, {number_text(interval.hi, '.1f')}]"
    return text


def _readings(items: Mapping[str, Sequence[SuperMemoryItem]]) -> list[str]:
    """Each way against direct answering on the same questions (paired over persons), and
    blind accuracy against chance."""
    lines = []
    direct = {i.id: i for i in items.get("direct", [])}
    for label, its in items.items():
        if label == "direct" or not direct:
            continue
        pairs = [(direct[i.id], i) for i in its if i.id in direct]
        if not pairs:
            continue
        number = paired_cluster_bootstrap(group_units(pairs, lambda p: cluster_of(p[0])),
                                          headline)["qa_acc"]
        if number.diff is None:
            continue
        if number.significant:
            verdict = "beyond the noise"
        elif number.few_units:
            verdict = f"too few persons ({number.n_units}) to tell"
        else:
            verdict = "inside the noise: no difference shown"
        lines.append(f"{label} minus direct, accuracy on the same {len(pairs)} questions: "
                     f"{number_text(number.diff, '+.1f')} "
                     f"{number.interval_text('.1f', missing='')} points (paired over "
                     f"{number.n_units} persons): {verdict}.".replace("  ", " "))
    blind = items.get("blind")
    if blind:
        acc = headline(blind)["qa_acc"]
        unanswerable = 100 * sum(not i.answerable for i in blind) / len(blind)
        lines.append(f"blind accuracy {number_text(acc, '.1f')} against {_CHANCE_ACC:.0f} for a "
                     f"uniform guess; {unanswerable:.1f} % of the questions are unanswerable "
                     "(abstaining on every question scores exactly that).")
    return lines


def _leak_notes(items: Mapping[str, Sequence[SuperMemoryItem]], suite: EgoSuite) -> list[str]:
    """How often each way picked the answer a fact recorded after the question supports."""
    leaks = {str(t.question_id): t.leak_option_index for t in suite.manifest.truth
             if t.leak_option_index is not None}
    parts = []
    for label, its in items.items():
        asked = [(i.answer, leaks[i.id]) for i in its if i.id is not None and i.id in leaks]
        if asked:
            picked = sum(answer == leak for answer, leak in asked)
            parts.append(f"{label} {picked} of {len(asked)}")
    if not parts:
        return []
    return ["Causal cut: on questions whose answer-like fact is recorded only after the "
            "question time, the option that fact supports was picked by " + ", ".join(parts)
            + " (a model or memory that sees past the cut picks it; the cut holding shows 0 "
              "unless the option also matches earlier evidence)."]
