"""``run_eval``: one m3kit task against one model, with m3kit's defaults, preflight and resume.

Defaults that differ from a bare ``inspect eval``:

- ``max_connections`` is explicit (``DEFAULT_MAX_CONNECTIONS``): inspect's adaptive default starts
  at 20 concurrent requests and climbs, which floods a local server;
- images are not embedded in the log (``log_images=False``): frame paths are in each sample's
  metadata, the frames themselves in the frame store;
- a model call is tried at most ``max_retries`` times in total (inspect's retries, the SDK
  client's own retries off; each attempt abandoned after ``attempt_timeout``), after which the
  sample is recorded as failed and the run goes on;
- the response cache is on (see ``m3kit.harness.cache``).

Before any work: the task name and ``-T`` arguments are checked and the task is built
(``m3kit.harness.taskargs``: unknown task, bad value → one typed line, no log), and the model is
checked (``m3kit.harness.preflight.check_model``: missing key, unreachable server, rejected key →
one ``PreflightError`` line with every secret redacted).

The run records its reproducibility card (``m3kit.harness.card.run_card``: the task's part,
the versions, the model and its arguments without credentials, the generation config) in the
log's eval metadata under ``m3kit.schema.card.CARD_KEY``. A resumed run keeps its log's eval
metadata (inspect's ``eval_retry`` takes no new metadata), but inspect rebuilds the task and
records its metadata anew over it: the task's part of the card (``TASK_CARD_KEY``: data
fingerprint, prompt, frames...) is then this run's, and ``m3kit.report.logs.logged_card`` reads
it from there, so a question file or video changed before the resume gives the new fingerprint.

No credential reaches the log, the response cache or inspect's trace file
(``m3kit.models.credentials``): the model is recorded with its public base URL and arguments
while its provider connects with the real ones, every secret it uses is scrubbed from what its
provider returns or raises, and a resumed run is handed the live model (inspect would rebuild
it from the log header, which no longer holds the credentials).

While it runs, the run holds a lock file in ``log_dir`` (``m3kit.harness.runlock``): a resume of
a run that is still going, or of one another resume has just taken, is refused with one line;
locks of dead processes are ignored. SIGTERM stops a run as Ctrl-C (SIGINT) does (inspect
cancels it and writes its log; the lock is removed), not as a kill, which would leave the lock.
(Seen once under load: the interrupt landed where inspect did not finish the log, which then
stays as a kill leaves it; the lock is removed all the same and ``--resume`` recovers it.)
Started in the background by a shell (SIGINT ignored, so asyncio cancels nothing on it), the
run is interrupted where it stands: the lock is removed, the log is left as a kill leaves it,
and ``--resume`` recovers its finished samples.

A model server that goes away during the run stops it (``EndpointDownError``, see
``m3kit.harness.sample_state``), with its finished samples kept. ``progress``: where a line on
the run's progress goes at least every ``PROGRESS_INTERVAL_S`` seconds (``m3kit eval`` in a pipe
gives stderr; ``m3kit.harness.progress``).

Resume: every run writes its log to ``log_dir`` as it goes (one sample at a time). With
``resume=True``, the newest log there for the same task, model, task arguments and limit is
picked up: if it finished, it is returned as is; if it was killed or errored, inspect's
``eval_retry`` recovers the samples it had completed (from the log and, after a hard kill, from
inspect's sample buffer) and runs only the others.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse
from urllib.request import url2pathname

from m3kit.errors import M3kitError
from m3kit.harness.card import card_metadata, run_card
from m3kit.harness.defaults import (
    DEFAULT_ATTEMPT_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_RETRIES,
    inspect_max_retries,
)
from m3kit.harness.preflight import PreflightError, check_model
from m3kit.harness.progress import RunProgress, reporting
from m3kit.harness.runlock import RunLockedError, held_lock, resume_lock, run_key
from m3kit.harness.stratify import DEFAULT_STRATUM, sample_stratum, stratified_ids
from m3kit.harness.taskargs import ArgumentRange, build, check_args, check_run_numbers
from m3kit.models.credentials import request_lines_redacted, serve_on_retry
from m3kit.models.noise import inspect_hooks_noise_dropped
from m3kit.models.redact import one_line
from m3kit.schema.card import CARD_KEY, TASK_CARD_KEY

if TYPE_CHECKING:
    from inspect_ai import Task
    from inspect_ai.log import EvalLog
    from inspect_ai.model import Model

__all__ = [
    "DEFAULT_ATTEMPT_TIMEOUT",
    "DEFAULT_LOG_DIR",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_RETRIES",
    "PACKAGE",
    "PreflightError",
    "RunIncompleteError",
    "RunLockedError",
    "TaskSpec",
    "find_resumable",
    "qualified_task_name",
    "run_eval",
]

logger = logging.getLogger(__name__)

DEFAULT_LOG_DIR = "logs"
# One sample per log write, so that a kill loses at most the samples in flight.
LOG_BUFFER = 1
# The package inspect registers m3kit's tasks under (``m3kit/<task>``).
PACKAGE = "m3kit"


class RunIncompleteError(M3kitError):
    """A run stopped before every sample was done (it can be resumed)."""


@dataclass(frozen=True)
class TaskSpec:
    """A registered task to run: its registry ``name`` (``m3kit/synth_nback``), its ``@task``
    ``function``, the ranges its numeric arguments must respect and the question field
    ``--stratify`` samples evenly over (the benchmarks' declarations look these up by
    name)."""

    name: str
    function: Callable[..., Task]
    ranges: Mapping[str, ArgumentRange]
    stratum: str = DEFAULT_STRATUM


def qualified_task_name(task: str) -> str:
    """``synth_nback`` -> ``m3kit/synth_nback``; names with a package or a file are kept."""
    if "/" in task or task.endswith(".py") or "@" in task:
        return task
    return f"{PACKAGE}/{task}"


def log_path(location: str) -> str:
    """A log location as a plain path: inspect names listed logs by ``file://`` URL."""
    parsed = urlparse(location)
    return url2pathname(parsed.path) if parsed.scheme == "file" else location


