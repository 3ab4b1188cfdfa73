"""Work spread over a thread pool, its results taken in the order the work was given.

The parallel frame decoder hands one group of pictures to each thread and must return frames in
index order with a bounded number held: at most ``ahead`` items are submitted and not yet taken,
so a slow consumer stops the producers instead of letting finished results pile up.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future, wait
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def in_order(
    executor: Executor, work: Callable[[Item], Result], items: Iterable[Item], *, ahead: int
) -> Iterator[Result]:
    """``work(item)`` for each item, run on ``executor``, yielded in the items' order.

    An exception from ``work`` is raised when its item's turn comes (results before it are
    yielded first). When the consumer stops early or an item fails, work not yet started is
    cancelled and running work is waited for, so nothing outlives the iterator (a decoder must
    not be closed under a thread that still uses it).
    """
    if ahead < 1:
        raise ValueError(f"ahead must be at least 1, got {ahead}")
    pending: deque[Future[Result]] = deque()
    try:
        for item in items:
            pending.append(executor.submit(work, item))
            if len(pending) >= ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        wait(pending)
