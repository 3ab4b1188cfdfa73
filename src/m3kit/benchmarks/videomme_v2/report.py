"""Video-MME-v2's report: the leaderboard's columns with and without subtitles, the details
behind them, and a radar of second-head scores.

The leaderboard (seed 001): Model, Frames, then Non-Lin Score, Level 1-3, Capability Consistency
(``relevance_score``), Reasoning Coherence (``logic_score``) and Avg Acc, each "w. sub" and
"wo sub". A run's subtitle condition is its task metadata ``m3kit_subtitles``: ``none`` fills the
"wo sub" cells, ``concat`` the "w. sub" cells, and ``interleave`` a row of its own marked
``[interleaved]`` (with the same model's "wo sub" beside it). A blind run (``m3kit_blind``) is
``<model> (blind)``, a run with subtitles but no frames (``m3kit_frames`` 0) ``<model> (no
frames)``, a run with the reasoning prompt (``m3kit_reasoning``) ``<model> (reasoning)``, each
placed right after its model's full rows. Logs with the same model, blind flag, subtitle mode,
frames (or fps) and reasoning flag are one run (a killed run and its ``--resume``, a rerun, shards):
each sample counted once, from the later-started log (``m3kit.report.pooling``). Groups whose
video or subtitles could not be read are excluded from a run's numbers and named in a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from m3kit.benchmarks.figures import pyplot
from m3kit.benchmarks.protocol import BenchmarkReporting, ReportContext
from m3kit.benchmarks.videomme_v2.load import BENCHMARK_NAME
from m3kit.benchmarks.videomme_v2.score import (
    VideoMMEv2Score,
    incomplete_note,
    scores_from_log,
)
from m3kit.schema.evallog import (
    BLIND_KEY,
    FRAMES_KEY,
    MEMORY_NAME_KEY,
    REASONING_KEY,
    SUBTITLES_KEY,
    LoggedRun,
)
from m3kit.schema.report import ReportSection, Table

__all__ = ["RADAR_FIGURE", "REPORTING", "Run", "leaderboard_table", "radar",
           "run_settings", "runs_from", "sections", "system_label"]

RADAR_FIGURE = "videomme_v2_radar_second_head.png"
BLIND = " (blind)"
NO_FRAMES = " (no frames)"
REASONING = " (reasoning)"
LEADERBOARD_METRICS = (
    ("Non-Lin Score", "total"), ("Level 1", "level_1"), ("Level 2", "level_2"),
    ("Level 3", "level_3"), ("Consistency", "relevance_score"),
    ("Coherence", "logic_score"), ("Avg Acc", "avg_acc"),
)
BUG_NOTE = (
    "Failed answer extractions count as wrong. The released evaluation script stores -1 for "
    "them, which its logic scoring reads as correct and its relevance count subtracts; m3kit "
    "does not copy that (docs/metrics.md)."
)


class Run:
    """One scored eval log: who ran, under which condition, and its numbers."""

    def __init__(self, model: str, blind: bool, subtitles: str, frames: str,
                 score: VideoMMEv2Score, incomplete: int, reasoning: bool = False) -> None:
        self.model = model
        self.reasoning = reasoning
        self.blind = blind
        self.subtitles = subtitles
        self.frames = frames
        self.score = score
        self.incomplete = incomplete

    @property
    def label(self) -> str:
        # a reasoning-prompt run is another system: its own rows, never pooled with the plain
        model = f"{self.model}{REASONING}" if self.reasoning else self.model
        if self.blind:
            return f"{model}{BLIND}"
        return f"{model}{NO_FRAMES}" if self.frames == "0" else model

    @property
    def name(self) -> str:
        """The run in detail tables and the radar's legend."""
        condition = "no subtitles" if self.subtitles == "none" else f"subtitles {self.subtitles}"
        return f"{self.label} · {self.frames} frames · {condition}"


