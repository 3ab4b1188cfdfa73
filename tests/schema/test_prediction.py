"""Predictions and their usage accounting."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from m3kit.schema import Prediction, Usage


def test_usage_defaults_are_zero() -> None:
    u = Usage()
    assert u.model_dump() == {
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "images_sent": 0,
        "raw_media_escalations": 0,
        "index_build_seconds": 0.0,
        "model_calls": 0,
        "retrieved_ids": [],
        "ingest_events": 0,
        "ingest_calls": 0,
        "ingest_prompt_tokens": 0,
        "ingest_completion_tokens": 0,
        "ingest_seconds": 0.0,
        "ingest_replays": 0,
    }
    assert u.total_tokens == 0


def test_usage_sum() -> None:
    a = Usage(prompt_tokens=100, completion_tokens=7, images_sent=2, retrieved_ids=["D1:1"])
    b = Usage(
        prompt_tokens=50, raw_media_escalations=1, index_build_seconds=1.5, retrieved_ids=["D2:3"]
    )
    total = a + b
    assert total == Usage(
        prompt_tokens=150,
        completion_tokens=7,
        images_sent=2,
        raw_media_escalations=1,
        index_build_seconds=1.5,
        retrieved_ids=["D1:1", "D2:3"],
    )
    assert total.total_tokens == 157


def test_usage_rejects_negative_counts() -> None:
    with pytest.raises(ValidationError):
        Usage(prompt_tokens=-1)
    with pytest.raises(ValidationError):
        Usage(index_build_seconds=-0.5)


def test_prediction_round_trip() -> None:
    p = Prediction(
        id="m3eval-mi-0001",
        prediction="The answer is B.",
        model="m3kit/builtin",
        usage=Usage(prompt_tokens=812, completion_tokens=5, images_sent=16),
        metadata={"memory": "context", "budget": 8192},
    )
    back = Prediction.model_validate_json(p.model_dump_json())
    assert back == p
    assert back.usage is not None and back.usage.images_sent == 16


def test_failed_prediction_carries_error() -> None:
    p = Prediction(id="q7", error="model call timed out after 60 s")
    assert p.prediction == ""
    assert json.loads(p.model_dump_json()) == {
        "id": "q7",
        "prediction": "",
        "model": None,
        "usage": None,
        "error": "model call timed out after 60 s",
        "metadata": {},
    }


def test_prediction_forbids_unknown_fields() -> None:
    with pytest.raises(ValidationError):
        Prediction(id="q", prediction="A", answer="A")  # type: ignore[call-arg]
