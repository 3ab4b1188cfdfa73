"""``--limit N --stratify``: N samples round-robin over the strata (question types by
default), in data set order within each; on a real run, inspect runs exactly those."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.dataset import Sample

from m3kit.benchmarks import run_benchmark_task
from m3kit.errors import M3kitError
from m3kit.harness.stratify import NO_STRATUM, sample_stratum, stratified_ids
from m3kit.schema import write_jsonl
from m3kit.schema.evallog import QUESTION_KEY


def _sample(i: int, qtype: str | None, **metadata: object) -> Sample:
    question = {"id": f"q{i}", "question_type": qtype, "metadata": metadata}
    return Sample(id=f"q{i}", input="x", metadata={QUESTION_KEY: question})


def test_round_robin_over_types_in_data_order() -> None:
    # stored by type, as M3Exam's question files are: the first 4 would all be "ss"
    samples = [_sample(i, t) for i, t in enumerate(["ss", "ss", "ss", "ss", "ms", "ms", "tr"])]
    assert stratified_ids(samples, 4) == ["q0", "q4", "q6", "q1"]
    # a type that runs out leaves its turns to the others
    assert stratified_ids(samples, 6) == ["q0", "q4", "q6", "q1", "q5", "q2"]
    assert stratified_ids(samples, 100) == ["q0", "q4", "q6", "q1", "q5", "q2", "q3"]
    with pytest.raises(M3kitError, match="at least 1"):
        stratified_ids(samples, 0)


def test_stratum_from_metadata_and_missing() -> None:
    sample = _sample(0, None, paradigm="nback")
    assert sample_stratum(sample, "metadata.paradigm") == "nback"
    assert sample_stratum(sample) == NO_STRATUM
    assert sample_stratum(Sample(id=1, input="x")) == NO_STRATUM


def test_joined_strata_spread_one_question_type_over_its_conditions() -> None:
    # N-back: one question type, four conditions stored in order
    samples = [_sample(i, "nback", condition=c)
               for i, c in enumerate(["n1k3"] * 3 + ["n1k4"] * 3 + ["n2k3"] * 3 + ["n2k4"] * 3)]
    joined = "question_type+metadata.condition"
    assert sample_stratum(samples[4], joined) == "nback/n1k4"
    assert sample_stratum(_sample(0, None, condition="x"), joined) == "-/x"
    assert sample_stratum(_sample(0, None), joined) == NO_STRATUM
    chosen = stratified_ids(samples, 4, lambda s: sample_stratum(s, joined))
    assert chosen == ["q0", "q3", "q6", "q9"]  # one per condition
    assert stratified_ids(samples, 4) == ["q0", "q1", "q2", "q3"]  # by type alone: data order


def test_a_stratified_run_runs_the_chosen_samples(tmp_path: Path, probe_video: Path,
                                                   make_q) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(probe_video.read_bytes())
    questions = [make_q(i, Path("probe.mp4")) for i in range(6)]
    # one condition: M3Eval's stratum is question type + condition
    questions = [q.model_copy(update={"question_type": t,
                                      "metadata": {**q.metadata, "condition": "retroactive"}})
                 for q, t in zip(questions, ["near", "near", "near", "far", "far", "far"],
                                 strict=True)]
    write_jsonl(suite / "questions.jsonl", questions)
    log = run_benchmark_task("synth_interference", "m3kit/builtin", limit=2, stratify=True,
                             task_args={"suite": str(suite), "frames": 2},
                             log_dir=tmp_path / "logs")
    assert sorted(str(s.id) for s in log.samples) == ["q0", "q3"]  # one of each type
    plain = run_benchmark_task("synth_interference", "m3kit/builtin", limit=2,
                               task_args={"suite": str(suite), "frames": 2},
                               log_dir=tmp_path / "logs")
    assert sorted(str(s.id) for s in plain.samples) == ["q0", "q1"]  # the first two
    with pytest.raises(M3kitError, match="needs --limit"):
        run_benchmark_task("synth_interference", "m3kit/builtin", stratify=True,
                           task_args={"suite": str(suite)}, log_dir=tmp_path / "logs")
