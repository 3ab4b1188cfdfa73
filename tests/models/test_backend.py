"""The construction pipelines' model-call backend: JSON replies, request keys, the call cache."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pydantic import BaseModel

from m3kit.errors import SchemaError
from m3kit.models.backend import BackendRequest, extract_json, json_object_reply
from m3kit.models.call_cache import CachedBackend, ResultCache, call_key


class Replies:
    """A backend named ``name`` that answers with ``replies`` in order and records requests."""

    def __init__(self, name: str, *replies: str) -> None:
        self.name, self.replies, self.calls = name, list(replies), []

    def complete(self, request: BackendRequest) -> str:
        self.calls.append(request)
        return self.replies.pop(0)


class Unit(BaseModel):
    text: str


def test_strict_reading_takes_one_object_alone_or_in_one_fence():
    assert extract_json('```json\n{"a": 1}\n```', strict=True) == {"a": 1}
    assert extract_json('  {"a": [1, 2]}  ', strict=True) == {"a": [1, 2]}
    with pytest.raises(ValueError, match="not one JSON object"):
        extract_json('Sure: {"a": 1}', strict=True)
    with pytest.raises(ValueError, match="not an object"):
        extract_json("[1, 2]", strict=True)
    # the lenient reading finds the same object inside prose
    assert extract_json('Sure: {"a": 1} done') == {"a": 1}


def test_json_object_reply_raises_the_callers_error_naming_file_and_record(tmp_path):
    with pytest.raises(SchemaError) as info:
        json_object_reply("no json", SchemaError, path=tmp_path / "v.mp4", record="batch 2")
    assert (info.value.path, info.value.record) == (str(tmp_path / "v.mp4"), "batch 2")
    assert info.value.reason.startswith("not one JSON object")


def test_request_key_covers_prompt_attempt_and_image_pixels():
    frame = np.zeros((2, 2, 3), np.uint8)
    base = BackendRequest("s", "i", "p", (frame,))
    assert base.key() == BackendRequest("s", "i", "p", (frame.copy(),)).key()
    other = frame.copy()
    other[0, 0, 0] = 1
    keys = {base.key(), BackendRequest("s", "i", "p", (other,)).key(),
            BackendRequest("s", "i", "q", (frame,)).key(), base.retry("p", 1).key()}
    assert len(keys) == 4


def test_call_cache_replays_the_same_model_and_asks_another(tmp_path):
    path = tmp_path / "calls.jsonl"
    first = Replies("model-a", "one")
    assert CachedBackend(first, path).complete(BackendRequest("s", "i", "p")) == "one"
    same = Replies("model-a")
    assert CachedBackend(same, path).complete(BackendRequest("s", "i", "p")) == "one"
    assert same.calls == []
    other = Replies("model-b", "two")
    assert CachedBackend(other, path).complete(BackendRequest("s", "i", "p")) == "two"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["response"] for line in lines] == ["one", "two"]


def test_result_cache_keeps_units_atomically_and_redoes_a_changed_key(tmp_path):
    cache = ResultCache(tmp_path / "generation", "model-a")
    key = cache.key("prompt", ["/v.mp4", 10, 5])
    assert key == call_key("model-a", "prompt", ["/v.mp4", 10, 5])
    assert cache.get("captions", "v 1", key, Unit) is None
    cache.put("captions", "v 1", key, Unit(text="a cook"))
    assert cache.get("captions", "v 1", key, Unit) == Unit(text="a cook")
    assert cache.get("captions", "v 1", cache.key("another prompt"), Unit) is None
    assert sorted(p.name for p in (tmp_path / "generation" / "captions").iterdir()) == [
        "v_1.json"]
    # another model keys the same inputs differently
    assert ResultCache(tmp_path / "generation", "model-b").key("prompt", ["/v.mp4", 10, 5]) != key
