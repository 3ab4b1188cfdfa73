"""SuperMemory-VQA's report: the seed's Tables 2-5, Fig. 7/9 (accuracy by skill), Fig. 8 (the
answerability breakdown as stacked bars) and appendix E's data set statistics.

A run is one model through one *framework*: ``direct`` (the question session's frames and
transcript up to the question), a memory (``+ rag``...) or ``blind`` (question and options
only). Table 2 puts frameworks side by side for each model (Ans-F1, Acc, MRR); blind runs go to
Table 3 (accuracy by skill), as in the seed. Runs of one model and framework are one system
(``system_label``): their samples are pooled. A score file (``m3kit score supermemory --json``)
is a system of its own, named by its file's stem, in the ``score file`` column group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from m3kit.benchmarks.declaration import Benchmark
from m3kit.benchmarks.figures import error_bars, pyplot
from m3kit.benchmarks.protocol import BenchmarkReporting, ReportContext
from m3kit.benchmarks.supermemory.load import BENCHMARK_NAME
from m3kit.benchmarks.supermemory.score import (
    ANSWERABLE_CORRECT,
    UNANSWERABLE_ABSTAINED,
    SuperMemoryScore,
    figure_numbers,
    scores_from_log,
    skill_number,
)
from m3kit.benchmarks.supermemory.stats import dataset_stats, stats_tables
from m3kit.metrics.bootstrap import Interval
from m3kit.schema.evallog import BLIND_KEY, FRAMES_KEY, MEMORY_NAME_KEY, LoggedRun, LoggedSample
from m3kit.schema.report import NA, DeltaCell, ReportSection, Table

__all__ = [
    "ANSWERABILITY_FIGURE",
    "REPORTING",
    "SKILL_FIGURE",
    "answerability_figure",
    "draw_answerability_figure",
    "draw_skill_figure",
    "figure_interval_table",
    "framework_of",
    "sections",
    "skill_figure",
    "system_label",
]

SKILL_FIGURE = "supermemory_accuracy_by_skill.png"
ANSWERABILITY_FIGURE = "supermemory_answerability.png"
BLIND = "blind"


def framework_of(run: LoggedRun) -> str:
    """How a run answered: ``blind``, the memory's name, or ``direct (<frames> frames)``."""
    meta: dict[str, Any] = run.metadata
    if meta.get(BLIND_KEY, run.task_args.get("blind")):
        return BLIND
    memory = meta.get(MEMORY_NAME_KEY) or run.task_args.get("memory")
    if memory and memory != "none":
        return str(memory)
    return f"direct ({meta.get(FRAMES_KEY, run.task_args.get('frames', 32))} frames)"


def system_label(run: LoggedRun) -> str:
    """``<model> · <framework>`` with the run's setting variant (frames, fps, ...) appended:
    runs alike in all of them are one system."""
    return run.labelled(f"{run.model} · {framework_of(run)}")


class _System:
    """A model through a framework (``base``, with the runs' setting ``variant`` when runs of it
    differ in one): its score, the questions it excluded, and (logged runs) the intervals of
    the numbers the figures draw (``score.figure_numbers``; none for a score file)."""

    def __init__(self, model: str, base: str, score: SuperMemoryScore,
                 excluded: Sequence[str] = (),
                 intervals: Mapping[str, Interval] | None = None,
                 transcript_cut: tuple[int, int] = (0, 0), variant: str = "") -> None:
        self.model, self.base, self.variant, self.score = model, base, variant, score
        self.excluded = list(excluded)  # ids of the questions excluded (media unreadable)
        self.intervals = dict(intervals or {})
        # (questions whose prompt's transcript was cut to its budget, lines left out in all)
        self.transcript_cut = transcript_cut

    @property
    def framework(self) -> str:
        """Its column: the framework, with the setting variant if any."""
        return f"{self.base} · {self.variant}" if self.variant else self.base

    @property
    def name(self) -> str:
        return f"{self.model} · {self.framework}"

    @property
    def blind(self) -> bool:
        return self.base == BLIND

    @property
    def blind_label(self) -> str:
        """Its column in the blind table: the model, with the setting variant if any."""
        return self.name if self.variant else self.model

    def bounds(self, name: str) -> tuple[float, float] | None:
        """The interval of the figures' number ``name`` (``None`` without one)."""
        found = self.intervals.get(name)
        if found is None or found.lo is None or found.hi is None:
            return None
        return found.lo, found.hi