def run_settings(run: LoggedRun) -> tuple[str, bool, str, str, bool]:
    """What a run's row is named by: model, blind flag, subtitle mode, frames (a count or
    ``"<fps> fps"``) and the reasoning prompt; logs alike in these are one system."""
    meta: dict[str, Any] = run.metadata
    args: dict[str, Any] = run.task_args
    blind = bool(meta.get(BLIND_KEY, args.get("blind", False)))
    subtitles = "none" if blind else str(meta.get(SUBTITLES_KEY, args.get("subtitles", "none")))
    frames = str(meta.get(FRAMES_KEY, args.get("frames", 64)))
    reasoning = bool(meta.get(REASONING_KEY, args.get("reasoning", False)))
    # a run through a memory is another system: ``<model> + <memory>``
    memory = meta.get(MEMORY_NAME_KEY) or args.get("memory")
    model = f"{run.model} + {memory}" if memory and memory != "none" else run.model
    # settings beyond these that set the run apart (``m3kit.report.pooling``), in its label
    return run.labelled(model), blind, subtitles, frames, reasoning


def system_label(run: LoggedRun) -> str:
    """A run's label where runs are named and pooled (the report's cards, ``m3kit compare``):
    its model (and memory), then the settings that make it another system,
    ``m3kit/builtin · subtitles concat · 64 frames`` (``· blind``, ``· reasoning`` where set)."""
    model, blind, subtitles, frames, reasoning = run_settings(run)
    shown = frames if frames.endswith("fps") else f"{frames} frames"
    return " · ".join([model, *(["blind"] if blind else []), f"subtitles {subtitles}", shown,
                       *(["reasoning"] if reasoning else [])])


def runs_from(logged: Sequence[LoggedRun]) -> list[Run]:
    """Score each system of ``videomme_v2`` runs: runs with the same settings (a killed run and
    its ``--resume``, a rerun) arrive pooled into one (``run_settings`` is their key)."""
    out = []
    for logged_run in logged:
        model, blind, subtitles, frames, reasoning = run_settings(logged_run)
        score = scores_from_log(logged_run.samples)
        out.append(Run(model=model, blind=blind, subtitles=subtitles, frames=frames,
                       score=score, incomplete=len(score.incomplete_groups),
                       reasoning=reasoning))
    return out


def _ordered_rows(runs: Sequence[Run]) -> list[tuple[str, str, Run | None, Run | None]]:
    """(row name, frames, w. sub run, wo sub run), each model's blind rows after its own."""
    keys: list[tuple[str, str]] = []
    table: dict[tuple[str, str], dict[str, Run]] = {}
    for run in runs:
        key = (run.label, run.frames)
        if key not in table:
            keys.append(key)
            table[key] = {}
        table[key][run.subtitles] = run  # one run per condition: runs_from_logs pooled them

    def base(label: str) -> str:
        return label.removesuffix(BLIND).removesuffix(NO_FRAMES)

    def order(key: tuple[str, str]) -> tuple[int, int]:
        first = next(i for i, k in enumerate(keys) if base(k[0]) == base(key[0]))
        return first, int(key[0].endswith(NO_FRAMES)) + 2 * int(key[0].endswith(BLIND))

    rows: list[tuple[str, str, Run | None, Run | None]] = []
    for key in sorted(keys, key=order):
        by_mode = table[key]
        without = by_mode.get("none")
        with_modes = [m for m in ("concat", "interleave") if m in by_mode]
        if not with_modes:
            rows.append((key[0], key[1], None, without))
        for mode in with_modes:
            name = key[0] if mode == "concat" else f"{key[0]} [interleaved]"
            rows.append((name, key[1], by_mode[mode], without))
    return rows


def _value(run: Run | None, key: str) -> float | None:
    return None if run is None else getattr(run.score, key)


def leaderboard_table(runs: Sequence[Run]) -> Table:
    """The seed's leaderboard columns, "w. sub" beside "wo sub" for each metric."""
    columns = ["Model", "Frames"]
    for title, _ in LEADERBOARD_METRICS:
        columns += [f"{title} (w. sub)", f"{title} (wo sub)"]
    body = []
    for name, frames, with_sub, without in _ordered_rows(runs):
        row: list[Any] = [name, frames]
        for _, key in LEADERBOARD_METRICS:
            row += [_value(with_sub, key), _value(without, key)]
        body.append(row)
    cut = [run for run in runs if run.incomplete or run.score.n_excluded_groups]
    caption = ("Each run's scores are over its complete, readable groups only; the runs with "
               "groups left out name them under the tables (details: groups, incomplete "
               "groups, excluded groups)." if cut else "")
    return Table(title="Video-MME-v2 leaderboard (0-100)", columns=columns, rows=body,
                 caption=caption)


