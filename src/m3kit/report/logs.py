"""The one reader of eval logs: an inspect ``EvalLog`` as m3kit's typed records.

Each sample becomes a ``LoggedSample`` (``m3kit.schema.evallog``): its question, inspect's
error when the sample errored, the solver's record (usage, timings, failure) and the score of
its benchmark's scorer read back as the benchmark's typed per-item record. A run becomes a
``LoggedRun``. ``m3kit eval``'s summary and ``m3kit report`` both read
logs through here, so they count the same samples the same way: a sample inspect recorded as
errored (no score) is *failed*, with inspect's error message as the reason, never dropped.

A log of a task m3kit does not own (``foreign_task``: a task file's ``file.py@task``, another
package's ``pkg/task``, which ``m3kit eval`` hands to inspect as they are) is read too, without
a benchmark: its samples carry no score record, and their costs are inspect's token counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from m3kit.benchmarks import Benchmark, benchmark_for_task, benchmark_named, names_m3kit_task
from m3kit.models.redact import public_base_url, public_model_args
from m3kit.report.pooling import started_at
from m3kit.schema import LoggedSample, Question, ScoreItem, Usage, read_record
from m3kit.schema.card import CARD_KEY, TASK_CARD_KEY, FramesSent, ReproCard
from m3kit.schema.evallog import BENCHMARK_KEY, MEMORY_KEY, QUESTION_KEY, LoggedRun

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog, EvalSample
    from inspect_ai.scorer import Score

__all__ = ["benchmark_of", "foreign_task", "frames_sent", "logged_card", "read_run",
           "read_samples", "run_header", "task_name"]

# inspect's error messages carry a traceback; a table cell or a reason gets one line of it
ERROR_CHARS = 300


def task_name(log: EvalLog) -> str:
    """The task's own name, without its registry prefix (``m3kit/synth_nback`` ->
    ``synth_nback``)."""
    return str(log.eval.task).rsplit("/", 1)[-1]


def foreign_task(log: EvalLog) -> bool:
    """Whether the log's task is not m3kit's: it names no benchmark in its task metadata and
    came from a task file or from another package's registry (``pkg/task``). An unknown name
    without a package (``mmlu``, ``m3kit/mmlu``) is m3kit's, and unknown."""
    if (log.eval.metadata or {}).get(BENCHMARK_KEY):
        return False
    return bool(log.eval.task_file) or not names_m3kit_task(str(log.eval.task))


def benchmark_of(log: EvalLog) -> Benchmark:
    """The benchmark a log belongs to: the one its task metadata names (``BENCHMARK_KEY``: a
    task built in code, such as ``m3eval_task(...)``, has a name of its own), else the one
    declaring its task; ``UnknownTaskError`` when neither is known."""
    declared = (log.eval.metadata or {}).get(BENCHMARK_KEY)
    found = benchmark_named(str(declared)) if declared else None
    return found if found is not None else benchmark_for_task(task_name(log))


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ERROR_CHARS else flat[: ERROR_CHARS - 1] + "…"


def _question(sample: EvalSample) -> Question | None:
    raw = (sample.metadata or {}).get(QUESTION_KEY)
    return Question.model_validate(raw) if raw is not None else None


def _score(sample: EvalSample, scorer: str) -> Score | None:
    scores = sample.scores or {}
    score = scores.get(scorer)
    if score is None and scores:
        score = next(iter(scores.values()))  # a log scored under another scorer name
    return score


def _inspect_usage(sample: EvalSample) -> Usage:
    """The tokens inspect counted for a sample (every model it called), for a sample whose
    solver wrote no ``SampleRecord``: inspect does not count images."""
    usages = (sample.model_usage or {}).values()
    return Usage(prompt_tokens=sum(u.input_tokens for u in usages),
                 completion_tokens=sum(u.output_tokens for u in usages))


