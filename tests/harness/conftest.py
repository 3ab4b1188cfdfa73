"""Harness fixtures: every test runs with isolated inspect/m3kit caches (``isolated_dirs``),
and a tiny question set on a real video (``questions``, ``suite_dir``). The question maker, the
probe video and the scripted OpenAI-compatible server are shared (``tests/conftest.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.schema import Question, write_jsonl

from ..conftest import make_question


@pytest.fixture(autouse=True)
def _isolated(isolated_dirs: Path) -> Path:
    return isolated_dirs


@pytest.fixture
def questions(probe_video: Path) -> list[Question]:
    return [make_question(i, probe_video) for i in range(6)]


@pytest.fixture
def suite_dir(tmp_path: Path, probe_video: Path) -> Path:
    """A suite directory in the synthetic suite's layout (``questions.jsonl``, relative media)."""
    root = tmp_path / "suite"
    root.mkdir()
    local = root / "probe.mp4"
    local.write_bytes(probe_video.read_bytes())
    qs = [make_question(i, Path("probe.mp4")) for i in range(3)]
    qs += [make_question(10 + i, Path("probe.mp4"), nback=True, k=4, n=1) for i in range(2)]
    write_jsonl(root / "questions.jsonl", qs)
    return root
