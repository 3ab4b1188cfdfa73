"""The synthetic suite runs through the same tasks and the same M3Eval scoring; blind runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import score_outputs, scores_from_log
from m3kit.benchmarks.m3eval.task import load_suite_questions
from m3kit.report.logs import read_samples
from m3kit.synth import SuiteConfig, build_suite

# One pair of 8 s sources: divided attention and interference only (a few seconds to render).
TINY = SuiteConfig(
    seed=3, pairs=1, beats=8, beat_seconds=1.0, swaps=[0, 3],
    paradigms=["divided_attention", "interference"], interference_questions=1,
    source_memory_questions=2,
)


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("synth_for_scoring")
    build_suite(root, TINY)
    return root


@pytest.mark.parametrize("paradigm", ["divided_attention", "interference"])
def test_synth_blind_run_scores_in_the_paper_columns(suite_dir: Path, tmp_path: Path,
                                                     paradigm: str) -> None:
    log = run_benchmark_task(f"synth_{paradigm}", "m3kit/builtin",
                             task_args={"suite": str(suite_dir), "blind": True},
                             log_dir=tmp_path / "logs")
    assert log.status == "success"
    assert log.eval.metadata["m3kit_blind"] is True
    assert all(s.metadata["m3kit"]["frames"] == [] for s in log.samples)
    card = scores_from_log(read_samples(log))
    questions, _ = load_suite_questions(suite_dir, paradigm)
    outputs = {str(s.id): s.output.completion for s in log.samples}
    assert card == score_outputs(questions, outputs)
    result = card.model_dump()
    assert result["n_scored"] == len(questions) and result["n_excluded"] == 0
    if paradigm == "divided_attention":
        cells = result["divided_attention"]
        # swap3 counts as "swap", swap0 as "no swap"; every storyline column is filled
        assert all(v is not None for v in cells["no_swap"].values())
        assert all(v is not None for v in cells["swap"].values())
        assert cells["spatial_source_grounding"] is not None
    else:
        cells = result["memory_interference"]
        assert set(cells) >= {"proactive", "retroactive", "repeat_target",
                              "repeat_interferer", "delta"}
        assert all(cells[k]["intrusion_rate"] is not None
                   for k in ("proactive", "retroactive"))