SCORE_FILE = "score file"
SHOW_EXCLUDED = 10  # excluded question ids named in a note


def _natural_id(qid: str) -> tuple[int, str]:
    return (int(qid), "") if qid.isdigit() else (1 << 62, qid)


def _systems(benchmark: Benchmark, runs: Sequence[LoggedRun],
             cards: Mapping[str, Any] | None = None) -> list[_System]:
    """Each model and framework (with its setting variant) of the runs (their samples pooled),
    with the intervals of its figures' numbers (``benchmark``'s), then each score file
    (``m3kit score supermemory --json``; its stem names the model)."""
    from m3kit.benchmarks.intervals import run_intervals

    pooled: dict[tuple[str, str, str], list[LoggedRun]] = {}
    for run in runs:
        # the run's setting variant (frames, fps, data...) sets it apart: runs on other media
        # or settings are other systems, never pooled into one row
        pooled.setdefault((run.model, framework_of(run), run.variant), []).append(run)
    systems = []
    for (model, base, variant), its in pooled.items():
        samples = [s for run in its for s in run.samples]
        systems.append(_System(
            model, base, scores_from_log(samples),
            sorted((s.question.id for s in samples if s.excluded and s.question is not None),
                   key=_natural_id),
            run_intervals(benchmark, its, statistic=figure_numbers).ci,
            _transcript_cut(samples), variant))
    for stem, data in (cards or {}).items():
        systems.append(_System(stem, SCORE_FILE, SuperMemoryScore.model_validate(data)))
    return systems


def _transcript_cut(samples: Sequence[LoggedSample]) -> tuple[int, int]:
    """How many questions' direct prompts had their transcript cut to the token budget, and
    how many lines were left out in all."""
    cuts = [cut for s in samples
            if (cut := getattr(s.item, "transcript_cut", 0) if s.item is not None else 0)]
    return len(cuts), sum(cuts)


def _grid(systems: Sequence[_System]
          ) -> tuple[list[str], list[str], dict[tuple[str, str], _System]]:
    models = list(dict.fromkeys(s.model for s in systems))
    frameworks = list(dict.fromkeys(s.framework for s in systems))
    return models, frameworks, {(s.model, s.framework): s for s in systems}


def main_table(systems: Sequence[_System]) -> Table:
    """Table 2: one row per model, for each framework Ans-F1, Acc and MRR (0-100), and n."""
    models, frameworks, by = _grid([s for s in systems if not s.blind])
    columns = ["Model"]
    for _ in frameworks:
        columns += ["Ans-F1", "Acc.", "MRR", "n"]
    rows = []
    for model in models:
        row: list[Any] = [model]
        for framework in frameworks:
            s = by.get((model, framework))
            row += ([s.score.ans_f1, s.score.qa_acc, s.score.qa_mrr, s.score.n] if s
                    else [None, None, None, None])
        rows.append(row)
    return Table(title="SuperMemory-VQA (Table 2): Ans-F1, QA-Acc, QA-MRR (0-100)",
                 columns=columns, rows=rows, header_groups=[("", 1), *((f, 4) for f in frameworks)])


