"""What the tests of every external system share: the model under evaluation, served by the
test file's scripted ``server`` (each file scripts the system's own calls its way), and ``ask``,
one question through a memory."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from fakeserver import ScriptedServer
from m3kit.memory.base import Memory, MemoryAnswer

DAY = 86_400.0
# The words planted after a question's time (later the same session, a later day) or in another
# key: none of them ever reaches a request made for the question.
PLANTED = ("PLANTEDSESSION", "PLANTEDDAY", "PLANTEDOTHER")


@pytest.fixture
def answer_model(server: ScriptedServer, serve: Callable[..., str]) -> Any:
    from inspect_ai.model import get_model

    return get_model(serve("scripted", server), memoize=False)


def ask(memory: Memory, key: str, question: str, model: Any, time: float | None
        ) -> MemoryAnswer:
    """``memory``'s answer to ``question`` about ``key`` at ``time`` (the question is the query)."""
    return asyncio.run(memory.answer(key, question, model, time=time, query=question))