def find_resumable(
    log_dir: str | Path,
    task: str,
    model: str,
    task_args: Mapping[str, Any],
    limit: int | None,
    sample_ids: Sequence[str | int] | None = None,
) -> EvalLog | None:
    """The newest log header in ``log_dir`` for this task, model, task arguments, limit and
    chosen samples (``sample_ids``: a stratified run's)."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    if not Path(log_dir).exists():
        return None
    wanted_args = dict(task_args)
    for info in list_eval_logs(str(log_dir), descending=True):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception as exc:  # noqa: BLE001 (a log being written elsewhere, a damaged file)
            logger.warning("skipped unreadable log %s: %s", info.name, one_line(str(exc)))
            continue
        spec = header.eval
        names = {spec.task, spec.task_registry_name}
        if task not in names and task.split("/")[-1] not in names:
            continue
        if spec.model != model or dict(spec.task_args_passed or {}) != wanted_args:
            continue
        if spec.config.limit != limit:
            continue
        if _as_ids(spec.config.sample_id) != _as_ids(sample_ids):
            continue
        return header
    return None


def _as_ids(ids: Any) -> list[str] | None:
    """Sample ids as one comparable form (inspect records one id bare, several as a list)."""
    if ids is None:
        return None
    return [str(i) for i in (ids if isinstance(ids, list | tuple) else [ids])]


def run_eval(
    task: TaskSpec | str | Task,
    model: str | Model,
    *,
    memory: str | None = None,
    task_args: Mapping[str, Any] | None = None,
    model_args: Mapping[str, Any] | None = None,
    limit: int | None = None,
    resume: bool = False,
    log_dir: str | Path = DEFAULT_LOG_DIR,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    max_retries: int = DEFAULT_MAX_RETRIES,
    attempt_timeout: int | None = DEFAULT_ATTEMPT_TIMEOUT,
    cache: bool = True,
    display: str = "none",
    stratify: bool = False,
    progress: Callable[[str], None] | None = None,
    **eval_args: Any,
) -> EvalLog:
    """Evaluate ``model`` (``provider/model``) on ``task`` and return its log.

    ``task`` is a ``TaskSpec`` (a registered task; ``run_benchmark_task`` makes one from
    a name such as ``synth_nback``), another name inspect resolves itself (``file.py@task``), or
    a ``Task`` (built by ``m3eval_task``; it takes no task arguments and cannot be resumed,
    since inspect rebuilds a resumed task from its registered name). ``memory`` answers
    through that memory (a task argument); ``task_args`` are the task's options (``-T``),
    ``model_args`` the provider's (``-M``). ``cache=False`` turns the response cache off.
    ``stratify`` (with ``limit``, a registered task): the ``limit`` samples are spread evenly
    over the task's strata (``m3kit.harness.stratify``), not the first ones.
    ``progress``: where the run's progress lines go (``None``: nowhere).
    ``eval_args`` go to ``inspect_ai.eval`` unchanged.
    """
    import inspect_ai

    check_run_numbers(limit=limit, max_connections=max_connections, max_retries=max_retries,
                      attempt_timeout=attempt_timeout)  # before any work
    args = run_task_args(task_args, memory=memory, cache=cache)
    spec = task if isinstance(task, TaskSpec) else None
    if isinstance(task, TaskSpec):
        name: str | Task = task.name
    elif isinstance(task, str):
        name = qualified_task_name(task)
    elif args or resume:
        raise M3kitError("task arguments, --memory, --no-cache and resume need a registered "
                         "task name, not a Task object")
    else:
        name = task
    if spec is not None:
        # cheap: before the network; numbers as the task's types say ("1e-9" a float)
        args = check_args(spec.name, spec.function, args, spec.ranges)
    # recorded without credentials, connecting with them (m3kit.models.credentials)
    resolved = check_model(model, model_args)
    built: str | Task = name
    if spec is not None:
        # bad argument, unreadable data: one typed line now, not an error log (inspect
        # records the same registry name and arguments for the built task)
        built = build(spec.name, spec.function, args, spec.ranges)
    if stratify:
        if spec is None or isinstance(built, str):
            raise M3kitError("--stratify needs an m3kit task (its samples' question types)",
                             field="stratify")
        if limit is None:
            raise M3kitError("--stratify needs --limit N", field="stratify")
        # inspect runs exactly these samples; the run's identity (resume, lock) is them
        eval_args["sample_id"] = stratified_ids(
            built.dataset, limit, lambda sample: sample_stratum(sample, spec.stratum))
        limit = None
    from inspect_ai.model import GenerateConfig

    card = run_card(None if isinstance(built, str) else built, resolved,
                    generate_config={k: v for k, v in eval_args.items()
                                     if k in GenerateConfig.model_fields})
    eval_args["metadata"] = {**(eval_args.get("metadata") or {}), **card_metadata(card)}
    settings: dict[str, Any] = {
        "log_dir": str(log_dir),
        "max_connections": max_connections,
        "max_retries": inspect_max_retries(max_retries),
        "attempt_timeout": attempt_timeout,
        "log_images": False,
        "log_buffer": LOG_BUFFER,
        "display": display,
    }
    label = name if isinstance(name, str) else str(getattr(name, "name", "task"))
    sample_ids = eval_args.get("sample_id")
    # a stratified run is the samples it runs: its key, and the log a resume continues, say so
    key = run_key(label, str(resolved), {**args, "sample_id": sample_ids} if sample_ids else args,
                  limit)
    # a resume takes its lock atomically (two at once: one runs, one is refused)
    lock = resume_lock if resume else held_lock
    run_progress = (RunProgress(label, None if resume else _sample_count(built, limit, sample_ids),
                                progress) if progress is not None else None)
    with (_sigterm_as_interrupt(), inspect_hooks_noise_dropped(), request_lines_redacted(),
          lock(log_dir, key, task=label, model=str(resolved)), reporting(run_progress),
          run_progress.running() if run_progress is not None else nullcontext()):
        return _run_locked(inspect_ai, built, name, resolved, args, limit, resume, log_dir,
                           settings, eval_args, card.data_fingerprint)


def run_task_args(task_args: Mapping[str, Any] | None, *, memory: str | None,
                  cache: bool) -> dict[str, Any]:
    """The task's arguments as ``run_eval`` runs it: ``task_args`` with ``memory`` and the
    response cache (``cache=False``) added."""
    args = dict(task_args or {})
    if memory is not None:
        args["memory"] = memory
    if not cache:
        args["cache"] = False
    return args


def _sample_count(built: str | Task, limit: int | None,
                  sample_ids: Sequence[str | int] | None) -> int | None:
    """How many samples a fresh run of ``built`` does (``None``: a task inspect builds)."""
    if isinstance(built, str):
        return None
    if sample_ids is not None:
        return len(sample_ids)
    count = len(built.dataset) * (built.epochs or 1)
    return count if limit is None else min(count, limit * (built.epochs or 1))


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the block runs, SIGTERM interrupts as SIGINT does: inspect cancels the run, writes
    its log, and the ``finally`` blocks remove the run lock. Python's default SIGTERM ends the
    process at once and leaves the lock behind. Only in the main thread (where signals go)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            # started in the background by a shell (``m3kit eval ... &``): SIGINT is ignored,
            # and asyncio cancels nothing on it; the interrupt is raised here instead
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _warn_if_data_changed(previous: EvalLog, data_fingerprint: str | None) -> None:
    """Say so when the data changed since the run being resumed was made: its finished samples
    were answered on the old data, the others will be on the new (the resumed log carries the
    new fingerprint)."""
    meta = previous.eval.metadata or {}
    recorded = ((meta.get(TASK_CARD_KEY) or {}).get("data_fingerprint")
                or (meta.get(CARD_KEY) or {}).get("data_fingerprint"))
    if recorded and data_fingerprint and recorded != data_fingerprint:
        logger.warning(
            "the data changed since %s was made (fingerprint %s, now %s): its finished samples "
            "were answered on the old data and are kept; run without --resume to answer every "
            "question on the new data", previous.location, recorded[:12], data_fingerprint[:12])


def _run_locked(inspect_ai: Any, built: str | Task, name: str | Task, resolved: Model,
                args: dict[str, Any], limit: int | None, resume: bool, log_dir: str | Path,
                settings: dict[str, Any], eval_args: dict[str, Any],
                data_fingerprint: str | None = None) -> EvalLog:
    """The run itself, under its lock: a resume of ``name``'s newest log, else a new run
    (``data_fingerprint``: this run's data, compared with the resumed log's)."""
    if resume:
        assert isinstance(name, str)
        previous = find_resumable(log_dir, name, str(resolved), args, limit,
                                  sample_ids=eval_args.get("sample_id"))
        if previous is not None and previous.status == "success":
            logger.info("nothing to resume: %s is complete", previous.location)
            from inspect_ai.log import read_eval_log

            done = read_eval_log(previous.location)
            # inspect lists logs by URL (``file:///...``): the run's log is a path
            done.location = log_path(done.location)
            return done
        if previous is not None:
            logger.info("resuming %s", previous.location)
            _warn_if_data_changed(previous, data_fingerprint)
            # inspect rebuilds the model from the log header, which holds no credentials
            serve_on_retry(resolved, previous.eval)
            # by its location, not the header ``find_resumable`` read: given a log object,
            # inspect reuses the samples it holds, and a header holds none (every finished
            # sample would run again, hidden only by the response cache)
            return _the_log(inspect_ai.eval_retry(log_path(previous.location), **settings))
    return _the_log(inspect_ai.eval(
        built,
        model=resolved,
        task_args=args if isinstance(built, str) else {},
        limit=limit,
        **settings,
        **eval_args,
    ))


def _the_log(logs: list[EvalLog]) -> EvalLog:
    """The one log of a run; none when inspect was interrupted (Ctrl-C, or SIGTERM here): it
    has written the cancelled log with the finished samples and returns nothing, so the
    interrupt goes on up (``m3kit eval`` exits 130)."""
    if not logs:
        raise KeyboardInterrupt
    return logs[0]
