"""Aggregate sample rows into the tables m3kit prints and writes.

Every rate is over all rows of a cell: a failed or unparseable answer counts as wrong (it is
never dropped), and the counts of both are shown beside the rate.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel

from m3kit.report.rows import SampleRow

# Chance level of a question: four options, or Yes/No for N-back.
CHANCE = {"nback": 0.5}
DEFAULT_CHANCE = 0.25


class Table(BaseModel):
    """A titled table: column names and rows of printable cells."""

    title: str
    columns: list[str]
    rows: list[list[Any]]

    def to_markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        rule = "|" + "|".join("---" for _ in self.columns) + "|"
        body = ["| " + " | ".join(_cell(c) for c in row) + " |" for row in self.rows]
        return "\n".join([f"### {self.title}", "", head, rule, *body])


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def _pct(part: int, whole: int) -> float | None:
    return 100.0 * part / whole if whole else None


def _group(rows: Iterable[SampleRow], key: Callable[[SampleRow], tuple]) -> dict[tuple, list[SampleRow]]:
    groups: dict[tuple, list[SampleRow]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    return dict(sorted(groups.items(), key=lambda kv: tuple(str(k) for k in kv[0])))


def accuracy(rows: Sequence[SampleRow]) -> float | None:
    """Percent correct over all rows (failed and invalid answers are wrong)."""
    return _pct(sum(r.correct for r in rows), len(rows))


def intrusion_rate(rows: Sequence[SampleRow]) -> float | None:
    """Percent of scored answers whose chosen option has the role ``intrusion`` (M3Eval, after
    Zaromb et al.): the denominator is every answer to a question that has intrusion options."""
    return _pct(sum(r.role == "intrusion" for r in rows), len(rows))


def accuracy_table(rows: Sequence[SampleRow], title: str = "Accuracy by paradigm") -> Table:
    """Per system (model + memory) × paradigm × question type: accuracy, chance, counts."""
    out = []
    for (system, paradigm, qtype), cell in _group(
        rows, lambda r: (_system(r), r.paradigm, r.question_type)
    ).items():
        out.append([
            system, paradigm, qtype, len(cell), accuracy(cell),
            100 * CHANCE.get(paradigm, DEFAULT_CHANCE),
            accuracy([r for r in cell if r.evidence == "text"]),
            accuracy([r for r in cell if r.evidence == "visual"]),
            sum(r.invalid for r in cell), sum(r.failed for r in cell),
        ])
    return Table(
        title=title,
        columns=["system", "paradigm", "question type", "n", "acc %", "chance %",
                 "acc % (text evidence)", "acc % (visual only)", "invalid", "failed"],
        rows=out,
    )


def interference_table(rows: Sequence[SampleRow]) -> Table:
    """Memory interference per system × condition: accuracy and intrusion rate."""
    relevant = [r for r in rows if r.paradigm == "interference"]
    out = [
        [system, condition, len(cell), accuracy(cell), intrusion_rate(cell)]
        for (system, condition), cell in _group(relevant, lambda r: (_system(r), r.condition)).items()
    ]
    return Table(title="Memory interference", columns=["system", "condition", "n", "acc %",
                                                        "intrusion %"], rows=out)


def nback_table(rows: Sequence[SampleRow]) -> Table:
    """N-back accuracy per system by lag N and by sequence length K."""
    relevant = [r for r in rows if r.paradigm == "nback"]
    out = []
    for (system,), cell in _group(relevant, lambda r: (_system(r),)).items():
        for n, sub in _group(cell, lambda r: (r.n,)).items():
            out.append([system, f"N={n[0]}", len(sub), accuracy(sub)])
        for k, sub in _group(cell, lambda r: (r.k,)).items():
            out.append([system, f"K={k[0]}", len(sub), accuracy(sub)])
    return Table(title="N-back (chance 50 %)", columns=["system", "knob", "n", "acc %"], rows=out)


def cost_table(rows: Sequence[SampleRow]) -> Table:
    """Mean cost per answer for each system: tokens, images, escalations, index build time."""
    out = []
    for (system,), cell in _group(rows, lambda r: (_system(r),)).items():
        n = len(cell)
        out.append([
            system, n, sum(r.prompt_tokens for r in cell) / n,
            sum(r.completion_tokens for r in cell) / n, sum(r.images_sent for r in cell) / n,
            sum(r.raw_media_escalations for r in cell) / n,
            max((r.index_build_seconds for r in cell), default=0.0),
        ])
    return Table(title="Cost per answer", columns=["system", "n", "prompt tokens",
                                                    "completion tokens", "images",
                                                    "escalations", "max index build s"],
                 rows=out)


def _system(row: SampleRow) -> str:
    return f"{row.model} + {row.memory}" if row.memory not in ("", "none") else row.model
