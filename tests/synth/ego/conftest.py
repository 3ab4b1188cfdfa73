"""A tiny egocentric suite, built once per test session (real rendering, a few seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.synth.ego import EgoSuite, EgoSuiteConfig, build_ego_suite

# 2 persons × 3 days of 8 scenes of 6 s at 1 fps; person 1's second day is transcript-only.
TINY = EgoSuiteConfig(seed=5, persons=2, sessions=3, segments=8, fps=1.0, size=256,
                      answerable_per_skill=2, unanswerable=3)


@pytest.fixture(scope="session")
def ego_suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("ego_suite"), TINY)


@pytest.fixture(scope="session")
def ego_root(ego_suite: EgoSuite) -> Path:
    return ego_suite.root
