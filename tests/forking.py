"""Run a check in a child forked from the test's process, bounded: a child that hangs is made to
print its threads' stacks, killed, and the test fails; it never hangs the suite.

``multiprocessing`` forks by default on Linux with Python 3.11, so every m3kit object that owns
threads is tested used in the parent, then in a forked child (``m3kit.forks``).
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import sys
from collections.abc import Callable

import pytest

# Far above what any check here takes (a model load in the child: seconds), so only a hang
# reaches it; the child prints its stacks at CHILD_DUMP_S and exits, the parent kills it at
# HANG_S if even that failed.
CHILD_DUMP_S = 150.0
HANG_S = CHILD_DUMP_S + 60.0


def _child(check: Callable[[], bool]) -> None:
    faulthandler.dump_traceback_later(CHILD_DUMP_S, exit=False, file=sys.stderr)
    try:
        ok = check()
    except BaseException as exc:  # noqa: BLE001 (any failure is the child's answer)
        print(f"forked child: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        ok = False
    faulthandler.cancel_dump_traceback_later()
    os._exit(0 if ok else 1)


def check_in_forked_child(check: Callable[[], bool]) -> None:
    """Fork, run ``check()`` in the child and fail unless it returns true (module doc)."""
    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    process = multiprocessing.get_context("fork").Process(target=_child, args=(check,))
    process.start()
    process.join(HANG_S)  # waits for the child's exit; the bound is for a hang only
    if process.exitcode is None:
        process.kill()
        process.join()
        pytest.fail(f"the forked child hung (killed after {HANG_S:g} s; its stacks are in "
                    f"the captured stderr)")
    assert process.exitcode == 0, f"the forked child's check failed (exit {process.exitcode})"