def blind_table(systems: Sequence[_System]) -> Table | None:
    """Table 3: blind runs, accuracy by skill with the counts."""
    blind = [s for s in systems if s.blind]
    if not blind:
        return None
    skills = list(dict.fromkeys(k for s in blind for k in s.score.by_skill))
    columns = ["Category"]
    for _ in blind:
        columns += ["Correct", "Total", "Accuracy (%)"]
    rows: list[list[Any]] = []
    overall: list[Any] = ["All questions"]
    for s in blind:
        correct = round((s.score.qa_acc or 0.0) * s.score.n / 100)
        overall += [correct, s.score.n, s.score.qa_acc]
    rows.append(overall)
    for skill in skills:
        row: list[Any] = [skill]
        for s in blind:
            g = s.score.by_skill.get(skill)
            row += [round(g.qa_acc * g.n / 100), g.n, g.qa_acc] if g else [None, None, None]
        rows.append(row)
    return Table(title="SuperMemory-VQA blind (Table 3): question and options only",
                 columns=columns, rows=rows,
                 header_groups=[("", 1), *((s.blind_label, 3) for s in blind)])


def _mean_std(mean: float | None, std: float | None, n: int) -> str:
    if mean is None:
        return NA
    spread = f" ± {std:.1f}" if std is not None else ""
    return f"{mean:.1f}{spread} ({n})"


def group_table(systems: Sequence[_System]) -> Table:
    """Table 4: per video and per person, the mean of the groups' accuracy ± its sample
    standard deviation, with the number of groups."""
    models, frameworks, by = _grid(systems)
    columns = ["Model", *frameworks, *frameworks]
    rows = []
    for model in models:
        row: list[Any] = [model]
        for kind in ("video", "person"):
            for framework in frameworks:
                s = by.get((model, framework))
                row.append(NA if s is None else _mean_std(
                    getattr(s.score, f"{kind}_mean"), getattr(s.score, f"{kind}_std"),
                    len(getattr(s.score, f"by_{kind}"))))
        rows.append(row)
    return Table(title="SuperMemory-VQA per video and per person (Table 4): mean ± sample std "
                       "of accuracy (groups)",
                 columns=columns, rows=rows,
                 header_groups=[("", 1), ("Per-Video", len(frameworks)),
                                ("Per-Person", len(frameworks))])


def vague_table(systems: Sequence[_System]) -> Table:
    """Table 5: accuracy with partial credit for the vague option, and its gain over Acc."""
    models, frameworks, by = _grid(systems)
    rows = []
    weight = next((s.score.vague_weight for s in systems), 0.5)
    for model in models:
        row: list[Any] = [model]
        for framework in frameworks:
            s = by.get((model, framework))
            row.append(DeltaCell(value=s.score.vague_credit_acc, delta=s.score.vague_gain)
                       if s else None)
        rows.append(row)
    return Table(title=f"SuperMemory-VQA vague credit (Table 5): accuracy with vague options "
                       f"worth {weight:g} (gain over Acc)",
                 columns=["Model", *frameworks], rows=rows)


def breakdown_table(systems: Sequence[_System]) -> Table:
    """Fig. 8's numbers: what answerable and unanswerable questions got (% of each)."""
    rows = []
    for s in systems:
        a, u = s.score.answerable, s.score.unanswerable
        rows.append([s.name, s.score.n_answerable, a.correct, a.vague, a.wrong, a.abstained,
                     a.invalid, s.score.n_unanswerable, u.abstained, u.answered, u.invalid])
    return Table(title="SuperMemory-VQA answerability (Fig. 8), % of answerable / "
                       "unanswerable questions",
                 columns=["system", "n", "correct", "vague", "wrong", "abstained", "invalid",
                          "n", "abstained", "answered", "invalid"],
                 rows=rows, header_groups=[("", 1), ("Answerable", 6), ("Unanswerable", 4)])


def _save(fig: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)


def skill_figure(systems: Sequence[_System], path: Path) -> Path | None:
    """Fig. 7/9 (``draw_skill_figure``) written to ``path``, its numbers beside it; None
    without skills."""
    fig = draw_skill_figure(systems)
    if fig is None:
        return None
    _save(fig, path)
    skills = list(dict.fromkeys(k for s in systems for k in s.score.by_skill))
    _write_numbers(path, {s.name: {k: s.score.by_skill[k].qa_acc for k in skills
                                   if k in s.score.by_skill} for s in systems})
    return path


