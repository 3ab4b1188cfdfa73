"""The Video-MME-v2 report from real eval logs (``m3kit/builtin``, the offline baseline):
leaderboard columns with and without subtitles, blind beside full, the radar PNG."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.videomme_v2.report import RADAR_FIGURE
from m3kit.benchmarks.videomme_v2.score import scores_from_log
from m3kit.report.html import write_report
from m3kit.report.logs import read_samples

from .conftest import write_release

BENCHMARK_TASK = "videomme_v2"
CONDITIONS = ({"subtitles": "none"}, {"subtitles": "concat"}, {"subtitles": "interleave"},
              {"blind": True}, {"subtitles": "concat", "frames": 0})


def sections(logs: list, out_dir: Path) -> list:
    """The benchmark's part of the report for eval logs, pooled and read as ``m3kit report``
    does: its section, then its headline intervals' (``m3kit.report.build``)."""
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.report.build import benchmark_sections
    from m3kit.report.inputs import pooled_runs

    benchmark = benchmark_for_task(BENCHMARK_TASK)
    return benchmark_sections(benchmark, pooled_runs(benchmark, logs), out_dir)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory, pattern_video_factory) -> list:
    import inspect_ai

    from m3kit.benchmarks.videomme_v2.task import videomme_v2

    base = tmp_path_factory.mktemp("videomme_report")
    data = write_release(base / "rel", pattern_video_factory())
    tasks = [videomme_v2(data=str(data), cache=False, **{"frames": 2, **args})
             for args in CONDITIONS]
    return inspect_ai.eval(tasks, model="m3kit/builtin", model_args={"ocr": False},
                           log_dir=str(base / "logs"), display="none", log_images=False)


