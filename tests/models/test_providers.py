"""The ``m3kit`` model API as inspect sees it: names, dispatch, and a whole eval."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ChatMessageUser, ContentText, get_model
from inspect_ai.scorer import match
from inspect_ai.solver import generate

import m3kit.models  # noqa: F401  (registers the m3kit model API)
from m3kit.models import frames_to_content
from m3kit.models.builtin import BuiltinModelAPI
from m3kit.models.errors import ModelArgError, ModelLoadError


def test_names_resolve_to_providers(tmp_path: Path) -> None:
    model = get_model("m3kit/builtin", memoize=False)
    assert str(model) == "m3kit/builtin"
    assert isinstance(model.api, BuiltinModelAPI)
    assert model.api.max_connections() == 1
    with pytest.raises(ModelArgError, match="m3kit/nonsense"):
        get_model("m3kit/nonsense", memoize=False)
    with pytest.raises(ModelLoadError, match="never downloads"):
        get_model("m3kit/hf/Qwen/Qwen2.5-VL-7B-Instruct", memoize=False)
    with pytest.raises(ModelArgError, match="model_path"):
        get_model("m3kit/hf", memoize=False)


def test_builtin_runs_an_inspect_eval(
    builtin: Any, render_frame: Callable[..., Path], tmp_path: Path
) -> None:
    """A sample whose image is a file path: inspect inlines it, the builtin reads it."""
    frame = render_frame("room", ["The meeting is in Room 42"])
    prompt = ("Which room is the meeting in?\nA. Room 17\nB. Room 42\nC. Room 24\n"
              "Answer with the option's letter from the given choices directly.")
    sample = Sample(
        id="room",
        input=[ChatMessageUser(content=[*frames_to_content([frame]), ContentText(text=prompt)])],
        target="B",
    )
    task = Task(dataset=[sample], solver=generate(), scorer=match(location="exact"))
    [log] = eval(task, model=builtin, log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    assert log.samples is not None
    [result] = log.samples
    assert result.output.completion == "B"
    assert result.scores is not None and result.scores["match"].value == "C"
    assert result.output.metadata["m3kit"]["images"] == 1
