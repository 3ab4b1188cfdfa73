"""``m3kit eval --executor``: the memory's setting, refused without a memory or by an unknown
name."""

from __future__ import annotations

import pytest

from m3kit.cli.eval import _with_executor
from m3kit.errors import M3kitError


def test_executor_joins_the_memory_settings():
    args = _with_executor({"memory_config": {"k": 3}, "frames": 8}, "ray", "videorag")
    assert args == {"memory_config": {"k": 3, "executor": "ray"}, "frames": 8}
    assert _with_executor({"frames": 8}, None, None) == {"frames": 8}


def test_executor_needs_a_memory_and_a_known_name():
    with pytest.raises(M3kitError, match="give --memory"):
        _with_executor({}, "ray", None)
    with pytest.raises(M3kitError, match="unknown executor"):
        _with_executor({}, "dask", "videorag")