def test_leaderboard_blind_beside_full_and_radar(logs: list, tmp_path: Path) -> None:
    none, concat, interleave, blind, subs_only = (scores_from_log(read_samples(log))
                                                  for log in logs)
    section, interval_section = sections(logs, tmp_path)
    board = section.tables[0]
    assert board.columns == [
        "Model", "Frames",
        *(f"{m} ({c})" for m in ("Non-Lin Score", "Level 1", "Level 2", "Level 3",
                                 "Consistency", "Coherence", "Avg Acc")
          for c in ("w. sub", "wo sub")),
    ]
    assert [row[:2] for row in board.rows] == [
        ["m3kit/builtin", "2"], ["m3kit/builtin [interleaved]", "2"],
        ["m3kit/builtin (no frames)", "0"], ["m3kit/builtin (blind)", "0"],
    ]
    full, interleaved, no_frames_row, blind_row = board.rows
    keys = ("total", "level_1", "level_2", "level_3", "relevance_score", "logic_score",
            "avg_acc")
    # each metric: the subtitled run's value, then the no-subtitle run's
    assert full[2:] == [v for k in keys for v in (getattr(concat, k), getattr(none, k))]
    assert interleaved[2:] == [v for k in keys for v in (getattr(interleave, k),
                                                          getattr(none, k))]
    # a blind run has no subtitles: only its "wo sub" cells are filled
    assert blind_row[2:] == [v for k in keys for v in (None, getattr(blind, k))]
    # subtitles without frames: its own row, never beside the full runs as one of them
    assert no_frames_row[2:] == [v for k in keys for v in (getattr(subs_only, k), None)]
    heads = section.tables[2]
    assert [row[0] for row in heads.rows] == ["Frame-Only", "Order", "Physical World Reasoning"]
    assert heads.rows[0][1:] == [s.second_head["Frame-Only"]
                                 for s in (none, concat, interleave, blind, subs_only)]
    # after it, every run's headline numbers as value [lo, hi] (groups of 4 resampled): the
    # values are the leaderboard's
    assert interval_section.title == "Video-MME-v2 · Confidence intervals"
    (intervals,) = interval_section.tables
    assert intervals.title == "Video-MME-v2 · headline numbers with intervals"
    assert [row[0] for row in intervals.rows][:1] == ["non_lin"]
    runs = (none, concat, interleave, blind, subs_only)
    assert len(intervals.columns) == 1 + len(runs)
    assert sorted(cell.split(" [")[0] for cell in intervals.rows[0][1:]) == sorted(
        f"{r.total:.2f}" if r.total is not None else "—" for r in runs)
    assert section.figures == [RADAR_FIGURE]
    assert (tmp_path / RADAR_FIGURE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = write_report([section], tmp_path).read_text(encoding="utf-8")
    assert "Consistency (w. sub)" in page and "m3kit/builtin (blind)" in page


def test_groups_cut_by_limit_are_named_under_the_leaderboard(tmp_path: Path) -> None:
    from m3kit.benchmarks.protocol import ReportContext
    from m3kit.benchmarks.videomme_v2 import BENCHMARK
    from m3kit.benchmarks.videomme_v2.report import sections as videomme_sections
    from m3kit.schema.evallog import LoggedRun

    from .test_score import _limited_run

    run = LoggedRun(task="videomme_v2", model="m", status="success",
                    task_args={"frames": 2, "subtitles": "none"},
                    samples=_limited_run(tmp_path / "data"))
    (section,) = videomme_sections(ReportContext(benchmark=BENCHMARK, runs=[run],
                                                out_dir=tmp_path))
    board = section.tables[0]
    assert board.rows[0][board.columns.index("Avg Acc (wo sub)")] == 50.0  # 001's 4 questions
    assert board.caption.startswith("Each run's scores are over its complete, readable groups")
    assert ("m · 2 frames · no subtitles: 1 of 2 groups scored; 1 incomplete (fewer than four "
            "of their questions run, a --limit run) left out of every number, Avg Acc "
            "included, with their 2 answered question(s): 002.") in section.notes
    details = section.tables[1]
    assert details.rows[0][details.columns.index("incomplete groups")] == 1
    # a run with every group whole: no caption, no such note
    whole = run.model_copy(update={"samples": run.samples[:4]})
    (section,) = videomme_sections(ReportContext(benchmark=BENCHMARK, runs=[whole],
                                                out_dir=tmp_path))
    assert section.tables[0].caption == ""
    assert not any("incomplete" in note for note in section.notes)


def _samples_in(path: Path) -> int:
    """Samples flushed into the .eval file being written (0 while it is unreadable)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return sum(n.startswith("samples/") for n in archive.namelist())
    except (zipfile.BadZipFile, OSError):
        return 0


@pytest.mark.slow
def test_killed_resumed_and_rerun_are_one_run(tmp_path: Path, pattern_video_factory,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A real SIGKILLed run, its ``--resume`` (inspect 0.3.285: a new eval_id, the same
    task_id, the killed log left ``started``) and a later rerun with the same settings are one
    run in every table: each sample once, from the later-started log."""
    import os
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    from inspect_ai.log import list_eval_logs, read_eval_log

    from fakeserver import ScriptedServer
    from m3kit.benchmarks import run_benchmark_task

    from ...conftest import use_server

    for var, sub in (("INSPECT_CACHE_DIR", "inspect-cache"), ("XDG_DATA_HOME", "data"),
                     ("XDG_CACHE_HOME", "cache"), ("M3KIT_CACHE_DIR", "m3kit")):
        monkeypatch.setenv(var, str(tmp_path / "home" / sub))
    data = write_release(tmp_path / "rel", pattern_video_factory())
    log_dir = tmp_path / "logs"
    args = {"data": str(data), "frames": 1}
    with ScriptedServer(block_after=5) as server:
        model = use_server(monkeypatch, "vmme", server)
        script = tmp_path / "run.py"
        script.write_text(textwrap.dedent(f"""
            from m3kit.benchmarks import run_benchmark_task
            run_benchmark_task("videomme_v2", {model!r}, task_args={args!r},
                               log_dir={str(log_dir)!r}, max_connections=1, cache=False)
        """))
        proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
        try:
            assert server.answered.wait(120), proc.stderr.read().decode() if proc.poll() else ""
            deadline = time.monotonic() + 120  # bounds a hang; the log fills in seconds
            while time.monotonic() < deadline and not any(
                    _samples_in(p) >= 5 for p in log_dir.glob("*.eval")):
                time.sleep(0.1)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
        server.block_after = None
        resumed = run_benchmark_task("videomme_v2", model, task_args=args, log_dir=log_dir,
                                     max_connections=1, cache=False, resume=True)
        (killed,) = [read_eval_log(info) for info in list_eval_logs(str(log_dir))
                     if Path(info.name.removeprefix("file://")) != Path(resumed.location)]
        # what inspect really writes: not one eval id, one task id; the killed log unfinished
        assert killed.status == "started" and resumed.status == "success"
        assert killed.eval.eval_id != resumed.eval.eval_id
        assert killed.eval.task_id == resumed.eval.task_id
        assert 5 <= len(killed.samples) < 16 and len(resumed.samples) == 16

        section, _ = sections([killed, resumed], tmp_path / "resumed")
        alone, _ = sections([resumed], tmp_path / "alone")
        for index in range(4):  # leaderboard, details, both head tables: one run, as if alone
            assert section.tables[index].rows == alone.tables[index].rows
            assert section.tables[index].columns == alone.tables[index].columns
        assert len(section.tables[1].rows) == 1

        # a rerun with the same settings, answering B to everything: the later-started log's
        # answers replace the earlier ones, whatever the order the logs are given in
        server.answer = lambda prompt: "The final answer is B"
        rerun = run_benchmark_task("videomme_v2", model, task_args=args, log_dir=log_dir,
                                   max_connections=1, cache=False)
    assert rerun.eval.eval_id != resumed.eval.eval_id
    # so which copy counts shows
    assert scores_from_log(read_samples(rerun)) != scores_from_log(read_samples(resumed))
    for given in ([killed, resumed, rerun], [rerun, resumed, killed]):
        pooled, _ = sections(given, tmp_path / "pooled")
        only, _ = sections([rerun], tmp_path / "only")
        assert len(pooled.tables[1].rows) == 1
        assert [t.rows for t in pooled.tables] == [t.rows for t in only.tables]


def test_runs_are_labelled_in_words_where_the_report_names_them(logs: list) -> None:
    """The label a run is pooled and named by (the report's "How each run was made", ``m3kit
    compare``) says its settings in words, never as a Python tuple."""
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.report.build import how_runs_were_made
    from m3kit.report.inputs import pooled_runs

    benchmark = benchmark_for_task(BENCHMARK_TASK)
    label = benchmark.reporting.load().system_label
    runs = pooled_runs(benchmark, logs)
    assert sorted(label(run) for run in runs) == sorted([
        "m3kit/builtin · subtitles none · 2 frames",
        "m3kit/builtin · subtitles concat · 2 frames",
        "m3kit/builtin · subtitles interleave · 2 frames",
        "m3kit/builtin · blind · subtitles none · 0 frames",
        "m3kit/builtin · subtitles concat · 0 frames",
    ])
    section = how_runs_were_made([(label(run), run) for run in runs])
    assert section is not None
    assert not any("(" in t.title.split(": ", 1)[1] for t in section.tables)
