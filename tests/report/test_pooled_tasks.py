"""A system pooled from several tasks' logs (the quickstart's M3Eval paradigms): its card lists
each task with its own settings, and each of its numbers has one interval on the page, the one
its task's own run gives (``m3kit eval``'s), in the quickstart's tables, the report's tables and
the figures' error bars alike."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from m3kit.schema import write_jsonl

from ..conftest import make_question, use_server

INTERFERENCE = range(8)  # q0..q7: four source pairs, proactive and retroactive
NBACK = range(10, 26)  # q10..q25: sixteen N-back trials, N = 1 or 2, K = 3


def _reply(prompt: str) -> str:
    """Right on two in three questions (by the question's number), else wrong."""
    qid = int(re.search(r"qid=q(\d+)", prompt).group(1))
    right = qid % 3 != 0
    if "Yes or No" in prompt:
        return f"The final answer is {'Yes' if right else 'No'}"
    return f"The final answer is {'A' if right else 'B'}"


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory, pattern_video_factory) -> Iterator[list]:
    """One model's runs of two tasks of one suite: interference at 1 frame per probe, N-back
    at its default (8 per clip)."""
    from fakeserver import ScriptedServer
    from m3kit.benchmarks import run_benchmark_task

    tmp = tmp_path_factory.mktemp("pooled")
    mp = pytest.MonkeyPatch()
    for var, sub in (("INSPECT_CACHE_DIR", "inspect-cache"), ("XDG_DATA_HOME", "data"),
                     ("XDG_CACHE_HOME", "cache"), ("M3KIT_CACHE_DIR", "m3kit")):
        mp.setenv(var, str(tmp / "home" / sub))
    suite = tmp / "suite"
    suite.mkdir()
    (suite / "probe.mp4").write_bytes(pattern_video_factory().read_bytes())
    questions = [make_question(i, Path("probe.mp4"), pair=f"p{i // 2}",
                               condition="proactive" if i % 2 else "retroactive")
                 for i in INTERFERENCE]
    questions += [make_question(i, Path("probe.mp4"), nback=True, pair=f"t{i}", k=3,
                                n=1 + i % 2, attribute="scene" if i % 4 < 2 else "action",
                                clips=[[0, 1.3], [1.3, 2.6], [2.6, 4.0]])
                  for i in NBACK]
    write_jsonl(suite / "questions.jsonl", questions)
    out = []
    try:
        with ScriptedServer(answer=_reply) as server:
            model = use_server(mp, "pooled", server)
            for task, args in (("synth_interference", {"frames": 1}), ("synth_nback", {})):
                out.append(run_benchmark_task(task, model, cache=False, max_connections=4,
                                              task_args={"suite": str(suite), **args},
                                              log_dir=tmp / "logs"))
        yield out
    finally:
        mp.undo()


def test_the_card_lists_each_task_with_its_own_settings(logs: list) -> None:
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.benchmarks.m3eval.report import run_system
    from m3kit.report.build import how_runs_were_made
    from m3kit.report.inputs import pooled_runs
    from m3kit.report.logs import frames_sent

    (run,) = pooled_runs(benchmark_for_task("synth_nback"), logs)  # one system
    assert [part.task for part in run.tasks()] == ["synth_interference", "synth_nback"]
    section = how_runs_were_made([(run_system(run), run)])
    assert section is not None
    cards = {table.title.split(":")[0]: dict(table.rows) for table in section.tables}
    assert list(cards) == ["synth_interference", "synth_nback"]
    assert cards["synth_interference"]["task"] == "synth_interference"
    assert cards["synth_interference"]["frame policy"] == "1 uniform"
    assert "frames=1" in cards["synth_interference"]["task arguments"]
    assert cards["synth_nback"]["frame policy"] == (
        "uniform (96, 144 for repetition, 8 per N-Back clip)")
    assert "frames=" not in cards["synth_nback"]["task arguments"]
    # the frames each task's samples were sent (as its log alone says), not a mean over both
    for task, log in zip(cards, logs, strict=True):
        sent = frames_sent(log)
        assert cards[task]["frames sent"] == (
            f"mean {sent.mean:g}, min {sent.min}, max {sent.max} ({sent.samples} samples)")
    assert cards["synth_nback"]["frames sent"].startswith("mean 24, min 24, max 24 (16 ")
    assert all("pooled into" in table.caption for table in section.tables)


def _report_cell(markdown: str, number: str) -> str:
    """The interval (``50.0 [31.2, 65.6]``) the report's one-system table shows for
    ``number`` (its cell ``50.0 [31.2, 65.6] (16 units)``)."""
    found = re.search(rf"^\| {re.escape(number)} \| ([^|]+) \|$", markdown, re.MULTILINE)
    assert found is not None, number
    return found.group(1).split(" (")[0]


def test_one_number_has_one_interval_on_the_page(logs: list, tmp_path: Path) -> None:
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.benchmarks.intervals import log_intervals
    from m3kit.quickstart import suite_sections
    from m3kit.report.build import build_report
    from m3kit.report.logs import read_run

    lead = suite_sections({"none": [read_run(log) for log in logs]})
    page = build_report([log.location for log in logs], tmp_path, lead=lead).read_text()
    tables = {t.title: t for s in lead for t in s.tables}
    (paradigms,) = [t for name, t in tables.items() if name.startswith("Accuracy by paradigm")]
    # the row under the N-back paradigm's heading row (its questions' one type)
    heading = next(i for i, row in enumerate(paradigms.rows) if row[0] == "N-back")
    quickstart_nback = paradigms.rows[heading + 1][3]
    # the report's table of headline numbers and its N-back figures' table
    markdown = (tmp_path / "tables.md").read_text()
    assert _report_cell(markdown, "nback_accuracy") == quickstart_nback
    assert "[" in quickstart_nback  # a real interval: 16 trials
    # the same interval as the N-back task's own run (m3kit eval's), whatever was pooled
    m3eval = benchmark_for_task("synth_nback")
    own = log_intervals(m3eval, read_run(logs[1]).samples).ci["nback_accuracy"]
    assert own.text(m3eval.interval_spec) == quickstart_nback
    # the interference numbers too, and the N = 1 row is Figure 11's (K=3, N=1) point
    by_condition = {row[0].strip(): row for row in tables["Memory interference"].rows}
    assert _report_cell(markdown, "proactive_accuracy") == by_condition["proactive"][3]
    by_knob = {row[0].strip(): row for row in tables["N-back by N and K"].rows}
    assert _report_cell(markdown, "nback K=3,N=1") == by_knob["N=1"][3]
    # on the HTML page, that accuracy (also K = 3's: the same trials) carries one interval
    value = quickstart_nback.split(" [")[0]
    shown = set(re.findall(rf"(?<![\d.]){re.escape(value)} \[[^\]]*\]", page))
    assert shown == {quickstart_nback} and page.count(quickstart_nback) >= 3
    # which resampling both tasks' units together would not have given
    pooled = [s for log in logs for s in read_run(log).samples]
    assert log_intervals(m3eval, pooled).ci["nback_accuracy"].text(
        m3eval.interval_spec) != quickstart_nback
