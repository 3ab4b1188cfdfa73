import json

import pytest
from pydantic import BaseModel

from m3kit.benchmarks.m3exam.construct import (
    BackendRequest,
    CachedBackend,
    InspectBackend,
    MalformedReplyError,
    call_json,
    extract_json,
)
from m3kit.errors import M3kitError


class Pair(BaseModel):
    a: int
    b: str


def test_extract_json_from_fence_prose_and_bare():
    assert extract_json('Sure!\n```json\n{"a": 1}\n```\nbye') == {"a": 1}
    assert extract_json('The list is [1, 2] as asked') == [1, 2]
    assert extract_json('{"a": [1, {"b": 2}]} trailing') == {"a": [1, {"b": 2}]}
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("no json here")
    with pytest.raises(ValueError, match="invalid JSON"):
        extract_json('{"a": 1,,}')


def test_call_json_retries_with_the_error_then_accepts(scripted):
    backend = scripted({"stage.x": ["not json at all", '{"a": "one", "b": "x"}',
                                           '{"a": 1, "b": "x"}']})
    value = call_json(backend, BackendRequest("stage.x", "item-7", "give a pair"), Pair)
    assert value == Pair(a=1, b="x")
    assert len(backend.calls) == 3
    # the retry prompt carries the reason the previous answer was rejected
    assert "no JSON object" in backend.calls[1].prompt
    assert "a: Input should be a valid integer" in backend.calls[2].prompt


def test_call_json_check_rejects_and_gives_up_with_a_typed_error_naming_stage_and_item(scripted):
    def positive(p: Pair) -> None:
        if p.a <= 0:
            raise ValueError("a must be positive")

    backend = scripted({"stage.y": ['{"a": -1, "b": "x"}'] * 3})
    with pytest.raises(MalformedReplyError) as info:
        call_json(backend, BackendRequest("stage.y", "item-3", "p"), Pair, retries=2,
                  check=positive)
    err = info.value
    assert isinstance(err, M3kitError)
    assert (err.field, err.record) == ("stage.y", "item-3")
    assert "a must be positive" in str(err) and "3 tries" in str(err)
    assert len(backend.calls) == 3


def test_inspect_backend_runs_a_real_inspect_model():
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    replies = iter(["garbage", 'ok: {"a": 2, "b": "y"}'])
    seen = []

    def respond(messages, tools, tool_choice, config):
        seen.append((messages[-1].text, config.seed, config.temperature))
        output = ModelOutput.from_content(model="mockllm", content=next(replies))
        # set explicitly: mockllm would otherwise count tokens with tiktoken (a download)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1)
        return output

    model = get_model("mockllm/model", custom_outputs=respond, memoize=False)
    backend = InspectBackend(model, seed=3)
    try:
        assert call_json(backend, BackendRequest("s", "i", "p"), Pair) == Pair(a=2, b="y")
    finally:
        backend.close()
    # greedy and seeded; the retry samples with a seed of its own (a greedy model would
    # repeat itself on an unchanged prompt): both reproducible
    assert [(s, t) for _, s, t in seen] == [(3, 0.0), (4, 0.7)]
    assert seen[0][0] == "p" and "rejected" in seen[1][0]


def test_cached_backend_replays_and_survives_a_cut_line(tmp_path, scripted):
    cache = tmp_path / "calls.jsonl"
    first = scripted({"s": ["one", "two"]})
    cached = CachedBackend(first, cache)
    assert cached.complete(BackendRequest("s", "a", "p")) == "one"
    assert cached.complete(BackendRequest("s", "b", "p")) == "two"
    with cache.open("a") as fh:
        fh.write('{"key": "cut')  # a kill in the middle of a write
    second = scripted({"s": ["fresh"]})
    replay = CachedBackend(second, cache)
    assert replay.complete(BackendRequest("s", "b", "p")) == "two"
    assert second.calls == []
    assert replay.complete(BackendRequest("s", "c", "p")) == "fresh"
    records = [json.loads(line) for line in cache.read_text().splitlines()[:2]]
    assert [(r["stage"], r["item"]) for r in records] == [("s", "a"), ("s", "b")]


def test_a_cached_backend_never_replays_a_rejected_answer_to_a_retry(tmp_path, scripted):
    # the same wrong answer twice, then a good one: a retry is a fresh call, not a replay
    inner = scripted({"s": ["no", "no", '{"a": 1, "b": "z"}']})
    cached = CachedBackend(inner, tmp_path / "calls.jsonl")
    assert call_json(cached, BackendRequest("s", "i", "p"), Pair) == Pair(a=1, b="z")
    assert [c.attempt for c in inner.calls] == [0, 1, 2]
