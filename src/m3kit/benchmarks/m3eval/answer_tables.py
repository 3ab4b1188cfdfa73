"""The quickstart's tables of the synthetic suite's answers, and the reading derived from them.

Every accuracy cell carries its n (questions), the units it rests on (source video pairs, or the
probe video where no pair is known: ``load.source_unit``, the unit of M3Eval's intervals) and a
95 % percentile cluster-bootstrap interval over those units (``m3kit.metrics.bootstrap``: 2000
resamples, seed 0). Chance is computed from each question's own options (one over their number),
never assumed per type. The sentences of ``readings`` say only what the intervals support: a
number is "above chance" when the interval of its difference from chance excludes 0, two numbers
differ when the interval of their difference excludes 0, and otherwise the comparison is "inside
the noise". Tables are laid out to fit 80 terminal columns: a system is a heading row (or the
table's title), not a column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from statistics import fmean
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from m3kit.metrics import ScoredAnswer, accuracy, intrusion_rate
from m3kit.metrics.bootstrap import (
    MIN_UNITS,
    Interval,
    cluster_bootstrap,
    few_units_note,
    group_units,
    number_text,
)
from m3kit.schema import Usage
from m3kit.schema.evallog import LoggedRun
from m3kit.schema.question import Question
from m3kit.schema.report import Table

__all__ = [
    "EVIDENCE_NAMES",
    "SampleRow",
    "accuracy_interval",
    "accuracy_tables",
    "chance_of",
    "cost_table",
    "evidence_table",
    "interference_table",
    "interval_cell",
    "nback_table",
    "percent",
    "readings",
    "rows_from_run",
    "table_notes",
]

# Chance (percent) of a question whose options are not recorded (a sample that failed before
# its question was read): M3Eval's four options, Yes/No for N-back, Video 1/2 for source memory.
_CHANCE_BY_TYPE: dict[str, float] = {"nback": 50.0, "source_memory": 50.0}
_DEFAULT_CHANCE = 25.0
EVIDENCE_NAMES = {"text": "text on screen", "visual": "visual only"}
_TYPE_NAMES = {
    "source_identification": "source identif.", "order_understanding": "order",
    "content_retention": "content", "source_memory": "source memory",
    "false_memory_discrimination": "false memory", "memory_interference": "interference",
    "nback": "N-back",
}
_PARADIGM_NAMES = {"divided_attention": "divided attention", "interference": "interference",
                   "interleaved": "interleaved", "nback": "N-back"}
INDENT = "  "
ACC_COLUMN = "acc % [95 % CI]"


def chance_of(question: Question | None, question_type: object = None) -> float:
    """Chance accuracy (percent) of a question: 100 over its number of options; by type where
    the question is unknown."""
    if question is not None and question.choices:
        return 100.0 / len(question.choices)
    return _CHANCE_BY_TYPE.get(str(question_type), _DEFAULT_CHANCE)


class SampleRow(BaseModel):
    """A scored answer, the system that gave it (model, memory), what it cost, the unit it
    belongs to (its source video pair) and its chance level (percent, from its options)."""

    model_config = ConfigDict(frozen=True)

    answer: ScoredAnswer
    model: str
    memory: str = "none"
    usage: Usage = Field(default_factory=Usage)
    unit: str = ""
    chance: float = _DEFAULT_CHANCE
    gold_text: str | None = None  # the correct option's text, to see a cell whose gold never varies

    @property
    def system(self) -> str:
        return self.model if self.memory in ("", "none") else f"{self.model} + {self.memory}"

    def label(self, key: str) -> Any:
        return self.answer.groups.get(key)


def rows_from_run(run: LoggedRun) -> list[SampleRow]:
    """The rows of one run: each scored sample's answer, the run's model and memory, its cost,
    unit and chance; samples whose media could not be read are left out, as every M3Eval rate
    leaves them out."""
    from m3kit.benchmarks.m3eval.item import is_excluded
    from m3kit.benchmarks.m3eval.load import source_unit
    from m3kit.benchmarks.m3eval.score import sample_results

    memory = str(run.task_args.get("memory") or "none")
    rows = []
    for result in sample_results(run.samples):
        if is_excluded(result.answer):
            continue
        question = result.question
        unit = source_unit(question) if question is not None else result.answer.id
        gold = next((c.text for c in question.choices if c.letter == question.answer),
                    None) if question is not None else None
        rows.append(SampleRow(
            answer=result.answer, model=run.model, memory=memory, usage=result.usage,
            unit=unit, chance=chance_of(question, result.answer.groups.get("question_type")),
            gold_text=gold))
    return rows


def percent(rows: Sequence[SampleRow], rate: Callable = accuracy) -> float | None:
    """``rate`` of the rows' answers in percent (invalid and failed answers are wrong); None
    for no rows."""
    return 100.0 * rate([r.answer for r in rows]) if rows else None


def _intrusion(rows: Sequence[SampleRow]) -> float | None:
    return percent(rows, intrusion_rate)


def _bootstrap(rows: Sequence[SampleRow],
               statistic: Callable[[list[SampleRow]], dict[str, float | None]]
               ) -> dict[str, Interval]:
    return cluster_bootstrap(group_units(rows, lambda r: r.unit), statistic)


def _accuracy_stats(rows: list[SampleRow]) -> dict[str, float | None]:
    acc = percent(rows)
    chance = fmean(r.chance for r in rows) if rows else None
    return {"acc": acc, "above": None if acc is None or chance is None else acc - chance}


def interval_cell(interval: Interval, signed: bool = False) -> str:
    """``42.4 [33.1, 51.2]`` (one decimal; ``+`` signs for a difference); the bare value on
    fewer than 2 units; ``—`` when undefined."""
    if interval.value is None:
        return "—"
    text = number_text(interval.value, ".1f", signed=signed)
    if interval.lo is None or interval.hi is None:
        return text
    return (f"{text} [{number_text(interval.lo, '.1f', signed=signed)}, "
            f"{number_text(interval.hi, '.1f', signed=signed)}]")


def _by_label(key: str) -> Callable[[SampleRow], tuple[Any, ...]]:
    """A row's group key: its label ``key`` alone."""
    return lambda row: (row.label(key),)


