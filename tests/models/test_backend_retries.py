"""A construction pipeline's model calls against a failing OpenAI-compatible server (the
scripted server on loopback): retried with backoff, each retry announced, a hung attempt
abandoned, then one typed error; the call count says what happened."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from m3kit.errors import M3kitError
from m3kit.models.backend import (
    BackendError,
    BackendRequest,
    InspectBackend,
    backoff_seconds,
    call_json,
)


def _backend(model: str, **options: object) -> tuple[InspectBackend, list[str]]:
    said: list[str] = []
    backend = InspectBackend(model, backoff_base=0.05, notify=said.append, **options)
    return backend, said


def test_backoff_doubles_up_to_its_cap() -> None:
    assert [backoff_seconds(k) for k in (1, 2, 3, 4)] == [2.0, 4.0, 8.0, 16.0]
    assert backoff_seconds(10) == 30.0
    assert backoff_seconds(3, base=0.5, cap=1.5) == 1.5


def test_server_errors_are_retried_then_answered(scripted, serve) -> None:
    server = scripted(faults={"q1": ["server_error", "server_error"]},
                      answers={"q1": "fine"})
    backend, said = _backend(serve("flaky", server), max_attempts=3)
    try:
        assert backend.complete(BackendRequest("captions", "v1", "hi qid=q1")) == "fine"
    finally:
        backend.close()
    assert [r.outcome for r in server.records] == ["server_error", "server_error", "answer"]
    assert len(said) == 2 and "InternalServerError on captions v1 (attempt 1 of 3)" in said[0]
    assert "retrying in 0.05 s" in said[0] and "retrying in 0.1 s" in said[1]
    count = backend.call_count
    assert (count.answered, count.retried, count.failed) == (1, 2, 0)
    assert count.describe() == ("model calls: 1 answered, 2 retried, 0 failed (failed "
                                "attempts: 2× InternalServerError)")


def test_a_server_that_keeps_failing_stops_after_its_attempts(scripted, serve) -> None:
    server = scripted(faults={"q1": ["server_error"] * 10})
    backend, said = _backend(serve("down", server), max_attempts=2)
    try:
        with pytest.raises(BackendError) as info:
            backend.complete(BackendRequest("questions", "pair01", "hi qid=q1"))
    finally:
        backend.close()
    assert len(server.records) == 2  # two attempts in total, one request each
    text = str(info.value)
    assert "InternalServerError" in text and "(after 2 attempts)" in text
    assert "RetryError" not in text  # the provider's own error, not the wrapper's
    assert len(said) == 1
    assert backend.call_count.failed == 1 and backend.call_count.answered == 0


def test_a_hung_attempt_is_abandoned(scripted, serve) -> None:
    server = scripted(faults={"q1": ["hang"]}, answers={"q1": "late but fine"}, hang_s=5.0)
    backend, said = _backend(serve("slow", server), max_attempts=2, attempt_timeout=1.0)
    try:
        assert backend.complete(BackendRequest("nback", "i1", "hi qid=q1")) == "late but fine"
    finally:
        backend.close()
    assert "TimeoutError" in said[0]
    assert backend.call_count.kinds == {"TimeoutError": 1}


def test_attempts_and_timeout_are_checked() -> None:
    from m3kit.errors import M3kitError

    with pytest.raises(M3kitError, match="at least 1"):
        InspectBackend("mockllm/model", max_attempts=0)
    with pytest.raises(M3kitError, match="> 0"):
        InspectBackend("mockllm/model", attempt_timeout=0)


class _Pair(BaseModel):
    reason: str = ""
    answer: str


@pytest.mark.parametrize("structured", ["json_schema", "json_object"])
def test_a_reply_schema_reaches_the_server_when_asked(scripted, serve, structured) -> None:
    # the schema a JSON reply must follow, every field required in declared order (reasons
    # first), sent in the form the server decodes by: OpenAI's json_schema, llama.cpp's
    # json_object; off sends none
    server = scripted(answers={"q1": '{"reason": "seen at 3 s", "answer": "the shelf"}'})
    # a service name of its own per case: inspect keeps a model per name, bound to its server
    service = "strict" + structured.replace("_", "")
    backend, _ = _backend(serve(service, server), structured=structured)
    plain, _ = _backend(serve(service, server))
    try:
        got = call_json(backend, BackendRequest("plan", "p1", "qid=q1"), _Pair)
        call_json(plain, BackendRequest("plan", "p1", "qid=q1"), _Pair)
    finally:
        backend.close()
        plain.close()
    assert got == _Pair(reason="seen at 3 s", answer="the shelf")
    sent, unconstrained = (r.response_format for r in server.records)
    assert unconstrained is None
    if structured == "json_schema":
        assert sent["type"] == "json_schema" and sent["json_schema"]["name"] == "plan"
        schema = sent["json_schema"]["schema"]
    else:
        assert sent["type"] == "json_object"
        schema = sent["schema"]
    assert list(schema["properties"]) == ["reason", "answer"]
    assert schema["required"] == ["reason", "answer"]
    assert backend.settings()["structured"] == structured and "structured" not in plain.settings()


def test_an_unknown_structured_output_is_named() -> None:
    with pytest.raises(M3kitError, match="structured output is one of off, json_schema"):
        InspectBackend("mockllm/model", structured="grammar")  # type: ignore[arg-type]
