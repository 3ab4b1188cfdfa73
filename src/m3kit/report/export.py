"""``m3kit export LOG --format jsonl|csv``: one row per sample of eval logs, for analysis
elsewhere (pandas, a spreadsheet).

The logs are read as ``m3kit report`` reads them: by benchmark and system
(``m3kit.report.inputs.system_logs``), the logs of one system pooled, each sample once, from the
latest-started log that has it (``m3kit.report.pooling.latest_samples``). A killed run and its
``--resume`` (two logs, three with a second resume), or a rerun with the same settings, are one
run: one row per question, from the log that holds its answer. A log of a task that is no m3kit
benchmark's is exported as it is, one row per sample.

Each row is an ``ExportRow``: the sample's id and epoch, the run's task and model, the log
it is taken from (``log``: the eval log's file; ``run_id`` and ``eval_id``: inspect's ids of
that log's ``eval()`` call and of the task's run in it; the settings are that log's too), the
question (text, type, gold answer), the model's reply
(``prediction``) and the answer the benchmark's scorer read from it (``parsed``: M3Eval's and
Video-MME-v2's letter; none where the reply is scored whole, as M3Exam's), the outcome
(``status``, ``reason``), the scores (the benchmark's per-item record: EM/F1/BLEU-1/LLM-J,
role, group fields...), the cost (tokens, images, seconds) and the run's settings (its
reproducibility card, one field per row of ``m3kit report``'s "How each run was made"). The
logs are read by the one log reader (``m3kit.report.logs.read_run``), so a row counts what
every table counts. JSON Lines keep the nesting and full precision; CSV flattens ``scores``
and ``settings`` into ``scores.<name>`` / ``settings.<name>`` columns (nested values as
JSON).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.report.logs import benchmark_of, foreign_task, read_run
from m3kit.report.pooling import latest_samples
from m3kit.schema.evallog import LoggedRun, LoggedSample

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from m3kit.benchmarks import Benchmark

__all__ = ["EXPORT_FORMATS", "ExportFormat", "ExportRow", "export_rows", "write_rows"]

ExportFormat = Literal["jsonl", "csv"]
EXPORT_FORMATS: tuple[ExportFormat, ...] = ("jsonl", "csv")
# the score record's own bookkeeping, already a column of the row
_NOT_SCORES = frozenset({"status", "id", "groups"})


class ExportRow(BaseModel):
    """One sample of a run, flat enough for a table (see the module doc)."""

    model_config = ConfigDict(frozen=True)

    id: str
    epoch: int
    task: str
    model: str
    log: str = ""
    run_id: str = ""
    eval_id: str = ""
    question: str | None = None
    question_type: str | None = None
    gold: str | None = None
    prediction: str | None = None
    parsed: str | None = None
    status: str
    reason: str | None = None
    scores: dict[str, Any] = Field(default_factory=dict)
    groups: dict[str, Any] = Field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    images_sent: int = 0
    seconds: float | None = None
    settings: dict[str, str] = Field(default_factory=dict)


def _row(run: LoggedRun, sample: LoggedSample, settings: dict[str, str],
         ids: dict[str, str]) -> ExportRow:
    item = sample.item
    scores = ({k: v for k, v in item.model_dump(mode="json").items() if k not in _NOT_SCORES}
              if item is not None else {})
    question = sample.question
    return ExportRow(
        id=sample.id, epoch=sample.epoch, task=run.task, model=run.model, log=run.location,
        **ids,
        question=question.text if question is not None else None,
        question_type=question.question_type if question is not None else None,
        gold=question.answer if question is not None else None,
        prediction=sample.completion if sample.completion is not None else sample.answer,
        parsed=item.parsed_answer() if item is not None else None,
        status=sample.status,
        reason=sample.reason or None if sample.failed else None,
        scores=scores,
        groups=dict(item.groups) if item is not None else {},
        prompt_tokens=sample.usage.prompt_tokens,
        completion_tokens=sample.usage.completion_tokens,
        images_sent=sample.usage.images_sent,
        seconds=sample.total_seconds,
        settings=settings,
    )


def _systems(logs: Sequence[EvalLog]) -> list[list[EvalLog]]:
    """``logs`` grouped as ``m3kit report`` pools them: by benchmark (in first-seen order), then
    by system (``system_logs``); a log of a foreign task alone."""
    from m3kit.report.inputs import system_logs

    entries: list[tuple[Benchmark | None, list[EvalLog]]] = []
    by_benchmark: dict[str, list[EvalLog]] = {}
    for log in logs:
        if foreign_task(log):
            entries.append((None, [log]))
            continue
        benchmark = benchmark_of(log)
        if benchmark.name not in by_benchmark:
            by_benchmark[benchmark.name] = []
            entries.append((benchmark, by_benchmark[benchmark.name]))
        by_benchmark[benchmark.name].append(log)
    return [system for benchmark, members in entries
            for system in ([members] if benchmark is None
                           else [s for _, s in system_logs(benchmark, members)])]


def export_rows(logs: Iterable[Any]) -> list[ExportRow]:
    """One row per sample of the runs ``logs`` hold (inspect ``EvalLog``s read with their
    samples), each system's logs pooled as ``m3kit report`` pools them (see the module doc),
    each row naming the log its sample is taken from."""
    rows: list[ExportRow] = []
    for system in _systems(list(logs)):
        read: dict[int, tuple[LoggedRun, dict[int, LoggedSample], dict[str, str],
                              dict[str, str]]] = {}
        for log, sample in latest_samples(system).values():
            if id(log) not in read:
                run = read_run(log)
                read[id(log)] = (
                    run,
                    # a log ``latest_samples`` took a sample from was read with its samples
                    {id(raw): one
                     for raw, one in zip(log.samples or [], run.samples, strict=True)},
                    dict(run.card.rows()) if run.card is not None else {},
                    {"run_id": str(log.eval.run_id or ""), "eval_id": str(log.eval.eval_id or "")},
                )
            run, samples, settings, ids = read[id(log)]
            rows.append(_row(run, samples[id(sample)], settings, ids))
    return rows


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


def _flat(row: ExportRow) -> dict[str, Any]:
    data = row.model_dump(mode="json")
    scores = data.pop("scores")
    settings = data.pop("settings")
    flat = {k: _cell(v) for k, v in data.items()}
    flat.update({f"scores.{k}": _cell(v) for k, v in scores.items()})
    flat.update({f"settings.{k}": _cell(v) for k, v in settings.items()})
    return flat


def write_rows(rows: Sequence[ExportRow], fmt: ExportFormat, out: IO[str]) -> None:
    """``rows`` to ``out``: one JSON object per line (``jsonl``, full precision) or a CSV with a
    header holding every column any row has (``csv``; a row without one leaves it empty)."""
    if fmt == "jsonl":
        out.writelines(row.model_dump_json() + "\n" for row in rows)
        return
    flat = [_flat(row) for row in rows]
    columns: dict[str, None] = {}
    for record in flat:
        columns.update(dict.fromkeys(record))
    writer = csv.DictWriter(out, fieldnames=list(columns), restval="", lineterminator="\n")
    writer.writeheader()
    writer.writerows(flat)