def draw_skill_figure(systems: Sequence[_System]) -> Any:
    """Fig. 7/9: QA accuracy by skill, one bar per system with its 95 % interval as an error
    bar (logged systems: ``figure_interval_table``'s); None without skills. The caller closes
    the figure."""
    skills = list(dict.fromkeys(k for s in systems for k in s.score.by_skill))
    if not skills:
        return None
    import numpy as np

    plt = pyplot()

    width = 0.8 / max(len(systems), 1)
    x = np.arange(len(skills))
    fig, ax = plt.subplots(figsize=(max(7, 1.4 * len(skills)), 4.5))
    for n, s in enumerate(systems):
        values = [s.score.by_skill[k].qa_acc if k in s.score.by_skill else 0.0 for k in skills]
        xs = x + n * width - 0.4 + width / 2
        ax.bar(xs, values, width, label=s.name)
        error_bars(ax, xs, values, [s.bounds(skill_number(k)) for k in skills])
    ax.set_xticks(x)
    ax.set_xticklabels([k.replace("_", "\n") for k in skills], fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("QA-Acc (%)")
    ax.set_title("SuperMemory-VQA: accuracy by skill")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _write_numbers(figure: Path, numbers: Mapping[str, Any]) -> None:
    """The plotted numbers beside the figure (``<name>.json``, unrounded), as M3Eval's do."""
    figure.with_suffix(".json").write_text(json.dumps(numbers, indent=1), encoding="utf-8")


def answerability_figure(systems: Sequence[_System], path: Path) -> Path | None:
    """Fig. 8 (``draw_answerability_figure``) written to ``path``, its numbers beside it;
    None without systems."""
    fig = draw_answerability_figure(systems)
    if fig is None:
        return None
    _save(fig, path)
    _write_numbers(path, {s.name: {"answerable": s.score.answerable.model_dump(),
                                   "unanswerable": s.score.unanswerable.model_dump()}
                          for s in systems})
    return path


def draw_answerability_figure(systems: Sequence[_System]) -> Any:
    """Fig. 8: for each system, a stacked bar of answerable questions (correct, vague, wrong,
    abstained, invalid) and one of unanswerable ones (abstained, answered, invalid), the first
    segment of each with its 95 % interval as an error bar (logged systems); None without
    systems. The caller closes the figure."""
    if not systems:
        return None
    plt = pyplot()
    parts = [("answerable", "correct", "#2e7d32"), ("answerable", "vague", "#9ccc65"),
             ("answerable", "wrong", "#c62828"), ("answerable", "abstained", "#ffa000"),
             ("answerable", "invalid", "#757575"),
             ("unanswerable", "abstained", "#1565c0"), ("unanswerable", "answered", "#ad1457"),
             ("unanswerable", "invalid", "#9e9e9e")]
    labels = [f"{s.name}\n{kind}" for s in systems for kind in ("answerable", "unanswerable")]
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(labels) + 1.5))
    left = [0.0] * len(labels)
    for kind, part, colour in parts:
        values = []
        for s in systems:
            for bar in ("answerable", "unanswerable"):
                value = getattr(getattr(s.score, bar), part, None) if bar == kind else None
                values.append(value or 0.0)
        ax.barh(labels, values, left=left, color=colour, label=f"{kind}: {part}")
        left = [a + b for a, b in zip(left, values, strict=True)]
    # the first segment of each bar (the right outcome: correct, abstained) starts at 0, so
    # its interval sits at its end
    firsts: list[tuple[float, tuple[float, float] | None]] = []
    for s in systems:
        firsts += [(s.score.answerable.correct or 0.0, s.bounds(ANSWERABLE_CORRECT)),
                   (s.score.unanswerable.abstained or 0.0, s.bounds(UNANSWERABLE_ABSTAINED))]
    error_bars(ax, range(len(labels)), [v for v, _ in firsts], [b for _, b in firsts],
                horizontal=True)
    ax.set_xlim(0, 100)
    ax.set_xlabel("% of questions")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3)
    fig.tight_layout()
    return fig


