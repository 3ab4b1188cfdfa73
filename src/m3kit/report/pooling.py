"""Logs of one system pooled into one run: each sample once, from the later-started log.

A killed run and its ``--resume`` are two log files (under inspect 0.3.285 the resumed log has a
new ``eval_id`` and keeps ``task_id``; the killed one stays ``started``), a run sharded over
several invocations is several, and a rerun with the same settings is another. A report shows
each system once, so every report module pools its logs by the key its table label is built
from, and a sample that appears in several logs (same task, id and epoch) counts once, taken
from the log that started last: the resumed or rerun answer replaces the earlier one.
``m3kit export`` writes the same pooled samples, each with the log it is taken from
(``latest_samples``).

Only runs made the same way pool. The key is the benchmark's system label *and* every setting
the run's card records that changes an answer (``run_settings``: memory and its config, frames
and fps, subtitles, blind, the judge, the benchmark's own settings such as M3Exam's regime,
model arguments, generation config, prompt, data, scoring rules). A setting splits runs when it
differs between logs of one task under one label (``setting_variants``): a 96-frame and a
24-frame M3Eval run are two rows, labelled ``· frames 96 uniform`` and ``· frames 24 uniform``,
while the tasks of one run that differ by design (N-back's per-clip frames beside the other
paradigms' per-probe count) stay one system.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from inspect_ai.log import EvalLog

    from m3kit.schema.card import ReproCard
    from m3kit.schema.evallog import LoggedRun

__all__ = ["latest_samples", "pool_logs", "run_settings", "setting_variants", "started_at"]

K = TypeVar("K", bound=Hashable)


def started_at(log: EvalLog) -> str:
    """When ``log``'s run started (ISO text, comparable as text; the creation time where the
    stats have none)."""
    return str(getattr(log.stats, "started_at", "") or log.eval.created or "")


def _order(log: EvalLog) -> tuple[str, str]:
    """Sort key of a log by start: a log's times are kept to the second, so two runs started
    within one second are told apart by their newest sample's start (kept to the microsecond;
    a resumed log's new samples start after everything its killed run did)."""
    newest = max((str(getattr(s, "started_at", None) or "") for s in log.samples or []),
                 default="")
    return started_at(log), newest


def latest_samples(logs: Sequence[EvalLog]) -> dict[tuple[str, str, int], tuple[EvalLog, Any]]:
    """Each sample of ``logs`` once, by (task, id, epoch), with the log it is taken from: the
    latest-started log that has it (by the log's start, then its newest sample's start, then
    the later in ``logs``); in first-seen order, earliest-started log first."""
    ordered = sorted(enumerate(logs), key=lambda m: (_order(m[1]), m[0]))
    samples: dict[tuple[str, str, int], tuple[EvalLog, Any]] = {}
    for _, log in ordered:  # later-started logs overwrite earlier ones
        for sample in log.samples or []:
            samples[(str(log.eval.task), str(sample.id), int(sample.epoch))] = (log, sample)
    return samples


def pool_logs(logs: Sequence[EvalLog], key: Callable[[EvalLog], K]) -> dict[K, EvalLog]:
    """One log per ``key(log)``, in first-seen order of the keys: the latest-started log of the
    key (its header, status and stats) holding every sample of the key's logs, each (task, id,
    epoch) once, from the log ``latest_samples`` takes it from."""
    groups: dict[K, list[EvalLog]] = {}
    for log in logs:
        groups.setdefault(key(log), []).append(log)
    pooled: dict[K, EvalLog] = {}
    for group_key, members in groups.items():
        if len(members) == 1:
            pooled[group_key] = members[0]
            continue
        latest = max(enumerate(members), key=lambda m: (_order(m[1]), m[0]))[1]
        samples = [sample for _, sample in latest_samples(members).values()]
        pooled[group_key] = latest.model_copy(update={"samples": samples})
    return pooled


def _text(value: Any) -> str | None:
    if value is None or value == {} or value == "":
        return None
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_text(v)}" for k, v in sorted(value.items()))
    return str(value)


def run_settings(card: ReproCard | None) -> dict[str, str]:
    """The settings of a run that change its answers or its scores, by name, as a label shows
    them (``{"frames": "96 uniform", "memory": "rag", ...}``), from its reproducibility card;
    empty for a run that recorded none. Versions, the server's address, the frames actually
    sent and the task are not settings: a resumed run keeps its system across them."""
    if card is None:
        return {}
    values: dict[str, str | None] = {
        "memory": card.memory or "none",
        "memory config": _text(card.memory_config),
        "frames": card.frames_text() if card.frames is not None else None,
        "subtitles": card.subtitles,
        "blind": "blind" if card.blind else "not blind",
        "judge": card.judge_model,
        **{str(name): _text(value) for name, value in sorted(card.settings.items())},
        "model args": _text(card.model_args),
        "generation": _text(card.generate_config),
        "prompt": card.prompt_sha256[:12] if card.prompt_sha256 else None,
        "data": card.data_fingerprint[:12] if card.data_fingerprint else None,
        "scoring": _text(card.scoring),
    }
    return {name: value for name, value in values.items() if value is not None}


def setting_variants(runs: Sequence[LoggedRun], label: Callable[[LoggedRun], Hashable]
                     ) -> list[str]:
    """Per run (headers suffice), what sets it apart from the other runs of its ``label``: the
    settings (``run_settings``) that take more than one value among runs of one task under that
    label, as ``name value`` joined by ``, `` (``"frames 96 uniform"``; ``blind`` alone for a
    blind run); empty where no setting differs. Runs with equal variants are one system."""
    settings = [run_settings(run.card) for run in runs]
    variants = [""] * len(runs)
    groups: dict[Hashable, list[int]] = {}
    for index, run in enumerate(runs):
        groups.setdefault(label(run), []).append(index)
    for members in groups.values():
        by_task: dict[str, list[int]] = {}
        for index in members:
            by_task.setdefault(runs[index].task, []).append(index)
        differing: set[str] = set()
        for indexes in by_task.values():
            names = {name for i in indexes for name in settings[i]}
            differing |= {name for name in names
                          if len({settings[i].get(name) for i in indexes}) > 1}
        order = list(dict.fromkeys(name for i in members for name in settings[i]))
        for index in members:
            variants[index] = ", ".join(
                _setting_text(name, settings[index].get(name, "-"))
                for name in order if name in differing)
    return variants


def _setting_text(name: str, value: str) -> str:
    if name == "blind":
        return value
    return f"{name} {value}"
