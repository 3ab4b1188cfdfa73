"""The main job end to end on a few questions: suite, evals, the sections printed, the Markdown
and HTML reports saying the same."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from m3kit.benchmarks import run_benchmark_task
from m3kit.quickstart import TASKS, run_quickstart
from m3kit.report.logs import read_run


@pytest.mark.slow
def test_quickstart_writes_sections_logs_and_the_html_report(tmp_path: Path) -> None:
    result = run_quickstart(tmp_path / "qs", memories=("none", "rag"), frames=0, limit=2)
    # M3Eval's tasks with each memory, then the further benchmarks' parts
    assert all(Path(log).is_file() for log in result.logs)
    assert sum("synth-" in Path(log).name for log in result.logs) == 2 * len(TASKS)
    headline, breakdown = result.sections[:2]
    assert headline.benchmark == breakdown.benchmark == "m3eval"
    # 2 questions of each of the 4 paradigms per system, every one answered and counted
    cost = next(t for t in result.tables if t.title == "Cost per answer")
    assert [row[:2] for row in cost.rows] == [["m3kit/builtin", 8], ["m3kit/builtin + rag", 8]]
    evidence = headline.tables[0]
    assert evidence.columns == ["system / evidence", "n", "units", "acc % [95 % CI]",
                                "chance %"]
    # every system's cells carry n and units; the reading is derived from intervals
    assert all(isinstance(row[1], int) and isinstance(row[2], int)
               for row in evidence.rows if row[1] != "")
    reading = " ".join(headline.notes)
    assert "vs chance" in reading and "minus m3kit/builtin" in reading  # the paired comparison
    assert any(note.startswith("m3kit/builtin is a text-surrogate baseline") for note in
               headline.notes)
    assert breakdown.notes[0].endswith("(seed 0).")
    text = result.report.read_text()
    assert "Accuracy by evidence" in text and "Eval logs" in text and "vs chance" in text
    html = result.html.read_text()
    assert result.html.name == "index.html" and "Table 1" in html
    # the HTML carries the terminal's sections first: the same n, intervals and caveats
    assert html.index("Accuracy by evidence") < html.index("Table 1")
    for note in headline.notes:
        assert note.replace("'", "&#x27;") in html
    assert all(p.stat().st_size > 0 for p in result.html.parent.glob("*.png"))
    # each of M3Eval's figures has its plotted numbers beside it
    figures = sorted(p.name for p in result.html.parent.glob("fig*.png"))
    assert figures
    for name in figures:
        data = result.html.parent / name.replace(".png", ".json")
        assert data.is_file() and json.loads(data.read_text())
    # The steps ran on one model and in two processes; a step alone, on a model of its own in
    # this process, gives the same replies and score records.
    steps = [(memory, task) for memory in ("none", "rag") for task in TASKS]  # the logs' order
    together = dict(zip(steps, result.logs, strict=False))
    for memory, task in [("rag", "synth_interference"), ("none", "synth_nback")]:
        log = run_benchmark_task(task, "m3kit/builtin", memory=None if memory == "none" else memory,
                                 task_args={"suite": str(result.suite),
                                            **({} if task == "synth_nback" else {"frames": 0})},
                                 limit=2, log_dir=tmp_path / f"alone-{memory}")
        alone = read_run(log).samples
        shared = read_run(read_eval_log(together[(memory, task)])).samples
        assert len(alone) == 2
        assert [(s.id, s.completion, s.item) for s in alone] == \
            [(s.id, s.completion, s.item) for s in shared]


def test_the_second_process_raises_what_failed_there(tmp_path: Path) -> None:
    """SuperMemory-VQA's part and half the suite run in a spawned process: its failure (here an
    unknown model provider, refused before any work) comes back as the m3kit error it was."""
    from m3kit.harness.preflight import PreflightError
    from m3kit.quickstart import _second_part, _SecondProcess

    said: list[str] = []
    with _SecondProcess(_second_part, lambda stage, done, total: said.append(stage),
                        supermemory_dir=tmp_path / "sm", suite_dir=tmp_path / "suite",
                        log_dir=tmp_path / "logs", model="nosuch/model", limit=1, frames=0,
                        memories=("none",), steps=[("none", "synth_nback")]) as part, \
            pytest.raises(PreflightError) as err:
        part.go_on()
        part.result()
    assert "nosuch/model" in str(err.value)
    assert said == []  # it failed before its first stage
