"""End to end on a tiny synthetic egocentric suite (``m3kit.synth.ego``, the released layout):
``supermemory`` through direct, blind and a memory (``rag``) with ``m3kit/builtin``; every
reply parses; the log's numbers equal those of the same replies scored as a predictions file;
the report renders Tables 2-5, the figures and appendix E."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.protocol import ReportContext
from m3kit.benchmarks.supermemory import BENCHMARK
from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.benchmarks.supermemory.report import sections, system_label
from m3kit.benchmarks.supermemory.score import score_predictions, scores_from_log
from m3kit.report.build import build_report
from m3kit.report.logs import read_run, read_samples
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

RUNS = {"direct": {"frames": 4}, "blind": {"blind": True},
        "rag": {"memory": "rag", "memory_fps": 0.5}}


@pytest.fixture(scope="module")
def suite_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = EgoSuiteConfig(seed=0, persons=1, sessions=2, segments=8,
                            answerable_per_skill=1, unanswerable=2)
    return build_ego_suite(tmp_path_factory.mktemp("ego"), config).root


@pytest.fixture(scope="module")
def logs(suite_root: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("logs")
    made = {}
    for name, args in RUNS.items():
        log = run_benchmark_task("supermemory", "m3kit/builtin",
                                 task_args={"data": str(suite_root),
                                            "frame_store": str(out / "frames"), **args},
                                 log_dir=out / name, cache=False)
        assert log.status == "success", log.error
        made[name] = log
    return made


def test_the_suite_loads_without_a_skip(suite_root: Path) -> None:
    loaded = load_supermemory(suite_root)
    assert loaded.skipped == []
    assert {q.metadata["skill"] for q in loaded.questions} >= {"object_location_memory",
                                                                "conversational_memory"}


@pytest.mark.parametrize("name", list(RUNS))
def test_every_reply_is_a_full_ranking(logs, name: str) -> None:
    samples = read_samples(logs[name])
    assert samples
    for sample in samples:
        assert sample.item.status in ("correct", "incorrect"), sample.answer
        assert sorted(sample.item.ranking) == [0, 1, 2, 3]


@pytest.mark.parametrize("name", list(RUNS))
def test_log_and_predictions_file_score_alike(logs, name: str, suite_root: Path,
                                              tmp_path: Path) -> None:
    log = logs[name]
    from_log = scores_from_log(read_samples(log))
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"question_id": s.id,
                                         "prediction": s.output.completion}) + "\n"
                             for s in log.samples))
    from_file = score_predictions(suite_root, preds)
    for key in ("qa_acc", "ans_f1", "abstain_f1", "qa_mrr", "vague_credit_acc", "person_mean",
                "video_mean"):
        assert getattr(from_log, key) == getattr(from_file, key), key
    assert from_log.n == from_file.n == len(log.samples)


def test_memory_run_records_its_retrievals(logs) -> None:
    samples = read_samples(logs["rag"])
    assert all(s.usage.retrieved_ids for s in samples)
    assert all(s.usage.index_build_seconds > 0 for s in samples)


def test_report_has_the_papers_tables(logs, tmp_path: Path) -> None:
    runs = [read_run(log) for log in logs.values()]
    assert {system_label(r).split(" · ")[1] for r in runs} == {"direct (4 frames)", "blind",
                                                                "rag"}
    [section] = sections(ReportContext(benchmark=BENCHMARK, runs=runs, out_dir=tmp_path))
    titles = [t.title for t in section.tables]
    for wanted in ("Table 2", "Table 3", "Table 4", "Table 5", "Fig. 8", "data:"):
        assert any(wanted in t for t in titles), wanted
    assert sorted(section.figures) == ["supermemory_accuracy_by_skill.png",
                                       "supermemory_answerability.png"]
    assert all((tmp_path / f).stat().st_size > 0 for f in section.figures)
    main = section.tables[0]
    assert main.header_groups == [("", 1), ("direct (4 frames)", 4), ("rag", 4)]
    index = build_report([log.location for log in logs.values()], tmp_path / "html")
    assert "SuperMemory-VQA" in index.read_text()
