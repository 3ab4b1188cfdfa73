"""M3Eval's data fingerprint covers the probe videos its questions name, not the question files
alone, and a run's card names the same data set as ``m3kit score m3eval``'s."""

from __future__ import annotations

import shutil
from pathlib import Path

from m3kit.benchmarks import benchmark_named
from m3kit.benchmarks.m3eval.task import m3eval_nback
from m3kit.schema.card import TASK_CARD_KEY

from .conftest import NBACK


def _fingerprint(data: Path) -> str:
    return m3eval_nback(data=str(data)).metadata[TASK_CARD_KEY]["data_fingerprint"]


def test_a_replaced_probe_video_changes_the_fingerprint(released_root: Path, tmp_path: Path,
                                                        pattern_video_factory) -> None:
    data = tmp_path / "release"
    shutil.copytree(released_root, data)
    before = _fingerprint(data)
    declared = benchmark_named("m3eval")
    assert declared is not None
    assert declared.predictions_card(data, data / "none.jsonl", {}).data_fingerprint == before
    other = pattern_video_factory(seconds=2.0, fps=10.0, width=64, height=48)
    (data / NBACK).write_bytes(other.read_bytes())
    assert _fingerprint(data) != before
