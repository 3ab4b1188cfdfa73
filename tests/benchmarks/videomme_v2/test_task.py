"""The ``videomme_v2`` task end to end on a release written by the tests, answered by the
offline ``m3kit/builtin`` baseline (a text-surrogate model, not a VLM: the point here is what
reaches the model and how it is scored, not its accuracy).

One inspect run evaluates every condition (the model loads once): interleaved subtitles with 4
``uniform_inner`` frames, the same at 1 fps, concatenated subtitles, blind, ``frames=0`` with and
without subtitles, and a broken release (groups 001-004 readable, 005's video and 006's
subtitles missing).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from m3kit.benchmarks.videomme_v2.load import load_videomme_v2
from m3kit.benchmarks.videomme_v2.score import score_outputs, scores_from_log
from m3kit.report.logs import read_samples

from .conftest import EXTRA_GROUPS, GROUPS, rows, write_release

CONDITIONS: dict[str, dict[str, Any]] = {
    "interleave": {"subtitles": "interleave", "frames": 4},
    "fps": {"subtitles": "interleave", "fps": 1.0},
    "concat": {"subtitles": "concat", "frames": 4},
    "blind": {"subtitles": "concat", "frames": 4, "blind": True},
    "broken": {"subtitles": "concat", "frames": 4},
    "no_frames": {"frames": 0},
    "subtitles_only": {"subtitles": "concat", "frames": 0},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, release_video: Path) -> dict[str, Any]:
    import inspect_ai

    from m3kit.benchmarks.videomme_v2.task import videomme_v2

    base = tmp_path_factory.mktemp("videomme_task")
    good = write_release(base / "good", release_video)
    broken = write_release(base / "broken", release_video, rows({**GROUPS, **EXTRA_GROUPS}))
    (broken / "videos" / "005.mp4").unlink()
    (broken / "subtitles" / "006.jsonl").unlink()
    tasks = [
        videomme_v2(data=str(broken if name == "broken" else good), cache=False, **args)
        for name, args in CONDITIONS.items()
    ]
    logs = inspect_ai.eval(tasks, model="m3kit/builtin", model_args={"ocr": False},
                           log_dir=str(base / "logs"), display="none", log_images=False)
    return {"good": good, "broken": broken,
            **{name: log for name, log in zip(CONDITIONS, logs, strict=True)}}


def _content(log: Any, sample_id: str) -> list[Any]:
    sample = next(s for s in log.samples if s.id == sample_id)
    content = sample.messages[0].content
    return [content] if isinstance(content, str) else list(content)


def _kinds_and_text(content: list[Any]) -> list[str]:
    return ["<image>" if getattr(c, "type", "") == "image" else getattr(c, "text", c)
            for c in content]


def test_interleaved_prompt(runs: dict[str, Any]) -> None:
    log = runs["interleave"]
    assert log.status == "success" and len(log.samples) == 16
    parts = _kinds_and_text(_content(log, "001-1"))
    # 100 frames, 4 uniform_inner: indices 20, 40, 60, 80 -> 0.8, 1.6, 2.4, 3.2 s. Sentence k
    # of video 001 spans [k, k + 0.55] s. Intervals [0.8, 1.6) [1.6, 2.4) [2.4, 3.2) [3.2, 4.0):
    # the umbrella sentence (0-0.55 s) falls before the first frame and is never shown.
    assert parts[:9] == [
        "<image>", "[Subtitle 1.00s - 1.55s]: The bicycle is orange.",
        "<image>", "[Subtitle 2.00s - 2.55s]: The kettle is black.",
        "<image>", "[Subtitle 2.00s - 2.55s]: The kettle is black.",
        "[Subtitle 3.00s - 3.55s]: The lantern is white.",
        "<image>", "[Subtitle 3.00s - 3.55s]: The lantern is white.",
    ]
    assert parts[9].startswith("These are the frames of a video with corresponding subtitles")
    assert parts[10].startswith("Question: What colour is the umbrella?\nA. The umbrella is red.")
    assert parts[10].endswith("Respond with only the letter (A, B, C, D, E, F, G, or H) of the "
                              "correct option.")


def test_fps_frames_start_at_zero(runs: dict[str, Any]) -> None:
    parts = _kinds_and_text(_content(runs["fps"], "001-1"))
    # 1 fps over 0-3.96 s: frames at 0, 1, 2, 3 s; the umbrella sentence follows the first
    assert parts.count("<image>") == 4
    assert parts[:2] == ["<image>", "[Subtitle 0.00s - 0.55s]: The umbrella is purple."]


def test_concatenated_prompt(runs: dict[str, Any]) -> None:
    parts = _kinds_and_text(_content(runs["concat"], "002-1"))
    assert parts[:4] == ["<image>"] * 4
    assert parts[4] == (
        "These are the frames of a video. This video's subtitles are listed below:\n"
        "The umbrella is white. The bicycle is red. The kettle is green. The lantern is blue.\n"
    )
    assert parts[5].startswith("Question: What colour is the umbrella?")


def test_blind_run_shows_no_media(runs: dict[str, Any]) -> None:
    log = runs["blind"]
    assert log.eval.metadata["m3kit_blind"] is True
    for sample in log.samples:
        content = sample.messages[0].content
        assert isinstance(content, str)  # one plain text: no images
        assert content.startswith("No video is shown.") and "Subtitle" not in content
        assert "subtitles are listed" not in content
    assert runs["concat"].eval.metadata["m3kit_blind"] is False


def test_log_scores_equal_external_scoring(runs: dict[str, Any]) -> None:
    """The task's metric, ``scores_from_log`` and ``m3kit score``'s path agree on the same
    replies."""
    for name in ("interleave", "concat", "blind"):
        log = runs[name]
        from_log = scores_from_log(read_samples(log))
        assert from_log.incomplete_groups == []
        replies = {str(s.id): s.output.completion for s in log.samples}
        external = score_outputs(load_videomme_v2(runs["good"]), replies)
        assert from_log.leaderboard() == external.leaderboard()
        metrics = log.results.scores[0].metrics
        assert metrics["videomme_v2_nonlin_score"].value == pytest.approx(from_log.total)
        assert metrics["videomme_v2_avg_acc"].value == pytest.approx(from_log.avg_acc)


def test_missing_media_exclude_their_groups_everywhere(runs: dict[str, Any],
                                                       tmp_path: Path) -> None:
    """Unreadable media exclude the group (as M3Eval excludes the sample): the task's metrics,
    ``scores_from_log`` (the report) and ``m3kit eval``'s table give one set of numbers."""
    from m3kit.benchmarks.m3eval.score import result_rows

    log = runs["broken"]
    assert log.status == "success" and len(log.samples) == 24
    by_group: dict[str, set[str]] = {}
    for sample in log.samples:
        score = sample.scores["videomme_v2_answer"]
        by_group.setdefault(str(sample.id)[:3], set()).add(score.metadata["status"])
        if str(sample.id).startswith("005"):
            assert score.explanation.startswith("media:") and "005.mp4" in score.explanation
        if str(sample.id).startswith("006"):
            assert score.explanation.startswith("media:")
            assert "subtitle file not found" in score.explanation
            assert "006.jsonl" in score.explanation
    assert by_group["005"] == {"failed"} and by_group["006"] == {"failed"}
    result = scores_from_log(read_samples(log))
    assert result.incomplete_groups == []
    assert result.n_groups == 4 and result.n_questions == 16 and result.n_failed == 0
    assert result.n_excluded_groups == 2 and result.excluded_groups == ["005", "006"]
    # the readable groups 001-004 score exactly as the same replies do on a release that has
    # only those four groups: total = mean of their four group scores, Avg Acc over their 16
    replies = {str(s.id): s.output.completion for s in log.samples if str(s.id) < "005"}
    alone = score_outputs(load_videomme_v2(runs["good"]), replies)
    assert result.leaderboard() == alone.leaderboard()
    metrics = log.results.scores[0].metrics
    assert metrics["videomme_v2_nonlin_score"].value == pytest.approx(alone.total)
    assert metrics["videomme_v2_avg_acc"].value == pytest.approx(alone.avg_acc)
    assert metrics["videomme_v2_excluded_groups"].value == 2
    # m3kit eval's table: the same 16 questions, the 8 unreadable ones counted as excluded
    overall = result_rows(read_samples(log))[0]
    assert (overall.n, overall.excluded, overall.failed) == (16, 8, 0)
    assert 100 * overall.accuracy == pytest.approx(alone.avg_acc)
    # the report: its numbers are scores_from_log's, and the excluded groups are counted and
    # named
    from m3kit.benchmarks.protocol import ReportContext
    from m3kit.benchmarks.videomme_v2 import BENCHMARK
    from m3kit.benchmarks.videomme_v2.report import sections
    from m3kit.report.logs import read_run

    (section,) = sections(ReportContext(benchmark=BENCHMARK, runs=[read_run(log)],
                                       out_dir=tmp_path))
    details = section.tables[1]
    assert details.rows[0][details.columns.index("excluded groups")] == 2
    assert any("2 group(s) excluded" in n and n.endswith("005, 006.") for n in section.notes)