def _group(rows: Iterable[SampleRow],
           key: Callable[[SampleRow], tuple]) -> dict[tuple, list[SampleRow]]:
    groups: dict[tuple, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return dict(sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])))


def _systems(rows: Sequence[SampleRow]) -> list[str]:
    return list(dict.fromkeys(r.system for r in rows))


def _units(rows: Sequence[SampleRow]) -> int:
    return len({r.unit for r in rows})


def accuracy_interval(rows: Sequence[SampleRow]) -> Interval:
    """The accuracy (percent) of ``rows`` with its interval over their own units: the one
    computation of a cell of these tables and of the point M3Eval's Figures 10 and 11 draw for
    the same answers (``m3kit.benchmarks.m3eval.report``)."""
    return _bootstrap(rows, _accuracy_stats)["acc"]


def _accuracy_cells(cell: list[SampleRow]) -> list[Any]:
    """n, units, accuracy with interval, chance."""
    acc = accuracy_interval(cell)
    return [len(cell), acc.n_units, interval_cell(acc), fmean(r.chance for r in cell)]


def evidence_table(rows: Sequence[SampleRow]) -> Table:
    """The headline: per system, accuracy where on-screen text carries the answer and where only
    the pixels do, each with its interval and the chance level of the same questions (the
    interval of accuracy minus chance is in ``readings``)."""
    out: list[list[Any]] = []
    for system in _systems(rows):
        out.append([system, "", "", "", ""])
        mine = [r for r in rows if r.system == system]
        for (evidence,), cell in _group(mine, lambda r: (r.label("evidence"),)).items():
            out.append([INDENT + EVIDENCE_NAMES.get(str(evidence), str(evidence)),
                        *_accuracy_cells(cell)])
    return Table(title="Accuracy by evidence",
                 caption="n questions resting on `units` source pairs (or N-back trials); "
                         "95 % cluster-bootstrap intervals; chance from each question's "
                         "options.",
                 columns=["system / evidence", "n", "units", ACC_COLUMN, "chance %"], rows=out)


