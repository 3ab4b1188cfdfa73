"""``QuestionTurns``: the questions of one key in flight answer earliest first, and a question
that leaves (answered, failed, cancelled) never holds the others up."""

from __future__ import annotations

import contextlib

import anyio
import pytest

from m3kit.harness.turns import QuestionTurns


async def _run(entries: list[tuple[str, float | None]], *, fail: set[int] = frozenset()
               ) -> list[int]:
    turns = QuestionTurns()
    order: list[int] = []

    async def sample(n: int, key: str, time: float | None) -> None:
        async with turns.place(key, time) as ticket:
            await anyio.sleep(0.01 * (len(entries) - n))  # later entries prepare faster
            if n in fail:
                raise ValueError("failed before its turn")
            await turns.wait(key, ticket)
            order.append(n)
            await anyio.sleep(0)

    async def guarded(n: int, key: str, time: float | None) -> None:
        with contextlib.suppress(ValueError):
            await sample(n, key, time)

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for n, (key, time) in enumerate(entries):
                group.start_soon(guarded, n, key, time)
    return order


def test_one_key_answers_earliest_first_undated_last() -> None:
    order = anyio.run(_run, [("k", 30.0), ("k", None), ("k", 10.0), ("k", 20.0)])
    assert order == [2, 3, 0, 1]


def test_a_failed_question_does_not_block_its_key() -> None:
    order = anyio.run(lambda: _run([("k", 5.0), ("k", 1.0), ("k", 3.0)], fail={1}))
    assert order == [2, 0]


def test_keys_do_not_wait_for_each_other() -> None:
    # "b" at 1 s is not held up by "a" at 0.5 s: each key has its own line
    order = anyio.run(_run, [("a", 9.0), ("b", 1.0), ("a", 0.5)])
    assert order.index(2) < order.index(0)
    assert sorted(order) == [0, 1, 2]


def test_leave_is_safe_twice() -> None:
    turns = QuestionTurns()
    ticket = turns.enter("k", 1.0)
    turns.leave("k", ticket)
    turns.leave("k", ticket)
    with pytest.raises(KeyError):
        anyio.run(turns.wait, "k", ticket)  # no line for "k" any more