def _sample(sample: EvalSample, benchmark: Benchmark | None) -> LoggedSample:
    record = read_record(sample.metadata)
    score = _score(sample, benchmark.scorer if benchmark is not None else "")
    item = None
    if benchmark is not None and score is not None:
        item_type: type[ScoreItem] = benchmark.scoring.load().item
        item = item_type.from_metadata(score.metadata)
    memory_key = (sample.metadata or {}).get(MEMORY_KEY)
    return LoggedSample(
        id=str(sample.id),
        epoch=int(sample.epoch),
        question=_question(sample),
        memory_key=str(memory_key) if memory_key is not None else None,
        error=_one_line(sample.error.message) if sample.error is not None else None,
        failure=record.failure if record is not None else None,
        explanation=score.explanation if score is not None else None,
        answer=score.answer if score is not None else None,
        completion=sample.output.completion if sample.output is not None else None,
        item=item,
        usage=record.usage if record is not None else _inspect_usage(sample),
        seconds=record.seconds if record is not None else {},
        total_seconds=sample.total_time,
    )


def read_samples(log: EvalLog) -> list[LoggedSample]:
    """Every sample the log holds, in log order (the log must be read with its samples), with
    its benchmark's typed score record (none for a ``foreign_task``); ``UnknownTaskError`` for
    an m3kit task no benchmark declares."""
    benchmark = None if foreign_task(log) else benchmark_of(log)
    return [_sample(s, benchmark) for s in log.samples or []]


def run_header(log: EvalLog) -> LoggedRun:
    """The run a log holds, without its samples: task, model, arguments, task metadata,
    status (enough to name its system)."""
    return LoggedRun(
        task=task_name(log),
        model=str(log.eval.model),
        status=str(log.status),
        location=str(log.location or ""),
        started=started_at(log),
        wall_seconds=_wall_seconds(log),
        task_args=dict(log.eval.task_args or {}),
        metadata=dict(log.eval.metadata or {}),
        card=logged_card(log),
    )


def _wall_seconds(log: EvalLog) -> float | None:
    """The run's elapsed seconds from inspect's start and completion times, when both are
    recorded (a killed run has no completion time)."""
    from datetime import datetime

    stats = log.stats
    if not stats.started_at or not stats.completed_at:
        return None
    try:
        elapsed = (datetime.fromisoformat(stats.completed_at)
                   - datetime.fromisoformat(stats.started_at)).total_seconds()
    except ValueError:
        return None
    return elapsed if elapsed >= 0 else None


def logged_card(log: EvalLog) -> ReproCard | None:
    """The run's reproducibility card: the one its run recorded (``CARD_KEY``), else (a run
    started by ``inspect eval`` itself) the task's part completed from the log's header (model,
    its arguments without credentials, base URL, generation config, inspect's package
    versions); ``None`` for a task that recorded no card. The task's part (data fingerprint,
    prompt, frames...) is the task's as this log's run built it: a resumed run (inspect's
    ``eval_retry``) keeps its first run's eval metadata, card included, but rebuilds the task
    and records the task's metadata anew over it, so a data set changed since is seen."""
    metadata = log.eval.metadata or {}
    if metadata.get(CARD_KEY) is not None:
        card = ReproCard.model_validate(metadata[CARD_KEY])
        task_part = metadata.get(TASK_CARD_KEY)
        return (card.with_task_part(ReproCard.model_validate(task_part))
                if task_part is not None else card)
    if metadata.get(TASK_CARD_KEY) is None:
        return None
    spec = log.eval
    packages = spec.packages or {}
    return ReproCard.model_validate(metadata[TASK_CARD_KEY]).model_copy(update={
        "m3kit_version": packages.get("m3kit"),
        "inspect_ai_version": packages.get("inspect_ai"),
        "model": str(spec.model),
        "model_args": public_model_args(spec.model_args),
        "model_base_url": public_base_url(spec.model_base_url),
        "generate_config": public_model_args(
            spec.model_generate_config.model_dump(mode="json", exclude_none=True)),
    })


def frames_sent(log: EvalLog) -> FramesSent:
    """How many frames each sample with a solver record was shown (mean, least, most)."""
    records = (read_record(s.metadata) for s in log.samples or [])
    return FramesSent.of([len(r.frames) for r in records if r is not None])


def read_run(log: EvalLog) -> LoggedRun:
    """The run a log holds: its header (``run_header``) and its samples as ``read_samples``
    reads them; its card gains the frames the samples were actually sent."""
    run = run_header(log)
    card = (run.card.model_copy(update={"frames_sent": frames_sent(log)})
            if run.card is not None else None)
    return run.model_copy(update={"samples": read_samples(log), "card": card})
