"""The released tasks run end to end with the offline ``m3kit/builtin`` model on real videos."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3eval.load import load_m3eval
from m3kit.benchmarks.m3eval.score import score_outputs, scores_from_log
from m3kit.benchmarks.m3eval.task import frame_policy_for, released_task
from m3kit.errors import M3kitError
from m3kit.report.logs import read_samples

MODEL = "m3kit/builtin"


def _record(sample) -> dict:
    return sample.metadata["m3kit"]


def _metrics(log) -> dict[str, float]:
    return {k: m.value for k, m in log.results.scores[0].metrics.items()}


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))
    monkeypatch.setenv("M3KIT_CACHE_DIR", str(tmp_path / "m3kit-cache"))


@pytest.mark.slow
def test_divided_attention_runs_and_scores_like_external_predictions(
    released_root: Path, tmp_path: Path
) -> None:
    log = run_benchmark_task("m3eval_divided_attention", MODEL,
                             task_args={"data": str(released_root), "frames": 2},
                             log_dir=tmp_path / "logs")
    assert log.status == "success"
    samples = {s.id: s for s in log.samples}
    assert len(samples) == 11
    # ss-10's video does not exist: excluded and counted, not scored
    assert _record(samples["ss-10"])["failure"].startswith("media:")
    assert _metrics(log)["excluded_count"] == 1 and _metrics(log)["failed_count"] == 0
    assert len(_record(samples["ss-1"])["frames"]) == 2
    # the log's numbers equal the external scorer's on the same raw outputs
    from_log = scores_from_log(read_samples(log))
    questions = load_m3eval(released_root).select("divided_attention")
    outputs = {str(s.id): s.output.completion for s in log.samples}
    external = score_outputs(questions, outputs, excluded={"ss-10"})
    assert from_log == external
    assert from_log.n_excluded == 1 and from_log.n_scored == 10
    # named where it would have counted: spatial source grounding is a rate over ss-7, ss-8
    assert from_log.excluded_by_cell == {"divided_attention · spatial_source_grounding":
                                         ["ss-10"]}


def test_nback_frames_per_clip_and_blind(released_root: Path, tmp_path: Path) -> None:
    log = run_benchmark_task("m3eval_nback", MODEL, task_args={"data": str(released_root)},
                             log_dir=tmp_path / "logs", limit=2)
    assert log.status == "success"
    # nb-1: K = 3 clips of 0.4 s at 10 fps, 4 frames each: 8 per clip asked, 4 there
    first = next(s for s in log.samples if s.id == "nb-1")
    times = _record(first)["frame_times"]
    assert len(times) == 12 and times == sorted(times)
    assert log.eval.metadata["m3kit_blind"] is False

    blind = run_benchmark_task("m3eval_nback", MODEL, task_args={"data": str(released_root),
                                                       "blind": True},
                               log_dir=tmp_path / "logs", limit=2)
    assert blind.eval.metadata["m3kit_blind"] is True
    assert all(_record(s)["frames"] == [] for s in blind.samples)
    assert "The final answer is Yes" in blind.samples[0].input  # same question, no frames


@pytest.mark.parametrize(
    ("name", "ids"),
    [("m3eval_interference", {"mi-1", "mi-2", "mi-3", "mi-4", "mi-5", "mi-6"}),
     ("m3eval_interference_repeat_target", {"mt-1"}),
     ("m3eval_interference_repeat_interferer", {"mt-2"}),
     ("m3eval_interleaved", {"il-1", "il-2", "il-3", "il-4", "il-5", "il-6"}),
     ("m3eval_nback", {"nb-1", "nb-2", "nb-3", "nb-4", "nb-5", "nb-6"})],
)
def test_each_task_asks_its_questions(released_root: Path, name: str, ids: set[str]) -> None:
    task = released_task(name, str(released_root))
    assert {s.id for s in task.dataset} == ids


def test_repetition_interleaved_and_fps_frame_policies(released_root: Path) -> None:
    by_id = {q.id: q for q in load_m3eval(released_root).questions}
    assert frame_policy_for(by_id["mi-1"]).n == 96
    assert frame_policy_for(by_id["mt-1"]).n == 144
    assert frame_policy_for(by_id["nb-1"]).n == 8 and frame_policy_for(by_id["nb-1"]).per_clip
    video = frame_policy_for(by_id["il-1"], fps=0.5)
    assert (video.policy, video.fps, video.max_frames) == ("fps", 0.5, None)


def test_one_interference_run_with_fps(released_root: Path, tmp_path: Path) -> None:
    # 0.5 fps over a 1 s video: the first frame only
    log = run_benchmark_task("m3eval_interference_repeat_target", MODEL,
                             task_args={"data": str(released_root), "fps": 0.5},
                             log_dir=tmp_path / "logs")
    assert log.status == "success"
    assert len(_record(log.samples[0])["frames"]) == 1
    assert log.eval.metadata["m3kit_fps"] == 0.5


def test_task_errors_name_the_problem(released_root: Path, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("M3KIT_M3EVAL_DATA", raising=False)
    with pytest.raises(M3kitError, match="no data"):
        released_task("m3eval_nback")
    empty = tmp_path / "release"
    (empty / "questions").mkdir(parents=True)
    (empty / "questions" / "nback_questions.jsonl").write_text("")
    with pytest.raises(M3kitError, match="no divided_attention questions"):
        released_task("m3eval_divided_attention", str(empty))
    with pytest.raises(M3kitError, match="blind"):
        released_task("m3eval_nback", str(released_root), blind=True, memory="context")


def test_m3kit_eval_command(released_root: Path, tmp_path: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    from m3kit.cli.main import main

    code = main(["eval", "m3eval_nback", "-T", f"data={released_root}", "--model", MODEL,
                 "--limit", "1", "--log-dir", str(tmp_path / "logs")])
    assert code == 0
    assert "m3eval_nback" in capsys.readouterr().out
