"""``m3kit report --layout cost``: what each memory run cost, for runs of any benchmark (the
M3Exam paper's Fig. 5(c) sets index-build cost against per-query tokens).

One row per system (``m3kit.report.memory_rows``), from its samples' ``Usage``:

- ingestion, summed over the samples: each sample's ``ingest_*`` is the feed its question
  caused (``m3kit.memory.stream``), so their sum is the run's whole ingestion (events fed,
  the memory's own model calls, their prompt and completion tokens, seconds, replays);
- index-build seconds once per memory key: every sample of a key repeats its index's build
  time, so the key's is taken once (its largest), and the keys' are summed (a sample without a
  key is its own key);
- per question, the means over the answered samples (neither failed nor excluded, as every
  cost m3kit prints): prompt and completion tokens of the answer, images sent, and one
  question's own time, start to answer (``latency_seconds``); ``seconds_per_question`` is the
  run's wall-clock time over its questions instead, since questions run concurrently and each
  one's own time includes its waits (the M3Exam report's ``s/q``);
- ``failed``: samples that got no answer (excluded ones included).

Nothing is rounded in the records; the table prints two decimals.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean

from pydantic import BaseModel, ConfigDict

from m3kit.benchmarks import Benchmark
from m3kit.report.memory_rows import RunIdentity, flag_models, model_note, run_identity
from m3kit.schema.evallog import LoggedRun, LoggedSample, answered
from m3kit.schema.report import ReportSection, Table

__all__ = ["CostRow", "cost_row", "cost_rows", "cost_section", "cost_table"]


class CostRow(BaseModel):
    """One system's cost (see the module docstring for each number); ``None`` where a mean has
    no sample to average, or the run's wall-clock time is not recorded."""

    model_config = ConfigDict(frozen=True)

    run: RunIdentity
    questions: int
    failed: int
    memory_keys: int
    ingest_events: int
    ingest_calls: int
    ingest_prompt_tokens: int
    ingest_completion_tokens: int
    ingest_tokens: int
    index_build_seconds: float
    ingest_seconds: float
    ingest_replays: int
    calls_per_question: float | None
    prompt_tokens_per_question: float | None
    completion_tokens_per_question: float | None
    images_per_question: float | None
    seconds_per_question: float | None
    latency_seconds: float | None


def _mean(values: Sequence[float]) -> float | None:
    return fmean(values) if values else None


def _index_seconds(samples: Sequence[LoggedSample]) -> tuple[int, float]:
    """How many memory keys the samples ask, and their index builds' seconds, each key's
    counted once."""
    builds: dict[str, float] = {}
    for sample in samples:
        key = sample.memory_key or sample.id
        builds[key] = max(builds.get(key, 0.0), sample.usage.index_build_seconds)
    return len(builds), sum(builds.values())


def _wall_seconds(run: LoggedRun) -> float | None:
    """The run's wall-clock seconds: each task's run's, summed; ``None`` when one is not
    recorded (a killed run has no end)."""
    walls = [part.wall_seconds for part in run.tasks()]
    return None if any(w is None for w in walls) else sum(w for w in walls if w is not None)


def cost_row(identity: RunIdentity, run: LoggedRun) -> CostRow:
    """The cost of one system's pooled ``run``, labelled by ``identity``."""
    samples = run.samples
    usages = [s.usage for s in samples]
    replied = answered(samples)
    keys, index_seconds = _index_seconds(samples)
    wall = _wall_seconds(run)
    prompt = sum(u.ingest_prompt_tokens for u in usages)
    completion = sum(u.ingest_completion_tokens for u in usages)
    times = [s.total_seconds for s in replied if s.total_seconds is not None]
    return CostRow(
        run=identity,
        questions=len(samples),
        failed=sum(s.failed for s in samples),
        memory_keys=keys,
        ingest_events=sum(u.ingest_events for u in usages),
        ingest_calls=sum(u.ingest_calls for u in usages),
        ingest_prompt_tokens=prompt,
        ingest_completion_tokens=completion,
        ingest_tokens=prompt + completion,
        index_build_seconds=index_seconds,
        ingest_seconds=sum(u.ingest_seconds for u in usages),
        ingest_replays=sum(u.ingest_replays for u in usages),
        calls_per_question=_mean([s.usage.model_calls for s in replied]),
        prompt_tokens_per_question=_mean([s.usage.prompt_tokens for s in replied]),
        completion_tokens_per_question=_mean([s.usage.completion_tokens for s in replied]),
        images_per_question=_mean([s.usage.images_sent for s in replied]),
        seconds_per_question=wall / len(samples) if wall is not None and samples else None,
        latency_seconds=_mean(times),
    )


def cost_rows(benchmark: Benchmark, runs: Sequence[LoggedRun]) -> list[CostRow]:
    """One row per system of ``benchmark`` (``runs``: one per system, as
    ``m3kit.report.inputs.pooled_runs`` gives them), in their order, the rows whose answer
    model is not the table's flagged (``memory_rows.flag_models``)."""
    identities = flag_models([run_identity(benchmark, run) for run in runs])
    return [cost_row(identity, run) for identity, run in zip(identities, runs, strict=True)]


COLUMNS = ["System", "Model", "Memory", "Questions", "Failed", "Ingest calls", "Ingest tokens",
           "Index s", "Ingest s", "Replays", "Calls/q", "Prompt tok/q", "Completion tok/q", "s/q",
           "Images/q"]


def cost_table(title: str, rows: Sequence[CostRow]) -> Table:
    """The rows as a table, two decimals."""
    return Table(
        title=title, columns=list(COLUMNS), decimals=2,
        rows=[[r.run.label, r.run.model, r.run.memory or "none", r.questions, r.failed,
               r.ingest_calls, r.ingest_tokens, r.index_build_seconds, r.ingest_seconds,
               r.ingest_replays, r.calls_per_question, r.prompt_tokens_per_question,
               r.completion_tokens_per_question, r.seconds_per_question,
               r.images_per_question] for r in rows],
        caption=("Ingest calls and tokens (prompt + completion): the memory's own model calls "
                 "while storing the run's events, summed over its questions, replays "
                 "included (Replays: a key's state rebuilt from its start); Index s: index "
                 "builds, once per memory key; Ingest s: seconds spent feeding events. Per "
                 "question (Calls/q, tok/q, Images/q): means over the answered questions, the "
                 "answer model's tokens as it reports them (m3kit/builtin counts words) and the "
                 "images and pages sent to it; s/q: the run's wall-clock time over its "
                 "questions (questions run concurrently: one question's own time is the "
                 "JSON's latency_seconds). Failed: questions that got no answer."),
    )


def cost_section(benchmark: Benchmark, rows: Sequence[CostRow]) -> ReportSection:
    """``benchmark``'s cost table as a report section, with the note on flagged rows."""
    note = model_note([row.run for row in rows])
    return ReportSection(benchmark=benchmark.name, title=f"{benchmark.title}: cost of each run",
                         tables=[cost_table(f"{benchmark.title}: cost of each run", rows)],
                         notes=[note] if note else [])