def accuracy_tables(rows: Sequence[SampleRow]) -> list[Table]:
    """Per system, one table: accuracy per paradigm (a heading row) and question type, with n,
    units, interval and chance."""
    tables = []
    for system in _systems(rows):
        out: list[list[Any]] = []
        mine = [r for r in rows if r.system == system]
        for (paradigm,), part in _group(mine, lambda r: (r.label("paradigm"),)).items():
            out.append([_PARADIGM_NAMES.get(str(paradigm), str(paradigm)), "", "", "", ""])
            for (qtype,), cell in _group(part, lambda r: (r.label("question_type"),)).items():
                out.append([INDENT + _TYPE_NAMES.get(str(qtype), str(qtype)),
                            *_accuracy_cells(cell)])
        tables.append(Table(title=f"Accuracy by paradigm · {system}",
                            columns=["paradigm / question type", "n", "units", ACC_COLUMN,
                                     "chance %"], rows=out))
    return tables


def interference_table(rows: Sequence[SampleRow]) -> Table:
    """Memory interference per system and condition: accuracy and intrusion rate (over the
    questions that offer an intrusion option), each with its interval."""
    relevant = [r for r in rows if r.label("paradigm") == "interference"]
    out: list[list[Any]] = []
    for system in _systems(relevant):
        out.append([system, "", "", "", ""])
        mine = [r for r in relevant if r.system == system]
        for (condition,), cell in _group(mine, lambda r: (r.label("condition"),)).items():
            stats = _bootstrap(cell, lambda items: {"acc": percent(items),
                                                    "intrusion": _intrusion(items)})
            out.append([INDENT + str(condition), len(cell), stats["acc"].n_units,
                        interval_cell(stats["acc"]), interval_cell(stats["intrusion"])])
    return Table(title="Memory interference",
                 columns=["system / condition", "n", "units", ACC_COLUMN, "intrusion %"],
                 rows=out)


def nback_table(rows: Sequence[SampleRow]) -> Table:
    """N-back accuracy per system by lag N and by sequence length K (each trial is a unit)."""
    relevant = [r for r in rows if r.label("paradigm") == "nback"]
    out: list[list[Any]] = []
    for system in _systems(relevant):
        out.append([system, "", "", "", ""])
        mine = [r for r in relevant if r.system == system]
        for knob in ("n", "k"):
            for (value,), cell in _group(mine, _by_label(knob)).items():
                out.append([f"{INDENT}{knob.upper()}={value}", *_accuracy_cells(cell)])
    return Table(title="N-back by N and K", columns=["system / knob", "n", "units", ACC_COLUMN,
                                                     "chance %"], rows=out)


def cost_table(rows: Sequence[SampleRow]) -> Table:
    """Mean cost per answer for each system: tokens, images, escalations; index build time is
    per memory key, so the largest is shown, not a sum over the questions that share it."""
    out = []
    for system in _systems(rows):
        cell = [r for r in rows if r.system == system]
        n = len(cell)
        out.append([
            system, n, sum(r.usage.prompt_tokens for r in cell) / n,
            sum(r.usage.completion_tokens for r in cell) / n,
            sum(r.usage.images_sent for r in cell) / n,
            sum(r.usage.raw_media_escalations for r in cell) / n,
            max(r.usage.index_build_seconds for r in cell),
        ])
    return Table(title="Cost per answer", columns=["system", "n", "tok in", "tok out", "images",
                                                    "escal.", "index s"], rows=out)


def table_notes(rows: Sequence[SampleRow]) -> list[str]:
    """What every table above rests on: the answers counted, and the caveat of few units."""
    counts = {s: sum(r.answer.status == s for r in rows) for s in ("invalid", "failed")}
    notes = [(f"{len(rows)} answers counted; {counts['invalid']} invalid and {counts['failed']} "
              "failed, each counted wrong. 95 % percentile intervals over 2000 cluster "
              "resamples of the units (seed 0).")]
    if any(n < MIN_UNITS for n in _cell_units(rows)):
        notes.append(few_units_note() + ": check the units column.")
    return notes + constant_gold_notes(rows)


