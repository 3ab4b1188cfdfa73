"""Logs of one system are one run in the reports: each sample once, from the later-started log
(``m3kit.report.pooling``), for M3Eval's score dicts as for Video-MME-v2's tables (the real
kill-and-resume case is in ``test_videomme_report.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.schema import write_jsonl

from ..conftest import make_question, use_server


@pytest.fixture
def two_runs(tmp_path: Path, pattern_video_factory, monkeypatch: pytest.MonkeyPatch) -> list:
    """Two complete runs of one system on three interference questions (A correct, B the
    intrusion): the first answers A to all, the second, started later, B to all."""
    from fakeserver import ScriptedServer
    from m3kit.benchmarks import run_benchmark_task

    for var, sub in (("INSPECT_CACHE_DIR", "inspect-cache"), ("XDG_DATA_HOME", "data"),
                     ("XDG_CACHE_HOME", "cache"), ("M3KIT_CACHE_DIR", "m3kit")):
        monkeypatch.setenv(var, str(tmp_path / "home" / sub))
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(pattern_video_factory().read_bytes())
    write_jsonl(suite / "questions.jsonl",
                [make_question(i, Path("probe.mp4"), condition="proactive") for i in range(3)])
    logs = []
    with ScriptedServer() as server:
        model = use_server(monkeypatch, "pool", server)
        for reply in ("The final answer is A", "The final answer is B"):
            server.answer = lambda prompt, reply=reply: reply
            logs.append(run_benchmark_task("synth_interference", model, cache=False,
                                           max_connections=3,
                                           task_args={"suite": str(suite), "frames": 1},
                                           log_dir=tmp_path / "logs"))
    return logs


def test_m3eval_system_pools_its_logs_later_started_wins(two_runs: list) -> None:
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.benchmarks.m3eval.report import scores_from_runs
    from m3kit.benchmarks.m3eval.score import scores_from_log
    from m3kit.report.inputs import pooled_runs
    from m3kit.report.logs import read_samples
    from m3kit.report.pooling import pool_logs, started_at

    m3eval = benchmark_for_task("synth_interference")

    first, second = two_runs
    # log times are kept to the second: the two runs may well share one
    assert started_at(first) <= started_at(second)
    assert first.eval.eval_id != second.eval.eval_id
    later = scores_from_log(read_samples(second)).model_dump()
    for given in ([first, second], [second, first]):  # the start time decides, not the order
        pooled = scores_from_runs(pooled_runs(m3eval, given))
        assert list(pooled) == [str(first.eval.model)]  # one system, one row
        assert pooled[str(first.eval.model)] == later
        (log,) = pool_logs(given, lambda log: str(log.eval.model)).values()
        assert len(log.samples) == 3
        # every answer is the second run's: B, the intrusion, on all three questions
        assert {s.scores["m3eval_answer"].metadata["letter"] for s in log.samples} == {"B"}
    # proactive: the first run 3/3 right, no intrusion; the later one 0/3 right, 3/3 intrusions
    proactive = later["memory_interference"]["proactive"]
    assert (proactive["accuracy"], proactive["intrusion_rate"]) == (0.0, 100.0)
    earlier = scores_from_log(read_samples(first)).model_dump()["memory_interference"][
        "proactive"]
    assert (earlier["accuracy"], earlier["intrusion_rate"]) == (100.0, 0.0)


@pytest.fixture
def frame_runs(tmp_path: Path, pattern_video_factory, monkeypatch: pytest.MonkeyPatch) -> list:
    """Two runs of one model on the same three questions that differ only in frames (1 and 2
    per probe), both answering A (correct); then a third, a rerun of the 2-frame one."""
    from fakeserver import ScriptedServer
    from m3kit.benchmarks import run_benchmark_task

    for var, sub in (("INSPECT_CACHE_DIR", "inspect-cache"), ("XDG_DATA_HOME", "data"),
                     ("XDG_CACHE_HOME", "cache"), ("M3KIT_CACHE_DIR", "m3kit")):
        monkeypatch.setenv(var, str(tmp_path / "home" / sub))
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(pattern_video_factory().read_bytes())
    write_jsonl(suite / "questions.jsonl",
                [make_question(i, Path("probe.mp4"), condition="proactive") for i in range(3)])
    logs = []
    with ScriptedServer() as server:
        model = use_server(monkeypatch, "frames", server)
        server.answer = lambda prompt: "The final answer is A"
        for frames in (1, 2, 2):
            logs.append(run_benchmark_task("synth_interference", model, cache=False,
                                           max_connections=3,
                                           task_args={"suite": str(suite), "frames": frames},
                                           log_dir=tmp_path / "logs"))
    return logs


def test_runs_differing_only_in_frames_are_two_rows_labelled_by_frames(frame_runs: list,
                                                                       tmp_path: Path) -> None:
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.benchmarks.m3eval.report import scores_from_runs
    from m3kit.report.build import build_report
    from m3kit.report.inputs import pooled_runs

    m3eval = benchmark_for_task("synth_interference")
    model = str(frame_runs[0].eval.model)
    runs = pooled_runs(m3eval, frame_runs)
    # the 2-frame run and its rerun pool; the 1-frame run is another system
    assert [run.variant for run in runs] == ["frames 1 uniform", "frames 2 uniform"]
    assert [len(run.samples) for run in runs] == [3, 3]
    scores = scores_from_runs(runs)
    assert list(scores) == [f"{model} · frames 1 uniform", f"{model} · frames 2 uniform"]
    html = build_report([log.location for log in frame_runs], tmp_path / "report").read_text()
    assert f"{model} · frames 1 uniform" in html and f"{model} · frames 2 uniform" in html
    # alone, a run needs no variant: nothing beside it differs
    (alone,) = pooled_runs(m3eval, frame_runs[:1])
    assert alone.variant == "" and list(scores_from_runs([alone])) == [model]


def test_setting_variants_name_only_what_differs_within_a_task() -> None:
    """N-back's per-clip default beside the other paradigms' per-probe count is one run's
    design, not two systems; a setting that differs between logs of one task splits them."""
    from m3kit.report.pooling import run_settings, setting_variants
    from m3kit.schema.card import FramePolicyCard, ReproCard
    from m3kit.schema.evallog import LoggedRun

    def run(task: str, frames: int | None, memory: str | None = None) -> LoggedRun:
        policy = FramePolicyCard(policy="uniform", count=frames,
                                 default=None if frames else "8 per N-Back clip")
        card = ReproCard(model="m", frames=policy, memory=memory)
        return LoggedRun(task=task, model="m", status="success", card=card)

    one_run = [run("synth_interference", 24), run("synth_nback", None)]
    assert setting_variants(one_run, lambda r: r.model) == ["", ""]
    two = [*one_run, run("synth_interference", 96), run("synth_nback", None)]
    assert setting_variants(two, lambda r: r.model) == [
        "frames 24 uniform", "frames uniform (8 per N-Back clip)", "frames 96 uniform",
        "frames uniform (8 per N-Back clip)"]
    # memory is in the model label already: runs of other labels never split each other
    by_memory = [run("synth_interference", 24), run("synth_interference", 24, "rag")]
    assert setting_variants(by_memory, lambda r: r.card.memory) == ["", ""]
    assert run_settings(None) == {}
    assert run_settings(run("t", 24).card)["frames"] == "24 uniform"
