"""Work on a thread pool, taken in the order it was given, with a bounded number ahead."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from m3kit.media.ordered import in_order


def test_results_come_in_the_order_given_whatever_finishes_first():
    delays = [0.05, 0.0, 0.03, 0.0, 0.01]

    def work(i: int) -> int:
        time.sleep(delays[i])
        return i * 10

    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(in_order(pool, work, range(5), ahead=3)) == [0, 10, 20, 30, 40]


def test_no_more_than_ahead_items_are_given_out_before_being_taken():
    given = []

    def work(i: int) -> int:
        return i

    with ThreadPoolExecutor(max_workers=4) as pool:
        def items():
            for i in range(10):
                given.append(i)
                yield i

        results = in_order(pool, work, items(), ahead=3)
        taken = []
        for result in results:
            taken.append(result)
            # the items given out but not yet taken never exceed `ahead`
            assert len(given) - len(taken) <= 3 - 1
        assert taken == list(range(10))


def test_a_failure_is_raised_at_its_turn_after_the_results_before_it():
    def work(i: int) -> int:
        if i == 2:
            raise RuntimeError("item 2")
        return i

    taken = []
    with ThreadPoolExecutor(max_workers=2) as pool, pytest.raises(RuntimeError, match="item 2"):
        for result in in_order(pool, work, range(6), ahead=4):
            taken.append(result)
    assert taken == [0, 1]


def test_stopping_early_waits_for_running_work_and_cancels_the_rest():
    started, finished = [], []
    gate = threading.Event()

    def work(i: int) -> int:
        started.append(i)
        gate.wait(5)
        finished.append(i)
        return i

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = in_order(pool, work, range(8), ahead=4)
        gate.set()
        assert next(results) == 0
        results.close()
        # what started has finished when close returns; what was queued never ran
        assert sorted(finished) == sorted(started) and len(started) <= 4


def test_ahead_must_be_positive():
    with ThreadPoolExecutor(max_workers=1) as pool, pytest.raises(ValueError, match="ahead"):
        list(in_order(pool, lambda i: i, [1], ahead=0))