def constant_gold_notes(rows: Sequence[SampleRow]) -> list[str]:
    """A caveat per (paradigm, question type) whose questions all have the same correct option
    text (M3Eval's false-memory questions: "Neither video", by the paper's design): there a model
    that always gives that answer (an abstaining one) scores 100 %, so the cell measures that
    bias, not memory; chance from the options does not show it."""
    golds: dict[tuple[Any, Any], set[str | None]] = {}
    for r in rows:
        golds.setdefault((r.label("paradigm"), r.label("question_type")), set()).add(r.gold_text)
    return [f"Every {paradigm} / {kind} question has the same correct option, {next(iter(g))!r}: "
            "a model that always answers it scores 100 % there, whatever it remembers."
            for (paradigm, kind), g in golds.items() if len(g) == 1 and None not in g]


def _cell_units(rows: Sequence[SampleRow]) -> list[int]:
    keys: list[Callable[[SampleRow], tuple]] = [
        lambda r: (r.system, r.label("evidence")),
        lambda r: (r.system, r.label("paradigm"), r.label("question_type")),
    ]
    return [_units(cell) for key in keys for cell in _group(rows, key).values()]


# -- the reading ------------------------------------------------------------------------------


def _verdict(interval: Interval, above: str, below: str, same: str) -> str:
    if interval.value is None or interval.lo is None or interval.hi is None:
        return "no interval (fewer than 2 units)"
    if interval.n_units < MIN_UNITS:
        return f"too few units ({interval.n_units}) to tell"
    if interval.lo > 0:
        return above
    if interval.hi < 0:
        return below
    return same


def _evidence_gap(rows: list[SampleRow]) -> dict[str, float | None]:
    text = percent([r for r in rows if r.label("evidence") == "text"])
    visual = percent([r for r in rows if r.label("evidence") == "visual"])
    return {"gap": None if text is None or visual is None else text - visual}


def readings(rows: Sequence[SampleRow]) -> list[str]:
    """The sentences the quickstart prints under its headline, one conclusion each, each
    derived from an interval: accuracy against chance per system and evidence variant, and
    text on screen against visual only per system."""
    lines = []
    for system in _systems(rows):
        mine = [r for r in rows if r.system == system]
        for (evidence,), cell in _group(mine, lambda r: (r.label("evidence"),)).items():
            stats = _bootstrap(cell, _accuracy_stats)
            chance = fmean(r.chance for r in cell)
            verdict = _verdict(stats["above"], "above chance", "below chance",
                               "inside the noise: not distinguishable from chance")
            lines.append(f"{system}, {EVIDENCE_NAMES.get(str(evidence), evidence)}: "
                         f"{interval_cell(stats['acc'])} % vs chance {chance:.1f} % "
                         f"(n {len(cell)}; minus chance {interval_cell(stats['above'], True)}):"
                         f" {verdict}.")
        gap = _bootstrap(mine, _evidence_gap)["gap"]
        # The gap compares two groups of questions, not one number per unit: every unit that
        # holds a question of either kind is drawn and informs it (an N-back trial is all text
        # or all visual), so it rests on all of them, not only on those that hold both.
        gap = gap.model_copy(update={"n_units": _units(mine)})
        if gap.value is not None:
            verdict = _verdict(gap, "text on screen is answered better",
                               "visual only is answered better",
                               "inside the noise: no difference shown")
            lines.append(f"{system}, text on screen minus visual only: "
                         f"{interval_cell(gap, True)} points: {verdict}.")
    return lines


def uniform_answers(rows: Sequence[SampleRow]) -> list[str]:
    """A sentence per system and paradigm where every answer was the same letter: the table's
    rows then measure the label balance, not memory."""
    out = []
    for (system, paradigm), cell in _group(rows, lambda r: (r.system,
                                                            r.label("paradigm"))).items():
        letters = {r.answer.answer for r in cell}
        if len(cell) > 1 and len(letters) == 1 and None not in letters:
            out.append(f"{system} gave the same answer ({letters.pop()}) to all {len(cell)} "
                       f"{_PARADIGM_NAMES.get(str(paradigm), paradigm)} questions: its rows "
                       "there show the gold letters' balance (chance by construction), not "
                       "memory.")
    return out
