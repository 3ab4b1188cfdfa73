"""Reading report inputs (score files, folders, bad files) and dispatching logs by task name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks import UnknownTaskError, benchmark_for_task
from m3kit.report.build import build_report
from m3kit.report.inputs import ReportInputError, read_humans, read_inputs

SCORES = {"interleaved": {"source_identification": 30.0, "order_understanding": 20.0,
                          "content_retention": 10.0, "false_memory_discrimination": 5.0}}


def write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize("task, expected", [
    ("m3eval_nback", "m3eval"), ("m3eval_interference_repeat_target", "m3eval"),
    ("synth_divided_attention", "m3eval"), ("videomme_v2", "videomme_v2"),
    ("m3kit/videomme_v2", "videomme_v2"), ("m3exam", "m3exam"), ("locomo", "m3exam"),
])
def test_tasks_go_to_their_benchmark_report(task: str, expected: str):
    assert benchmark_for_task(task).name == expected


@pytest.mark.parametrize("task", ["mmlu", "videomme_v2_blind", "m3exam_direct"])
def test_an_unknown_task_is_named(task: str):
    # as in ``m3kit eval``: one typed error naming the task, never M3Eval's columns instead
    with pytest.raises(UnknownTaskError, match=f"unknown task '{task}'; known tasks: "):
        benchmark_for_task(task)


def test_score_files_are_named_by_their_stem_and_folders_skip_other_json(tmp_path: Path):
    write(tmp_path / "runs" / "qwen3.5-9b.json", SCORES)
    write(tmp_path / "runs" / "nested" / "gpt-5.4.json", SCORES)
    write(tmp_path / "runs" / "config.json", {"batch": 4})  # in a folder: skipped, not fatal
    inputs = read_inputs([tmp_path / "runs"])
    assert sorted(inputs.cards["m3eval"]) == ["gpt-5.4", "qwen3.5-9b"]
    assert inputs.cards["m3eval"]["gpt-5.4"] == SCORES and inputs.logs == []


def test_bad_inputs_name_the_file(tmp_path: Path):
    with pytest.raises(ReportInputError, match="no such file or folder") as missing:
        read_inputs([tmp_path / "nope.eval"])
    assert missing.value.path == str(tmp_path / "nope.eval")
    with pytest.raises(ReportInputError, match="neither an inspect eval log"):
        read_inputs([write(tmp_path / "other.json", [1, 2])])
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReportInputError, match="holds no .eval or .json"):
        read_inputs([tmp_path / "empty"])
    with pytest.raises(ReportInputError, match="expected an .eval or .json"):
        read_inputs([write(tmp_path / "notes.txt", "x")])
    with pytest.raises(ReportInputError, match="no inputs"):
        read_inputs([])
    only_other = tmp_path / "only_other"
    write(only_other / "config.json", {"batch": 4})
    with pytest.raises(ReportInputError, match="no eval logs or score files"):
        read_inputs([only_other])


def test_two_files_for_one_system_are_refused(tmp_path: Path):
    a = write(tmp_path / "a" / "gpt.json", SCORES)
    b = write(tmp_path / "b" / "gpt.json", SCORES)
    with pytest.raises(ReportInputError, match="same system 'gpt'"):
        read_inputs([a, b])


def test_humans_file_must_be_m3eval_scores(tmp_path: Path):
    assert read_humans(write(tmp_path / "h.json", SCORES)) == SCORES
    with pytest.raises(ReportInputError, match="field '--humans': not M3Eval scores"):
        read_humans(write(tmp_path / "bad.json", {"accuracy": 90}))
    with pytest.raises(ReportInputError, match="no such file"):
        read_humans(tmp_path / "none.json")


def test_build_report_from_score_files(tmp_path: Path):
    index = build_report([write(tmp_path / "m.json", SCORES)], tmp_path / "out",
                         humans=write(tmp_path / "h.json", SCORES), title="Scores")
    assert index == tmp_path / "out" / "index.html"
    markdown = (tmp_path / "out" / "tables.md").read_text()
    # Table 3 rows: Human (the same numbers), Random, the system
    assert "| Human | 30.00 | 20.00 | 10.00 | 5.00 |" in markdown
    assert "| Random | 25.00 | 25.00 | 25.00 | 25.00 |" in markdown
    assert "| m | 30.00 | 20.00 | 10.00 | 5.00 |" in markdown


def test_table_details_are_escaped_and_collapsed(tmp_path: Path):
    from m3kit.report.html import write_report
    from m3kit.schema.report import ReportSection, Table

    template = "Answer <only> the letter & nothing else:\n{question}"
    table = Table(title="t", columns=["setting", "value"], rows=[["prompt sha256", "ab"]],
                  details=[("prompt template", template)])
    page = write_report([ReportSection(benchmark="", title="How", tables=[table])],
                        tmp_path).read_text(encoding="utf-8")
    block = ("<details><summary>prompt template</summary><pre>Answer &lt;only&gt; the letter "
             "&amp; nothing else:\n{question}</pre></details>")
    assert f"</table>{block}" in page
    assert block in (tmp_path / "tables.md").read_text(encoding="utf-8")
