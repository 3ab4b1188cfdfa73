"""SuperMemory-VQA's data set statistics (seed 003 §3.5, appendix E): questions per skill, the
answerable share, the temporal gap between the answer's evidence and the question, and the
evidence count and duration per question, over loaded questions.

The temporal gap of a question is its time minus the end of its latest answer-evidence span on
the absolute clock (appendix E: "the time elapsed between a user asking a question and when the
evidence required to answer it was recorded"); a span of a video whose start no record gives is
left out of it. Unanswerable questions often carry no evidence: they count in the shares, not in
the evidence numbers.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from statistics import fmean, median

from pydantic import BaseModel, Field

from m3kit.schema import Question
from m3kit.schema.report import Table

__all__ = ["GAP_BUCKETS", "DatasetStats", "SkillStats", "dataset_stats", "stats_tables"]

# Temporal-gap bins (upper bounds in seconds): appendix E's "minutes to an hour" range and its
# "over a week" tail.
GAP_BUCKETS: tuple[tuple[str, float], ...] = (
    ("< 1 min", 60.0), ("1-10 min", 600.0), ("10-60 min", 3600.0), ("1-24 h", 86400.0),
    ("1-7 days", 7 * 86400.0), ("> 7 days", float("inf")),
)


class SkillStats(BaseModel):
    """One skill's questions: count, share of all (%), answerable share (%), mean evidence
    spans and mean / median evidence seconds per question with evidence."""

    n: int
    share: float
    answerable: float
    evidence_count_mean: float | None = None
    evidence_seconds_mean: float | None = None
    evidence_seconds_median: float | None = None


class DatasetStats(BaseModel):
    """Appendix E over a set of questions."""

    n: int
    n_persons: int
    n_videos: int
    answerable: float | None  # % of questions
    by_skill: dict[str, SkillStats] = Field(default_factory=dict)
    gap_seconds_median: float | None = None
    gap_seconds_quartiles: tuple[float, float] | None = None
    gap_buckets: dict[str, int] = Field(default_factory=dict)
    evidence_count: dict[str, int] = Field(default_factory=dict)  # spans per question -> n
    evidence_seconds_median: float | None = None


def _spans(question: Question) -> list[Mapping[str, float | str]]:
    return list(question.metadata.get("answer_spans") or [])


def _gap(question: Question) -> float | None:
    starts: Mapping[str, float] = question.metadata.get("video_starts") or {}
    ends = [float(starts[str(s["video_id"])]) + float(s["end"]) for s in _spans(question)
            if str(s["video_id"]) in starts]
    if not ends or question.time is None:
        return None
    return question.time - max(ends)


def _quartiles(values: Sequence[float]) -> tuple[float, float] | None:
    if len(values) < 2:
        return None
    ordered = sorted(values)
    half = len(ordered) // 2
    return median(ordered[:half]), median(ordered[-half:])


def dataset_stats(questions: Sequence[Question]) -> DatasetStats:
    """Appendix E's statistics of ``questions`` (as loaded)."""
    n = len(questions)
    by_skill: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        by_skill[str(q.metadata.get("skill"))].append(q)
    skills = {}
    for skill, group in by_skill.items():
        evidenced = [q for q in group if _spans(q)]
        seconds = [sum(float(s["end"]) - float(s["start"]) for s in _spans(q)) for q in evidenced]
        skills[skill] = SkillStats(
            n=len(group), share=100.0 * len(group) / n,
            answerable=100.0 * sum(bool(q.metadata.get("is_answerable")) for q in group)
            / len(group),
            evidence_count_mean=fmean(len(_spans(q)) for q in evidenced) if evidenced else None,
            evidence_seconds_mean=fmean(seconds) if seconds else None,
            evidence_seconds_median=median(seconds) if seconds else None,
        )
    gaps = [g for q in questions if (g := _gap(q)) is not None]
    buckets = dict.fromkeys((name for name, _ in GAP_BUCKETS), 0)
    for gap in gaps:
        buckets[next(name for name, bound in GAP_BUCKETS if gap < bound)] += 1
    counts: dict[str, int] = defaultdict(int)
    for q in questions:
        if _spans(q):
            counts[str(len(_spans(q)))] += 1
    durations = [sum(float(s["end"]) - float(s["start"]) for s in _spans(q))
                 for q in questions if _spans(q)]
    return DatasetStats(
        n=n,
        n_persons=len({q.metadata.get("subject") for q in questions}),
        n_videos=len({q.metadata.get("primary_video_id") for q in questions}),
        answerable=100.0 * sum(bool(q.metadata.get("is_answerable")) for q in questions) / n
        if n else None,
        by_skill=dict(sorted(skills.items())),
        gap_seconds_median=median(gaps) if gaps else None,
        gap_seconds_quartiles=_quartiles(gaps),
        gap_buckets=buckets,
        evidence_count=dict(sorted(counts.items(), key=lambda kv: int(kv[0]))),
        evidence_seconds_median=median(durations) if durations else None,
    )


def _shown(value: float | None) -> float | None:
    """A figure as a table shows it (one decimal); the JSON keeps every digit."""
    return None if value is None else round(value, 1)


def stats_tables(stats: DatasetStats) -> list[Table]:
    """The statistics as tables: per skill, temporal gaps, evidence counts."""
    skills = Table(
        title=f"SuperMemory-VQA data: {stats.n} questions, {stats.n_persons} persons, "
              f"{stats.n_videos} question videos, {stats.answerable or 0:.1f}% answerable",
        columns=["skill", "n", "share %", "answerable %", "spans", "evidence s",
                 "median s"],
        rows=[[k.replace("_", " "), v.n,
               *(_shown(x) for x in (v.share, v.answerable, v.evidence_count_mean,
                                     v.evidence_seconds_mean, v.evidence_seconds_median))]
              for k, v in stats.by_skill.items()],
        caption="spans: evidence spans per question (mean); evidence s: their total duration "
                "(mean, median)")
    gaps = Table(title="Temporal gap between the answer's evidence and the question",
                 columns=["gap", "questions"],
                 rows=[[k, v] for k, v in stats.gap_buckets.items()],
                 caption=f"median {stats.gap_seconds_median or 0:.0f} s")
    counts = Table(title="Evidence spans per question", columns=["spans", "questions"],
                   rows=[[k, v] for k, v in stats.evidence_count.items()])
    return [skills, gaps, counts]
