"""A provider that fails: retried with backoff, then recorded as failed and counted wrong; the run
goes on; the API key never reaches the log."""

from __future__ import annotations

import zipfile
from collections import Counter
from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.score import result_rows, sample_results
from m3kit.benchmarks.m3eval.task import m3eval_task
from m3kit.report.logs import read_samples

FAULTS = {
    "q0": ["rate_limit"],  # recovers on the second request
    "q1": ["server_error"] * 10,  # never recovers: failed
    "q2": ["garbage"],  # unreadable 200, then fine
    "q3": ["hang"],  # no reply within the attempt timeout, then fine
    "q4": ["down"],  # connection dropped, then fine
}
ANSWERS = {
    "q5": "Looking closely.\nThe final answer is B",  # the intrusion
    "q6": "the answer is a",  # invalid
}


@pytest.mark.slow
def test_faults_are_retried_then_failed_and_counted(
    tmp_path, monkeypatch, scripted, serve, secret, questions, make_q, probe_video
):
    questions = [*questions, make_q(6, probe_video)]
    server = scripted(faults=FAULTS, answers=ANSWERS, api_key=secret, hang_s=6.0)
    model = serve("faulty", server)
    task = m3eval_task(questions, name="faults", frames=2, cache=False)
    # two attempts in total per call (the OpenAI SDK's own retries are off).
    # The attempt timeout leaves room for the first call's imports in this process.
    log = run_benchmark_task(task, model, log_dir=tmp_path / "logs",
                             max_connections=8, max_retries=2, attempt_timeout=3)

    assert log.status == "success"
    outcomes = Counter((r.key, r.outcome) for r in server.records)
    assert outcomes[("q0", "rate_limit")] == 1 and outcomes[("q0", "answer")] == 1
    assert outcomes[("q1", "server_error")] == 2  # both attempts, then given up
    assert outcomes[("q2", "garbage")] == 1 and outcomes[("q2", "answer")] == 1
    assert outcomes[("q3", "hang")] == 1 and outcomes[("q3", "answer")] == 1
    assert outcomes[("q4", "down")] == 1 and outcomes[("q4", "answer")] == 1
    # every request carried the two frames as images
    assert {r.images for r in server.records} == {2}

    by_id = {r.answer.id: r for r in sample_results(read_samples(log))}
    assert by_id["q1"].answer.status == "failed"
    assert "InternalServerError" in by_id["q1"].answer.reason
    assert by_id["q5"].answer.status == "incorrect" and by_id["q5"].answer.role == "intrusion"
    assert by_id["q6"].answer.status == "invalid"
    for qid in ("q0", "q2", "q3", "q4"):
        assert by_id[qid].answer.status == "correct", qid
        assert by_id[qid].usage.images_sent == 2 and by_id[qid].usage.completion_tokens > 0

    # inspect's own metrics and m3kit's table agree: the failure is in the denominator
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 4 / 7
    assert metrics["failed_count"].value == 1 and metrics["invalid_count"].value == 1
    assert metrics["intrusion_rate"].value == 1 / 7
    overall = result_rows(read_samples(log))[0]
    assert (overall.n, overall.failed, overall.invalid) == (7, 1, 1)
    assert overall.accuracy == 4 / 7

    # the key is nowhere in the log (sample metadata, model calls, errors, eval spec)
    raw = Path(log.location).read_bytes()
    assert secret.encode() not in raw
    with zipfile.ZipFile(log.location) as archive:
        for name in archive.namelist():
            assert secret.encode() not in archive.read(name), name


def test_frame_paths_in_metadata_and_no_images_in_log(
    tmp_path, scripted, serve, questions
):
    server = scripted()
    model = serve("small", server)
    task = m3eval_task(questions[:2], name="small", frames=4)
    log = run_benchmark_task(task, model, log_dir=tmp_path / "logs")
    assert log.status == "success"
    for sample in log.samples:
        record = sample.metadata["m3kit"]
        assert len(record["frames"]) == 4 and all(Path(p).is_file() for p in record["frames"])
        assert record["usage"]["images_sent"] == 4
    with zipfile.ZipFile(log.location) as archive:
        for name in archive.namelist():
            assert b"data:image/jpeg;base64" not in archive.read(name), name
    assert Path(log.location).stat().st_size < 200_000


def test_response_cache_is_scoped_and_on_by_default(tmp_path, scripted, serve, questions):
    server = scripted()
    model = serve("cached", server)
    qs = questions[:2]
    run_benchmark_task(m3eval_task(qs, name="c", frames=1), model, log_dir=tmp_path / "logs")
    assert len(server.records) == 2
    run_benchmark_task(m3eval_task(qs, name="c", frames=1), model, log_dir=tmp_path / "logs")
    assert len(server.records) == 2  # answered from the cache
    # other model arguments: a different cache scope, so the model is asked again
    run_benchmark_task(m3eval_task(qs, name="c", frames=1), model,
                       model_args={"organization": "org-b"}, log_dir=tmp_path / "logs")
    assert len(server.records) == 4
    # cache off: always asked
    run_benchmark_task(m3eval_task(qs, name="c", frames=1, cache=False), model,
                       log_dir=tmp_path / "logs")
    assert len(server.records) == 6