def test_zero_frames_never_mention_frames(runs: dict[str, Any]) -> None:
    """``frames=0``: no frame attached, so no "These are the frames of a video." line; with no
    subtitles either the run is blind in all but name and recorded as blind."""
    bare = runs["no_frames"]
    assert bare.eval.metadata["m3kit_blind"] is True and bare.eval.metadata["m3kit_frames"] == 0
    subs = runs["subtitles_only"]
    assert subs.eval.metadata["m3kit_blind"] is False
    assert (subs.eval.metadata["m3kit_frames"], subs.eval.metadata["m3kit_subtitles"]) == (
        0, "concat")
    for log in (bare, subs):
        for sample in log.samples:
            content = sample.messages[0].content
            assert isinstance(content, str)  # plain text: no image part
            assert "frames of a video" not in content
    first = _content(subs, "002-1")[0]
    assert first.startswith("No video frames are shown. This video's subtitles are listed "
                            "below:\nThe umbrella is white. The bicycle is red.")
    assert _content(bare, "002-1")[0].startswith("No video is shown.")


def test_cli_eval_blind(tmp_path: Path, release_video: Path, capsys) -> None:
    from inspect_ai.log import list_eval_logs, read_eval_log

    from m3kit.cli.main import main

    data = write_release(tmp_path / "rel", release_video)
    shutil.rmtree(data / "videos")  # blind needs no media at all
    code = main(["eval", "videomme_v2", "--model", "m3kit/builtin", "-M", "ocr=false",
                 "-T", f"data={data}", "--blind", "--limit", "4", "--no-cache",
                 "--log-dir", str(tmp_path / "logs")])
    assert code == 0, capsys.readouterr().err
    log = read_eval_log(list_eval_logs(str(tmp_path / "logs"))[0])
    assert log.eval.task_args["blind"] is True and log.eval.metadata["m3kit_blind"] is True
    assert all(s.scores["videomme_v2_answer"].metadata["status"] != "failed"
               for s in log.samples)
