"""A tiny synthetic suite, built once per test session (real rendering, a few seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.synth import Suite, SuiteConfig, build_suite

# One pair of 8 s sources (8 beats of 1 s at 10 fps); every paradigm and question kind.
TINY = SuiteConfig(
    seed=7, pairs=1, beats=8, beat_seconds=1.0, swaps=[0, 3], interleave_segments=[4],
    interference_questions=2, false_memory_questions=2, source_memory_questions=2,
    nback_n=[1, 2], nback_k=[3], nback_trials=2,
)


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("synth_suite")


@pytest.fixture(scope="session")
def tiny_suite(tiny_dir: Path) -> Suite:
    return build_suite(tiny_dir, TINY)
