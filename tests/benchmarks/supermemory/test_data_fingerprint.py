"""Two SuperMemory-VQA data sets with the same questions but other videos or transcripts are
two data sets: other data fingerprints (the run's card and ``m3kit score``'s), two report
rows, and ``m3kit compare`` says the runs read different data."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from m3kit.benchmarks import benchmark_named, run_benchmark_task
from m3kit.benchmarks.supermemory.report import _systems, main_table
from m3kit.benchmarks.supermemory.task import supermemory
from m3kit.report.build import build_report
from m3kit.report.compare import compare_runs, comparison_blocks, run_items
from m3kit.report.inputs import pooled_runs, read_inputs
from m3kit.schema.card import TASK_CARD_KEY, files_fingerprint
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

SMALL = {"seed": 0, "persons": 1, "sessions": 2, "segments": 8, "answerable_per_skill": 1,
         "unanswerable": 2}
QA = Path("data") / "json" / "all_qa.json"


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The same seeded suite twice, at two frame sizes: the same questions, other videos."""
    made = []
    for size in (128, 160):
        root = tmp_path_factory.mktemp(f"ego{size}")
        made.append(build_ego_suite(root, EgoSuiteConfig(size=size, **SMALL)).root)
    return made[0], made[1]


def _fingerprint(data: Path) -> str:
    card = supermemory(data=str(data), frames=2).metadata[TASK_CARD_KEY]
    return card["data_fingerprint"]


def test_the_same_questions_over_other_videos_are_another_data_set(suites) -> None:
    a, b = suites
    assert (a / QA).read_bytes() == (b / QA).read_bytes()
    # the question file alone, as the fingerprint was, cannot tell them apart
    assert files_fingerprint([a / QA]) == files_fingerprint([b / QA])
    assert _fingerprint(a) != _fingerprint(b)
    # m3kit score's card names the same data set as a run's
    supermemory_benchmark = benchmark_named("supermemory")
    assert supermemory_benchmark is not None
    card = supermemory_benchmark.predictions_card(a, a / "none.jsonl", {})
    assert card.data_fingerprint == _fingerprint(a)


def test_a_changed_transcript_changes_the_fingerprint(suites, tmp_path: Path) -> None:
    edited = tmp_path / "edited"
    shutil.copytree(suites[0], edited)
    before = _fingerprint(edited)
    transcript = next(edited.glob("data/transcripts/*/*_gemini_aligned_transcript.json"))
    said = json.loads(transcript.read_text(encoding="utf-8"))
    said["transcript"][0]["text"] = "Something else was said."
    transcript.write_text(json.dumps(said), encoding="utf-8")
    assert _fingerprint(edited) != before
    assert _fingerprint(edited) != _fingerprint(suites[0])


@pytest.mark.slow
def test_runs_on_either_are_two_report_rows_and_compare_flags_them(suites,
                                                                   tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    for name, data in zip("ab", suites, strict=True):
        log = run_benchmark_task("supermemory", "m3kit/builtin",
                                 task_args={"data": str(data), "frames": 2,
                                  "frame_store": str(tmp_path / "frames")},
                                 log_dir=logs / name, cache=False)
        assert log.status == "success", log.error
    benchmark = benchmark_named("supermemory")
    assert benchmark is not None
    runs = pooled_runs(benchmark, read_inputs([logs]).logs)
    # one model, one setting otherwise: the data alone tells the two rows apart
    assert len(runs) == 2
    assert all(run.variant.startswith("data ") for run in runs)
    assert {run.card.data_fingerprint for run in runs if run.card} == {
        _fingerprint(suites[0]), _fingerprint(suites[1])}
    assert build_report([logs], tmp_path / "report").is_file()
    # the paper's tables too: Table 2 gives each data set its own framework columns, n each
    table = main_table(_systems(benchmark, runs))
    assert len(table.header_groups) == 3
    assert all(" · data " in name for name, _ in table.header_groups[1:])
    assert [cell for i, cell in enumerate(table.rows[0]) if table.columns[i] == "n"] == [
        len(runs[0].samples), len(runs[1].samples)]
    a, b = (run_items(benchmark, run, run.location) for run in runs)
    comparison = compare_runs(a, b, resamples=50)
    assert "data_fingerprint" in comparison.card_differences
    assert comparison.other_data
    assert any(isinstance(block, str) and block.startswith("The runs were made on different "
                                                           "data") for block in
               comparison_blocks(comparison))