def figure_interval_table(systems: Sequence[_System], spec: str) -> Table | None:
    """The numbers the figures draw error bars for (``score.figure_numbers``), one column per
    logged system, as ``value [lo, hi] (n units)`` in ``spec`` (how the benchmark prints an
    interval in a report): the intervals of the error bars."""
    from m3kit.metrics.bootstrap import few_units_note

    logged = [s for s in systems if s.intervals]
    if not logged:
        return None
    names = list(dict.fromkeys(name for s in logged for name in s.intervals))
    # the skills in the figure's order, then the answerability segments
    skills = list(dict.fromkeys(k for s in logged for k in s.score.by_skill))
    order = [skill_number(k) for k in skills] + [ANSWERABLE_CORRECT, UNANSWERABLE_ABSTAINED]
    names = [n for n in order if n in names] + [n for n in names if n not in order]
    rows = [[name, *(s.intervals[name].text(spec, units=True)
                     if name in s.intervals and s.intervals[name].value is not None else NA
                     for s in logged)] for name in names]
    few = any(i.few_units for s in logged for i in s.intervals.values() if i.value is not None)
    caption = ("0-100: accuracy by skill (the skill figure) and the first segment of each "
               "answerability bar (correct / abstained), with the 95 % intervals the figures "
               "draw as error bars; persons resampled, 2000 resamples, seed 0"
               + (f". {few_units_note()}" if few else "") + ".")
    return Table(title="SuperMemory-VQA figures' numbers with intervals",
                 columns=["number", *(s.name for s in logged)], rows=rows, caption=caption)


def sections(context: ReportContext) -> list[ReportSection]:
    """The SuperMemory-VQA section of ``m3kit report`` (eval logs and score files); writes its
    figures into ``context.out_dir``."""
    logged, out_dir = context.runs, context.out_dir
    systems = _systems(context.benchmark, logged, context.cards)
    if not systems:
        return []
    tables = [main_table(systems)]
    blind = blind_table(systems)
    tables += [blind] if blind is not None else []
    tables += [group_table(systems), vague_table(systems), breakdown_table(systems)]
    figure_table = figure_interval_table(systems, context.benchmark.interval_spec)
    tables += [figure_table] if figure_table is not None else []
    asked = {s.question.id: s.question for run in logged for s in run.samples
             if s.question is not None}
    if asked:
        tables += stats_tables(dataset_stats(list(asked.values())))
    figures = [f.name for f in (skill_figure(systems, Path(out_dir) / SKILL_FIGURE),
                                answerability_figure(systems, Path(out_dir) / ANSWERABILITY_FIGURE))
               if f is not None]
    notes = [("Invalid replies and questions without an answer are wrong on every metric "
             "(docs/metrics.md, \"SuperMemory-VQA\"). Intervals resample persons.")]
    if figures and any(s.intervals for s in systems):
        notes.append("Error bars: the 95 % intervals of \"SuperMemory-VQA figures' numbers "
                     "with intervals\" (on the answerability bars, of their first segment); "
                     "a score file has none.")
    for s in systems:
        if s.score.n_excluded:
            ids = ", ".join(s.excluded[:SHOW_EXCLUDED]) + (
                " ..." if len(s.excluded) > SHOW_EXCLUDED else "")
            notes.append(f"{s.name}: {s.score.n_excluded} of {s.score.n + s.score.n_excluded} "
                         "question(s) excluded, their media unreadable, and left out of every "
                         f"number (n is the rest){': ' + ids if ids else ''}.")
        questions, lines = s.transcript_cut
        if questions:
            notes.append(f"{s.name}: the transcript in {questions} question(s) was cut to its "
                         f"token budget (-T transcript_tokens): {lines} older line(s) left "
                         "out, the lines heard last kept.")
    return [ReportSection(benchmark=BENCHMARK_NAME, title="SuperMemory-VQA", tables=tables,
                          figures=figures, notes=notes)]


REPORTING = BenchmarkReporting(sections=sections, system_label=system_label)
