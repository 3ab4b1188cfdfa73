"""A tiny synthetic egocentric suite to review, copied per test (decisions and exports are
written beside it), and the review app over it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from m3kit.synth.ego import EgoSuite, EgoSuiteConfig, build_ego_suite

# 2 persons × 3 days of 8 scenes of 6 s at 1 fps; person 1's second day is transcript-only.
TINY = EgoSuiteConfig(seed=5, persons=2, sessions=3, segments=8, fps=1.0, size=256,
                      answerable_per_skill=2, unanswerable=3)


@pytest.fixture(scope="session")
def review_suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("review_suite"), TINY)


@pytest.fixture
def suite_root(review_suite: EgoSuite, tmp_path: Path) -> Path:
    """A fresh copy of the suite (its decisions and exports are the test's own)."""
    root = tmp_path / "suite"
    shutil.copytree(review_suite.root, root)
    return root
