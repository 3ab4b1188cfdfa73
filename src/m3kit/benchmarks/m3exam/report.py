"""M3Exam (and LoCoMo-format) eval logs → the paper's per-type table with cost columns.

The report contract: ``sections(logs, out_dir)`` returns ``ReportSection``s and writes their
figures (PNG, matplotlib Agg) into ``out_dir``.

A *system* is one model on one benchmark and dataset under one regime
(``m3kit/builtin · m3exam/Alex_Veterinarian · oracle``, ``... · locomo/locomo10 · text``);
samples of several logs of the same system are pooled (a sample id seen twice counts once, from
the later log). M3Exam and LoCoMo logs never share a row or a table: each benchmark gets its
own section, LoCoMo's columns named by category (multi-hop, temporal, open-domain, single-hop,
adversarial). Per item the task's scorer stored EM, F1, BLEU-1 (``m3kit.metrics.text_match``
rules) and, where a judge ran, ``llm_judge``. Aggregation follows the paper (Appendix B.2):

- per type: the mean over that type's items; F1, BLEU-1 and LLM-J are not shown for fm and fj
  (the paper prints "–" there);
- Avg: EM over all items; F1, BLEU-1, LLM-J over the items outside fm and fj;
- Overall = 0.5 · LLM-J + (EM + F1 + BLEU-1) / 6, when a judge ran;
- a partial judge (some items of a type or of Avg judged, others not): LLM-J shown as ``k of n
  judged``, Overall not computed, and a note says how many items lack a judge score.

The aggregation itself is ``m3kit.benchmarks.m3exam.score.aggregate_scores``, the function
``m3kit score m3exam`` uses, so a report and an external-prediction score agree.

Cost columns (the paper's Figure 5c axes): prompt tokens and
images sent per question, the share of questions that escalated to raw media, index-build
seconds (once per memory key, summed over keys) and seconds per question.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from pydantic import BaseModel, Field

from m3kit.benchmarks.figures import pyplot
from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.benchmarks.m3exam.load import QUESTION_TYPES, retrieved_rounds
from m3kit.benchmarks.m3exam.locomo import LOCOMO_CATEGORIES, LOCOMO_TYPES
from m3kit.benchmarks.m3exam.score import (
    ItemScore,
    aggregate_scores,
    is_partial,
    judge_gap_note,
    judged_count,
)
from m3kit.benchmarks.protocol import BenchmarkReporting, ReportContext
from m3kit.metrics.retrieval import hit_at_k, mean_defined, recall_at_k
from m3kit.metrics.text_match import ItemKind, item_kind
from m3kit.schema import LoggedSample
from m3kit.schema.evallog import BENCHMARK_KEY, BLIND_KEY, FJ_RULE_KEY, REGIME_KEY, LoggedRun
from m3kit.schema.report import ReportSection, Table

__all__ = [
    "QUESTION_TYPES",
    "REPORTING",
    "ItemRow",
    "SystemSummary",
    "benchmark_of",
    "column_name",
    "cost_table",
    "dataset_of",
    "escalation_table",
    "fj_rule_of",
    "item_rows",
    "per_type_table",
    "retrieval_table",
    "sections",
    "summarize",
    "system_label",
]

_CLOSED_FORM = ("fm", "fj")  # EM only (Appendix B.2)


class ItemRow(ItemScore):
    """One question of one system: its scores (``ItemScore``) and what answering it cost."""

    failed: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    images: int = 0
    escalations: int = 0
    index_seconds: float = 0.0
    memory_key: str | None = None
    seconds: float | None = None
    # Rounds the memory retrieved, best first (item ids ``D3:2/img_7`` folded to ``D3:2``), and
    # the question's supporting-fact rounds: retrieval quality for memory runs.
    retrieved: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


class SystemSummary(BaseModel):
    """A system's per-type and total scores, and its mean costs. A row whose LLM-J is partial
    (some of its items judged, not all) has ``llm_judge`` None and ``llm_judge_partial``,
    ``judge_count`` and ``judgeable_count`` instead (``score.aggregate_scores``)."""

    system: str
    per_type: dict[str, dict[str, float | int | None]]
    total: dict[str, float | int | None]
    cost: dict[str, float | int | None]
    # How fj items were scored: "exact" (the paper), "letter" (m3kit's -T fj_letter=true),
    # "mixed" (pooled logs disagree), None when the logs do not record it.
    fj_rule: str | None = None


def benchmark_of(run: LoggedRun) -> str:
    """``"locomo"`` for LoCoMo runs, else ``"m3exam"`` (from the task's metadata, else its
    name)."""
    named = run.metadata.get(BENCHMARK_KEY) or run.task
    return "locomo" if str(named).rsplit("/", 1)[-1].startswith("locomo") else "m3exam"


def dataset_of(run: LoggedRun) -> str:
    """The dataset a run used: the name of its ``data`` argument (a persona folder, a folder
    of personas, ``locomo10`` for ``locomo10.json``), ``?`` when the log does not say."""
    data = run.task_args.get("data")
    if not data:
        return "?"
    path = Path(str(data))
    return path.stem if path.suffix == ".json" else path.name or str(data)


def fj_rule_of(run: LoggedRun) -> str | None:
    """How the run's scorer read fj answers (``exact`` or ``letter``), ``None`` when the log
    does not record it."""
    rule = run.metadata.get(FJ_RULE_KEY)
    return str(rule) if rule is not None else None


def system_label(run: LoggedRun) -> str:
    """``<model> · <benchmark>/<dataset> · <regime>`` (``(blind)`` appended for blind runs,
    ``(fj letter)`` for runs that scored fj by the stated letter, so they never pool with runs
    scored by the paper's rule)."""
    regime = run.metadata.get(REGIME_KEY) or run.task_args.get("regime") or "?"
    label = f"{run.model} · {benchmark_of(run)}/{dataset_of(run)} · {regime}"
    if run.metadata.get(BLIND_KEY):
        label = f"{label} (blind)"
    return run.labelled(f"{label} (fj letter)" if fj_rule_of(run) == "letter" else label)


def _item(sample: LoggedSample) -> ItemRow:
    item = sample.item if isinstance(sample.item, M3ExamItem) else None
    question = sample.question
    qtype = str((item.question_type if item else None)
                or (question.question_type if question else None) or "?")
    usage = sample.usage
    failed = item is None or sample.failed
    text_type = qtype not in _CLOSED_FORM
    f1 = _opt(item.f1 if item else None, failed and text_type)
    return ItemRow(
        id=sample.id,
        question_type=qtype,
        em=float(item.em) if item else 0.0,
        f1=f1,
        bleu1=_opt(item.bleu1 if item else None, failed and text_type),
        llm_judge=_opt(item.llm_judge if item else None, False),
        kind=item.kind if item else _kind(qtype, f1),
        judged=item.judged if item else text_type,
        in_total=item.in_total if item else text_type,
        failed=failed,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        images=usage.images_sent,
        escalations=usage.raw_media_escalations,
        index_seconds=usage.index_build_seconds,
        memory_key=sample.memory_key,
        seconds=sample.total_seconds,
        retrieved=retrieved_rounds(usage.retrieved_ids),
        evidence=list(question.evidence) if question is not None else [],
    )


def _opt(value: Any, zero_if_missing: bool) -> float | None:
    if value is None:
        return 0.0 if zero_if_missing else None
    return float(value)


def item_rows(runs: Iterable[LoggedRun]) -> dict[str, list[ItemRow]]:
    """Items by system, over every run."""
    pooled: dict[str, dict[str, ItemRow]] = {}
    for run in runs:
        system = system_label(run)
        for sample in run.samples:
            row = _item(sample)
            pooled.setdefault(system, {})[row.id] = row
    return {system: list(rows.values()) for system, rows in pooled.items()}


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def _kind(qtype: str, f1: float | None) -> ItemKind:
    # Logs whose scorer did not store the rule family: read it off the type (and, for fm,
    # whether the item got an F1, which only text-gold fm items do).
    if qtype == "fm":
        return "fm_text" if f1 is not None else "fm_image"
    return item_kind(qtype, [])


# A partial judge's numbers (``score.aggregate_scores``): what a row carries instead of LLM-J.
_PARTIAL = ("llm_judge_partial", "judge_count", "judgeable_count")


def summarize(system: str, rows: Sequence[ItemRow], fj_rule: str | None = None,
              wall_seconds: float | None = None) -> SystemSummary:
    """Per-type and total scores, aggregated by ``m3kit.benchmarks.m3exam.score`` (the same
    rules ``m3kit score m3exam`` applies), and mean costs; ``fj_rule`` is how the items' fj
    EM was scored (see ``SystemSummary``).

    Time per question is ``wall_seconds`` (the system's runs, start to finish) over its
    questions, not the mean of the samples' own times: samples run concurrently
    (``--max-connections``), and each sample's time includes the waits for the others, so
    that mean was several times the real time per question (2.6× measured, 4 at once on 2
    cores). ``latency_seconds`` is that mean: one question's time from start to answer."""
    scores = aggregate_scores(rows)
    per_type = {t: {"count": v["count"], "em": v["em"], "f1": v.get("f1"),
                    "bleu1": v.get("bleu1"), "llm_judge": v.get("llm_judge"),
                    **{k: v[k] for k in _PARTIAL if k in v}}
                for t, v in scores["per_type"].items()}
    total = {k: scores["total"].get(k) for k in ("count", "em", "f1", "bleu1", "llm_judge",
                                                 "overall")}
    total.update({k: scores["total"][k] for k in _PARTIAL if k in scores["total"]
                  and is_partial(scores["total"])})
    index: dict[str, float] = {}
    for r in rows:  # one build per memory key: every sample of the key reports the same build
        key = r.memory_key or r.id
        index[key] = max(index.get(key, 0.0), r.index_seconds)
    times = [r.seconds for r in rows if r.seconds is not None]
    per_question = wall_seconds / len(rows) if wall_seconds is not None and rows else None
    cost: dict[str, float | int | None] = {
        "questions": len(rows),
        "failed": sum(r.failed for r in rows),
        "prompt_tokens": _mean([r.prompt_tokens for r in rows]),
        "completion_tokens": _mean([r.completion_tokens for r in rows]),
        "images": _mean([r.images for r in rows]),
        "escalation_rate": _mean([float(r.escalations > 0) for r in rows]),
        "index_seconds": sum(index.values()),
        "seconds_per_question": per_question,
        "latency_seconds": _mean(times),
    }
    return SystemSummary(system=system, per_type=per_type, total=total, cost=cost,
                         fj_rule=fj_rule)


def _type_order(qtype: str) -> tuple[int, str]:
    # M3Exam's paper order, then LoCoMo's categories 1-5 (the two never share a table).
    order = QUESTION_TYPES + LOCOMO_TYPES
    return (order.index(qtype) if qtype in order else len(order), qtype)


def _types_of(summaries: Sequence[SystemSummary]) -> list[str]:
    seen = {t for s in summaries for t in s.per_type}
    return sorted(seen, key=_type_order)


def column_name(qtype: str) -> str:
    """A type's column heading: M3Exam's code uppercased (``SS``), a LoCoMo category by name
    (``5`` -> ``adversarial``)."""
    if qtype in LOCOMO_TYPES:
        return LOCOMO_CATEGORIES[int(qtype)]
    return qtype.upper()


_TITLES = {"m3exam": "M3Exam", "locomo": "LoCoMo"}


_METRICS = (("EM", "em"), ("F1", "f1"), ("BLEU-1", "bleu1"), ("LLM-J", "llm_judge"))


def _metric_cell(row: Mapping[str, Any], key: str) -> Any:
    """A metric's cell: its value; for a partial judge's LLM-J, ``k of n judged``."""
    if key == "llm_judge":
        return judged_count(row) or row.get(key)
    return row.get(key)


def per_type_table(summaries: Sequence[SystemSummary], benchmark: str = "m3exam") -> Table:
    """The paper's Table 4 layout: one row per system and metric, one column per type (LoCoMo:
    per category), Avg; then Overall per system."""
    types = _types_of(summaries)
    rows: list[list[Any]] = []
    for summary in summaries:
        for label, key in _METRICS:
            cells = [_metric_cell(summary.per_type.get(t, {}), key) for t in types]
            total = _metric_cell(summary.total, key)
            if key == "llm_judge" and all(c is None for c in cells) and total is None:
                continue  # no judge ran for this system: no empty LLM-J row
            rows.append([summary.system, label, *cells, total])
        if summary.total["overall"] is not None:
            rows.append([summary.system, "Overall", *([None] * len(types)),
                         summary.total["overall"]])
        elif is_partial(summary.total):
            rows.append([summary.system, "Overall", *([None] * len(types)),
                         "not computed: LLM-J partial"])
    if benchmark == "locomo":
        title = "LoCoMo: scores by category"
        caption = ("Avg.: every metric over all items. Adversarial items score 1 on EM, F1, "
                   "BLEU-1 (and LLM-J when a judge ran) only when the answer says the "
                   "information is not available, as LoCoMo's released evaluation scores them. "
                   "Overall = 0.5·LLM-J + (EM + F1 + BLEU-1)/6, shown when a judge ran.")
    else:
        rules = sorted({s.fj_rule or "not recorded" for s in summaries})
        title = f"M3Exam: scores by question type (FJ EM rule: {', '.join(rules)})"
        caption = ("Avg.: EM over all items; F1, BLEU-1 and LLM-J over items outside FM and FJ "
                   "(paper Appendix B.2). Overall = 0.5·LLM-J + (EM + F1 + BLEU-1)/6, shown "
                   "when a judge scored the items (m3kit score m3exam --judge-model). FJ EM "
                   "rule exact: the whole normalised answer must be the gold letter, as the "
                   "paper scores it; letter: the option letter the answer states (m3kit's "
                   "addition, -T fj_letter=true).")
    if any(is_partial(s.total) for s in summaries):
        caption += (" A system with only some items judged shows LLM-J as judged counts "
                    "(k of n judged), never as a mean over that subset, and no Overall.")
    return Table(
        title=title,
        columns=["System", "Metric", *[column_name(t) for t in types], "Avg."],
        rows=rows,
        decimals=4,
        caption=caption,
    )


def cost_table(summaries: Sequence[SystemSummary], benchmark: str = "m3exam") -> Table:
    """Per system: questions, failures, tokens, images, escalations, index and answer time."""
    rows = [[s.system, s.cost["questions"], s.cost["failed"], s.total["em"],
             s.cost["prompt_tokens"], s.cost["completion_tokens"], s.cost["images"],
             _pct(s.cost["escalation_rate"]), s.cost["index_seconds"],
             s.cost["seconds_per_question"]] for s in summaries]
    return Table(
        title=f"{_TITLES.get(benchmark, benchmark)}: cost per question",
        columns=["System", "Questions", "Failed", "EM", "Prompt tok/q", "Completion tok/q",
                 "Images/q", "Escalated %", "Index s", "s/q"],
        rows=rows,
        decimals=2,
        caption=("Tokens as the model reports them (m3kit/builtin counts words); images: "
                 "images and PDF pages sent; escalated: questions whose memory went back to "
                 "raw media; index s: memory index builds, once per memory key; s/q: the "
                 "runs' wall-clock time over their questions (questions run concurrently, "
                 "so one question's own time, start to answer, is longer: the JSON's "
                 "latency_seconds)."),
    )


def _pct(value: float | None) -> float | None:
    return None if value is None else 100.0 * float(value)


def escalation_table(
    by_system: Mapping[str, Sequence[ItemRow]], benchmark: str = "m3exam"
) -> Table | None:
    """Share of questions escalated to raw media, by type (memories that escalate only)."""
    systems = {s: rows for s, rows in by_system.items() if any(r.escalations for r in rows)}
    if not systems:
        return None
    types = sorted({r.question_type for rows in systems.values() for r in rows}, key=_type_order)
    table_rows = []
    for system, rows in systems.items():
        cells = []
        for t in types:
            members = [r for r in rows if r.question_type == t]
            cells.append(_pct(_mean([float(r.escalations > 0) for r in members])))
        table_rows.append([system, *cells])
    return Table(title=f"{_TITLES.get(benchmark, benchmark)}: escalation rate by "
                       f"{'category' if benchmark == 'locomo' else 'question type'} (%)",
                 columns=["System", *[column_name(t) for t in types]], rows=table_rows,
                 decimals=1)


RETRIEVAL_KS = (5, 10, 15)


def retrieval_table(
    by_system: Mapping[str, Sequence[ItemRow]], benchmark: str = "m3exam"
) -> Table | None:
    """Supporting-fact recall@k and hit@k of the rounds each memory retrieved (systems whose
    answers list retrieved records only; questions without supporting facts are left out)."""
    rows = []
    for system, items in by_system.items():
        if not any(r.retrieved for r in items):
            continue
        asked = [r for r in items if r.evidence]
        cells = [mean_defined(recall_at_k(r.retrieved, r.evidence, k) for r in asked)
                 for k in RETRIEVAL_KS]
        cells += [mean_defined(hit_at_k(r.retrieved, r.evidence, k) for r in asked)
                  for k in RETRIEVAL_KS]
        rows.append([system, len(asked), *cells])
    if not rows:
        return None
    return Table(
        title=f"{_TITLES.get(benchmark, benchmark)}: retrieval of supporting-fact rounds",
        columns=["System", "Questions", *[f"recall@{k}" for k in RETRIEVAL_KS],
                 *[f"hit@{k}" for k in RETRIEVAL_KS]],
        rows=rows,
        decimals=3,
        caption=("Distinct rounds in the memory's ranking (an image or page counts as its "
                 "round, a summary takes no slot); recall: share of a question's "
                 "supporting-fact rounds among the top k; hit: any of them is."),
    )


def _figures(summaries: Sequence[SystemSummary], out_dir: Path, benchmark: str) -> list[str]:
    plt = pyplot()

    out_dir.mkdir(parents=True, exist_ok=True)
    types = _types_of(summaries)
    names: list[str] = []
    fig, axes = plt.subplots(2, 1, figsize=(max(6.0, 1.1 * len(types) + 2), 6.4), sharex=True)
    width = 0.8 / max(len(summaries), 1)
    for ax, key, label in ((axes[0], "em", "EM"), (axes[1], "f1", "F1 (not FM/FJ)")):
        for n, summary in enumerate(summaries):
            values = [summary.per_type.get(t, {}).get(key) or 0.0 for t in types]
            ax.bar([i + n * width for i in range(len(types))], values, width,
                   label=summary.system)
        ax.set_ylabel(label)
        ax.set_ylim(0, 1)
    axes[1].set_xticks([i + width * (len(summaries) - 1) / 2 for i in range(len(types))],
                       [column_name(t) for t in types])
    title = _TITLES.get(benchmark, benchmark)
    axes[0].set_title(f"{title} by {'category' if benchmark == 'locomo' else 'question type'}")
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(out_dir / f"{benchmark}_em_by_type.png", dpi=110)
    plt.close(fig)
    names.append(f"{benchmark}_em_by_type.png")

    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for summary in summaries:
        tokens = summary.cost["prompt_tokens"] or 0.0
        em = summary.total["em"] or 0.0
        ax.scatter([max(float(tokens), 1.0)], [em], s=40)
        ax.annotate(summary.system, (max(float(tokens), 1.0), em), fontsize=7,
                    xytext=(4, 4), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("prompt tokens per question (log)")
    ax.set_ylabel("EM (all items)")
    ax.set_title(f"{title} cost vs score")
    fig.tight_layout()
    fig.savefig(out_dir / f"{benchmark}_cost.png", dpi=110)
    plt.close(fig)
    names.append(f"{benchmark}_cost.png")
    return names


def sections(context: ReportContext) -> list[ReportSection]:
    """The report contract: one section per benchmark (M3Exam, LoCoMo), each with its
    per-type table, cost table, retrieval quality and escalations by type (memory runs), two
    figures."""
    by_benchmark: dict[str, list[LoggedRun]] = {}
    for run in context.runs:
        by_benchmark.setdefault(benchmark_of(run), []).append(run)
    if not by_benchmark:
        by_benchmark["m3exam"] = []
    return [_section(name, group, Path(context.out_dir)) for name, group in by_benchmark.items()]


def _one_rule(rules: set[str | None]) -> str | None:
    if len(rules) > 1:
        return "mixed"
    return next(iter(rules), None)


def _section(benchmark: str, runs: Sequence[LoggedRun], out_dir: Path) -> ReportSection:
    title = _TITLES.get(benchmark, benchmark)
    by_system = item_rows(runs)
    if not by_system:
        return ReportSection(benchmark=benchmark, title=title,
                             notes=[f"The {title} logs hold no samples."])
    rules: dict[str, set[str | None]] = {}
    for run in runs:
        rules.setdefault(system_label(run), set()).add(fj_rule_of(run))
    walls: dict[str, float | None] = {}
    for run in runs:
        label = system_label(run)
        before = walls.get(label, 0.0)
        walls[label] = (None if before is None or run.wall_seconds is None
                        else before + run.wall_seconds)
    summaries = [summarize(system, rows, _one_rule(rules.get(system, set())),
                           walls.get(system))
                 for system, rows in by_system.items()]
    tables = [per_type_table(summaries, benchmark), cost_table(summaries, benchmark)]
    for extra in (retrieval_table(by_system, benchmark), escalation_table(by_system, benchmark)):
        if extra is not None:
            tables.append(extra)
    notes = []
    failed = {s.system: s.cost["failed"] for s in summaries if s.cost["failed"]}
    for system, count in failed.items():
        notes.append(f"{system}: {count} question(s) got no answer and count as 0.")
    for summary in summaries:
        gap = judge_gap_note(summary.total, "a judge scores them all (m3kit eval -T "
                             "judge_model=..., or m3kit score m3exam --judge-model).")
        notes += [f"{summary.system}: {gap}"] if gap else []
    if any(math.isnan(float(s.total["em"] or 0.0)) for s in summaries):
        notes.append("Some systems have no scored items.")
    return ReportSection(benchmark=benchmark, title=title, tables=tables,
                         figures=_figures(summaries, out_dir, benchmark), notes=notes)


REPORTING = BenchmarkReporting(sections=sections, system_label=system_label)
