"""ProcessLocal, ThreadProcessLocal and EngineThread: one value per process, a forked child's
made anew while the parent's stays untouched (m3kit.forks)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from m3kit.forks import EngineThread, ProcessLocal, ThreadProcessLocal

from .forking import check_in_forked_child


def test_a_process_local_is_made_once_per_process_and_anew_in_a_child() -> None:
    made: list[int] = []

    def make() -> list[int]:
        made.append(os.getpid())
        return [os.getpid()]

    local = ProcessLocal(make)
    assert local.peek() is None
    with ThreadPoolExecutor(8) as pool:  # many threads ask at once: one value
        values = list(pool.map(lambda _: local.get(), range(64)))
    assert all(v is values[0] for v in values) and made == [os.getpid()]
    parent_value = local.get()

    def child() -> bool:
        value = local.get()
        return (value == [os.getpid()] and value is not parent_value
                and local._inherited == [parent_value] and parent_value == [made[0]])

    check_in_forked_child(child)
    assert local.get() is parent_value and local.take() is parent_value
    assert local.peek() is None and local.get() is not parent_value


def test_a_lock_held_by_another_thread_at_the_fork_does_not_block_the_child() -> None:
    # a parent thread is inside the factory's lock when the fork happens
    entered, release = threading.Event(), threading.Event()

    def slow() -> str:
        entered.set()
        release.wait()
        return "parent's"

    local = ProcessLocal(slow)
    thread = threading.Thread(target=local.get)
    thread.start()
    entered.wait()
    try:
        local._factory = lambda: "child's"  # type: ignore[method-assign]
        check_in_forked_child(lambda: local.get() == "child's")
    finally:
        release.set()
        thread.join()
    assert local.get() == "parent's"


def test_a_thread_process_local_is_one_per_thread_and_anew_in_a_child() -> None:
    local = ThreadProcessLocal(object)
    mine = local.get()
    assert local.get() is mine
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(local.get).result() is not mine
    check_in_forked_child(lambda: local.get() is not mine and local._inherited == [mine])
    assert local.get() is mine


def test_an_engine_thread_loads_once_and_runs_every_call_on_its_own_thread() -> None:
    loads: list[str] = []

    def load() -> list[str]:
        loads.append(threading.current_thread().name)
        return []

    engine: EngineThread[list[str]] = EngineThread(load, name="m3kit-test-engine")
    assert not engine.loaded
    names = [engine.run(lambda e: threading.current_thread().name) for _ in range(3)]
    assert engine.loaded and len(loads) == 1
    assert set(names) == {loads[0]} and loads[0].startswith("m3kit-test-engine")

    def failing(_: list[str]) -> None:
        raise ValueError("the engine's own error")

    try:
        engine.run(failing)
    except ValueError as exc:
        assert str(exc) == "the engine's own error"
    else:
        raise AssertionError("the engine's error was not raised")

    def child() -> bool:  # a thread and an engine of the child's own
        engine.run(lambda e: e.append("child"))
        return len(loads) == 2 and engine.run(lambda e: e) == ["child"]

    check_in_forked_child(child)
    assert engine.run(lambda e: e) == [] and len(loads) == 1
    engine.close()
    assert not engine.loaded
    assert engine.run(lambda e: e) == [] and len(loads) == 2  # a new thread loads again
    engine.close()


def test_what_exists_at_a_fork_is_never_finalised_in_the_child_and_is_in_the_parent() -> None:
    import gc

    finalised: list[int] = []

    class Owner:
        def __del__(self) -> None:
            finalised.append(os.getpid())

    gc.disable()
    try:
        cycle: list[object] = [Owner()]
        cycle.append(cycle)
        del cycle
        frozen_before = gc.get_freeze_count()

        def child() -> bool:
            gc.collect()
            return finalised == []  # the parent's garbage stays as it was

        check_in_forked_child(child)
        assert gc.get_freeze_count() == frozen_before  # unfrozen again in the parent
    finally:
        gc.enable()
    gc.collect()
    assert finalised == [os.getpid()]
