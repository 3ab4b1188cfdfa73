"""The abstention threshold: the selection rule, and the default re-derived on synthetic data."""

from __future__ import annotations

from typing import Any

import pytest

from m3kit.models.builtin import DEFAULT_ABSTAIN_THRESHOLD
from m3kit.models.calibration import best_scores, synthetic_items
from m3kit.models.scoring import EvidenceScorer, calibrate_threshold


def test_threshold_sits_between_separable_sets() -> None:
    assert calibrate_threshold([0.7, 0.8, 0.9], [0.1, 0.3, 0.5]) == 0.6


def test_threshold_maximises_balanced_accuracy() -> None:
    # One unanswerable item scores high: cutting above it would lose two answerable items.
    answerable, unanswerable = [0.55, 0.6, 0.8, 0.9], [0.1, 0.2, 0.3, 0.7]
    threshold = calibrate_threshold(answerable, unanswerable)
    assert threshold == 0.425
    assert calibrate_threshold([0.5], [0.5]) == pytest.approx(0.5 - 1e-6, abs=1e-4)
    with pytest.raises(ValueError, match="both"):
        calibrate_threshold([], [0.2])


def test_synthetic_items_are_reproducible() -> None:
    items = synthetic_items(12, seed=3)
    assert items == synthetic_items(12, seed=3)
    assert sum(item.answerable for item in items) == 6
    for item in items:
        assert (item.answer in item.options) is item.answerable
        stated = [text for text in item.evidence if item.answer and item.answer in text]
        assert bool(stated) is item.answerable


def test_default_threshold_is_the_calibrated_one(embedder: Any) -> None:
    """Re-run the documented procedure (48 items, seed 0) with the default scorer."""
    answerable, unanswerable, accuracy = best_scores(
        EvidenceScorer(embedder), synthetic_items(48, seed=0)
    )
    assert round(calibrate_threshold(answerable, unanswerable), 2) == DEFAULT_ABSTAIN_THRESHOLD
    assert accuracy == 1.0  # the argmax finds the stated value on every answerable item
    assert min(answerable) > DEFAULT_ABSTAIN_THRESHOLD > max(unanswerable)
