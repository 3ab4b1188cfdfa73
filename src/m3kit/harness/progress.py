"""Progress lines for a run nobody watches on a terminal.

In a pipe or a log file, inspect's live display is off (``m3kit eval`` shows it only on a
terminal), and a run that retries a slow or failing server could print nothing for minutes.
``RunProgress`` counts the samples the solvers finish and writes one line when the run starts,
then every ``PROGRESS_INTERVAL_S`` seconds, then when it ends::

    m3kit/synth_nback: 12 of 40 samples done (2 failed), 0:00:45.0 elapsed

The solvers report to the progress of the run they run in (``note_sample``): ``run_eval`` makes
it current for the run with ``reporting``. A context variable, not a global: each run (and each
thread) sees its own, and samples run by ``inspect eval`` directly report to none.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from m3kit.memory.events import clock

__all__ = ["PROGRESS_INTERVAL_S", "RunProgress", "note_sample", "reporting"]

# At most this long between two lines: well inside the 30 s a reader of a pipe should wait.
PROGRESS_INTERVAL_S = 15.0

_CURRENT: ContextVar[RunProgress | None] = ContextVar("m3kit_run_progress", default=None)


class RunProgress:
    """Counts of one run's finished samples, and the thread that writes them every
    ``interval_s`` seconds (``write``: where a line goes) while the run is ``running()``.

    ``total``: the samples this run has to do (``None``: not known, e.g. a resume, whose
    finished samples are not redone)."""

    def __init__(self, label: str, total: int | None, write: Callable[[str], None], *,
                 interval_s: float = PROGRESS_INTERVAL_S) -> None:
        self.label = label
        self.total = total
        self.interval_s = interval_s
        self._write = write
        self._lock = threading.Lock()
        self._done = 0
        self._failed = 0
        self._start = time.monotonic()
        self._stop = threading.Event()

    def sample_done(self, *, failed: bool) -> None:
        """One more sample finished (``failed``: without an answer)."""
        with self._lock:
            self._done += 1
            self._failed += int(failed)

    def line(self) -> str:
        with self._lock:
            done, failed = self._done, self._failed
        of = f" of {self.total}" if self.total is not None else ""
        return (f"{self.label}: {done}{of} samples done ({failed} failed), "
                f"{clock(time.monotonic() - self._start)} elapsed")

    @contextmanager
    def running(self) -> Iterator[RunProgress]:
        """Write a line now, every ``interval_s`` seconds while the block runs, and at its
        end (also when it raises)."""
        self._start = time.monotonic()
        self._stop.clear()
        self._write(self.line())
        thread = threading.Thread(target=self._beat, name="m3kit-progress", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
            self._write(self.line())

    def _beat(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._write(self.line())


@contextmanager
def reporting(progress: RunProgress | None) -> Iterator[None]:
    """Make ``progress`` the one the solvers report to while the block runs (``None``: none)."""
    token = _CURRENT.set(progress)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def note_sample(*, failed: bool) -> None:
    """Count one finished sample in the current run's progress, if it has one."""
    progress = _CURRENT.get()
    if progress is not None:
        progress.sample_done(failed=failed)