def details_table(runs: Sequence[Run]) -> Table:
    """What stands behind the leaderboard: linear consistency, the Non-Lin / Avg Acc ratio,
    Q1-Q4 accuracy per group type, the mean and variance of Q1-Q4 accuracy in relevance
    groups, and the counts of failed extractions, failed samples, incomplete and excluded
    groups."""
    body = []
    for run in runs:
        s = run.score
        rel = s.position_accuracy.get("relevance", [None] * 4)
        logic = s.position_accuracy.get("logic", [None] * 4)
        body.append([run.name, s.n_groups, s.relevance_linear_score, s.non_lin_over_avg_acc,
                     *rel, *logic, s.relevance_accuracy_mean, s.relevance_accuracy_variance,
                     s.n_failed_extraction, s.n_failed, run.incomplete,
                     s.n_excluded_groups])
    return Table(
        title="Video-MME-v2 details",
        columns=["run", "groups", "consistency (linear)", "Non-Lin / Avg Acc %",
                 *(f"consistency Q{i} acc" for i in range(1, 5)),
                 *(f"coherence Q{i} acc" for i in range(1, 5)),
                 "consistency Q1-Q4 mean", "consistency Q1-Q4 variance",
                 "failed extractions", "failed samples", "incomplete groups",
                 "excluded groups"],
        rows=body,
    )


def heads_table(runs: Sequence[Run], which: str) -> Table:
    """Scores by second (or third) head, one column per run."""
    names: list[str] = []
    for run in runs:
        names += [h for h in getattr(run.score, which) if h not in names]
    rows = [[h, *(getattr(r.score, which).get(h) for r in runs)] for h in sorted(names)]
    title = "second" if which == "second_head" else "third"
    return Table(title=f"Video-MME-v2 by {title} head", columns=["head", *(r.name for r in runs)],
                 rows=rows)


def radar(runs: Sequence[Run], path: Path) -> Path | None:
    """A radar of second-head scores (one polygon per run) as PNG; None without heads."""
    heads = sorted({h for run in runs for h in run.score.second_head})
    if not heads:
        return None
    plt = pyplot()
    import numpy as np

    angles = np.linspace(0, 2 * np.pi, len(heads), endpoint=False).tolist()
    fig, ax = plt.subplots(figsize=(7, 7), subplot_kw={"projection": "polar"})
    for run in runs:
        values = [run.score.second_head.get(h, 0.0) for h in heads]
        ax.plot([*angles, angles[0]], [*values, values[0]], label=run.name)
        ax.fill([*angles, angles[0]], [*values, values[0]], alpha=0.1)
    ax.set_xticks(angles)
    ax.set_xticklabels(heads, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_title("Video-MME-v2: Non-Lin Score by second head")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def sections(context: ReportContext) -> list[ReportSection]:
    """The Video-MME-v2 section of ``m3kit report``; writes the radar PNG into
    ``context.out_dir``."""
    runs = runs_from(context.runs)
    if not runs:
        return []
    figure = radar(runs, Path(context.out_dir) / RADAR_FIGURE)
    notes = [BUG_NOTE]
    for run in runs:
        cut = incomplete_note(run.score, run.name)
        notes += [f"{cut}."] if cut else []
    for run in runs:
        if run.score.excluded_groups:
            notes.append(f"{run.name}: {run.score.n_excluded_groups} group(s) excluded, their "
                         "video or subtitles unreadable: "
                         f"{', '.join(run.score.excluded_groups)}.")
    return [ReportSection(
        benchmark=BENCHMARK_NAME,
        title="Video-MME-v2",
        tables=[leaderboard_table(runs), details_table(runs), heads_table(runs, "second_head"),
                heads_table(runs, "third_head")],
        figures=[figure.name] if figure is not None else [],
        notes=notes,
    )]


REPORTING = BenchmarkReporting(sections=sections, system_label=system_label)
