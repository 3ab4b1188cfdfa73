"""The M3Exam report: per-type table with cost columns, from hand-made items and real logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from m3kit.benchmarks import run_benchmark_task
from m3kit.benchmarks.m3exam.report import (
    ItemRow,
    cost_table,
    escalation_table,
    per_type_table,
    retrieval_table,
    summarize,
)

BENCHMARK_TASK = "m3exam"


def sections(logs: list, out_dir: Path) -> list:
    """The benchmark's part of the report for eval logs, pooled and read as ``m3kit report``
    does: its sections, then its headline intervals' (``m3kit.report.build``)."""
    from m3kit.benchmarks import benchmark_for_task
    from m3kit.report.build import benchmark_sections
    from m3kit.report.inputs import pooled_runs

    benchmark = benchmark_for_task(BENCHMARK_TASK)
    return benchmark_sections(benchmark, pooled_runs(benchmark, logs), out_dir)


def _row(i: int, qtype: str, em: float, f1: float | None = None, bleu1: float | None = None,
         judge: float | None = None, **cost) -> ItemRow:
    text = qtype not in ("fm", "fj")
    kind = "text" if text else "fj" if qtype == "fj" else "fm_image"
    return ItemRow(id=f"p/{i}", question_type=qtype, kind=kind, em=em, f1=f1, bleu1=bleu1,
                   llm_judge=judge, judged=text, in_total=text, memory_key="p", **cost)


def test_summary_by_hand() -> None:
    rows = [
        _row(0, "ss", 1.0, f1=1.0, bleu1=0.8, judge=1.0, prompt_tokens=100, images=2,
             index_seconds=3.0, seconds=1.0),
        _row(1, "ss", 0.5, f1=0.4, bleu1=0.2, judge=0.5, prompt_tokens=300, images=0,
             escalations=1, index_seconds=3.0, seconds=3.0),
        _row(2, "fm", 1.0, prompt_tokens=200, images=4, escalations=2, index_seconds=3.0,
             seconds=2.0),
        _row(3, "fj", 0.0, prompt_tokens=400, index_seconds=3.0, seconds=2.0),
    ]
    summary = summarize("sys", rows, wall_seconds=3.0)
    # ss: EM (1 + 0.5)/2 = 0.75; F1 (1 + 0.4)/2 = 0.7; BLEU-1 (0.8 + 0.2)/2 = 0.5; J 0.75.
    assert summary.per_type["ss"] == {"count": 2, "em": 0.75, "f1": pytest.approx(0.7),
                                      "bleu1": 0.5, "llm_judge": 0.75}
    assert summary.per_type["fm"]["em"] == 1.0 and summary.per_type["fm"]["f1"] is None
    # Avg EM over all 4 items: (1 + 0.5 + 1 + 0)/4 = 0.625; F1/BLEU/J over the ss items only.
    assert summary.total["em"] == 0.625
    assert summary.total["f1"] == pytest.approx(0.7) and summary.total["bleu1"] == 0.5
    # Overall = 0.5 * 0.75 + (0.625 + 0.7 + 0.5)/6 = 0.375 + 0.304167 = 0.679167.
    assert summary.total["overall"] == pytest.approx(0.375 + 1.825 / 6)
    # Costs: tokens (100+300+200+400)/4 = 250; images 6/4 = 1.5; 2 of 4 escalated = 0.5;
    # one memory key built once in 3 s (not 4 x 3 s); time per question: the run's 3 s of wall
    # clock over 4 questions = 0.75 s (they ran at once); one question's own time, start to
    # answer, (1+3+2+2)/4 = 2 s.
    assert summary.cost["prompt_tokens"] == 250 and summary.cost["images"] == 1.5
    assert summary.cost["escalation_rate"] == 0.5 and summary.cost["index_seconds"] == 3.0
    assert summary.cost["seconds_per_question"] == 0.75
    assert summary.cost["latency_seconds"] == 2.0
    assert summarize("sys", rows).cost["seconds_per_question"] is None  # no wall time known


def test_judged_system_gets_judge_and_overall_rows() -> None:
    summary = summarize("sys", [_row(0, "ss", 1.0, f1=0.5, bleu1=0.5, judge=0.75)])
    table = per_type_table([summary])
    assert [r[1] for r in table.rows] == ["EM", "F1", "BLEU-1", "LLM-J", "Overall"]
    # Overall = 0.5 * 0.75 + (1 + 0.5 + 0.5)/6 = 0.375 + 0.333333 = 0.708333.
    assert table.rows[-1][-1] == pytest.approx(0.375 + 2 / 6)


def test_no_judge_means_no_overall_and_no_judge_row() -> None:
    summary = summarize("sys", [_row(0, "ss", 1.0, f1=1.0, bleu1=1.0), _row(1, "fj", 1.0)])
    assert summary.total["llm_judge"] is None and summary.total["overall"] is None
    table = per_type_table([summary])
    assert [r[1] for r in table.rows] == ["EM", "F1", "BLEU-1"]
    assert table.columns == ["System", "Metric", "SS", "FJ", "Avg."]
    # FJ has EM only: its F1 cell prints as a dash.
    f1_row = table.rows[1]
    assert table.cell(f1_row[3]) == "—" and table.cell(f1_row[2]) == "1.0000"
    cost = cost_table([summary])
    assert cost.columns[:4] == ["System", "Questions", "Failed", "EM"]
    assert "Index s" in cost.columns and "Escalated %" in cost.columns


def test_partial_judge_shows_counts_and_no_overall(tmp_path: Path) -> None:
    from m3kit.benchmarks.m3exam import BENCHMARK
    from m3kit.benchmarks.m3exam.item import M3ExamItem
    from m3kit.benchmarks.m3exam.report import sections as m3exam_sections
    from m3kit.benchmarks.protocol import ReportContext
    from m3kit.schema.evallog import LoggedRun, LoggedSample

    # ss: both judged (1, 0.5) -> 0.75; tr: 1 of 2 judged; Avg.: 3 of 4 judged
    rows = [_row(0, "ss", 1.0, f1=1.0, bleu1=1.0, judge=1.0),
            _row(1, "ss", 0.0, f1=0.0, bleu1=0.0, judge=0.5),
            _row(2, "tr", 1.0, f1=1.0, bleu1=1.0, judge=0.25),
            _row(3, "tr", 1.0, f1=1.0, bleu1=1.0)]
    summary = summarize("sys", rows)
    assert summary.per_type["ss"]["llm_judge"] == 0.75
    assert summary.per_type["tr"]["llm_judge"] is None
    assert summary.per_type["tr"]["llm_judge_partial"] == 0.25
    assert (summary.total["llm_judge"], summary.total["overall"]) == (None, None)
    assert summary.total["judge_count"] == 3 and summary.total["judgeable_count"] == 4
    table = per_type_table([summary])
    by_metric = {row[1]: row[2:] for row in table.rows}
    assert by_metric["LLM-J"] == [0.75, "1 of 2 judged", "3 of 4 judged"]
    assert by_metric["Overall"] == [None, None, "not computed: LLM-J partial"]
    assert "k of n judged" in table.caption
    # a whole judge or none keeps the caption as it was
    whole = summarize("sys", rows[:3])
    assert "k of n judged" not in per_type_table([whole]).caption
    # the section's note counts the items without a judge score and says how to get them
    samples = [LoggedSample(id=r.id, item=M3ExamItem(
        status="correct" if r.em == 1 else "incorrect", kind="text", em=r.em, f1=r.f1,
        bleu1=r.bleu1, judged=True, in_total=True, question_type=r.question_type,
        llm_judge=r.llm_judge)) for r in rows]
    run = LoggedRun(task="m3exam", model="m", status="success",
                    task_args={"data": "p", "regime": "text"}, samples=samples)
    (section,) = m3exam_sections(ReportContext(benchmark=BENCHMARK, runs=[run],
                                              out_dir=tmp_path))
    assert any("LLM-J partial: 1 of 4 items LLM-J applies to have no judge score" in note
               and "judge_model" in note for note in section.notes)


def test_table_title_names_the_fj_rule() -> None:
    exact = summarize("a", [_row(0, "fj", 0.0)], fj_rule="exact")
    letter = summarize("b", [_row(1, "fj", 1.0)], fj_rule="letter")
    unknown = summarize("c", [_row(2, "fj", 1.0)])
    assert per_type_table([exact]).title == "M3Exam: scores by question type (FJ EM rule: exact)"
    assert per_type_table([letter, exact]).title.endswith("(FJ EM rule: exact, letter)")
    assert per_type_table([unknown]).title.endswith("(FJ EM rule: not recorded)")
    assert "letter: the option letter" in per_type_table([exact]).caption


def test_escalation_table_only_for_escalating_systems() -> None:
    rows = [_row(0, "mr", 0.0, f1=0, bleu1=0, escalations=1), _row(1, "mr", 0.0, f1=0, bleu1=0),
            _row(2, "ss", 0.0, f1=0, bleu1=0)]
    table = escalation_table({"proctor": rows, "plain": [_row(3, "ss", 1.0, f1=1, bleu1=1)]})
    # Paper column order (SS before MR); ss: 0 of 1 escalated; mr: 1 of 2 = 50 %.
    assert table.columns == ["System", "SS", "MR"]
    assert table.rows == [["proctor", 0.0, 50.0]]
    assert escalation_table({"plain": [_row(3, "ss", 1.0, f1=1, bleu1=1)]}) is None


def test_retrieval_table_by_hand() -> None:
    # q0: evidence {D1:1, D2:1}; ranking D1:1, D1:1 (an image of the same round), D3:1, D2:1.
    #   distinct top 5 = [D1:1, D3:1, D2:1] -> recall@5 = 2/2 = 1, hit@5 = 1.
    # q1: evidence {D4:1}; ranking D1:1 -> recall 0, hit 0.  q2: no evidence -> left out.
    rows = [
        _row(0, "ms", 0.0, f1=0, bleu1=0, retrieved=["D1:1", "D1:1", "D3:1", "D2:1"],
             evidence=["D1:1", "D2:1"]),
        _row(1, "ss", 0.0, f1=0, bleu1=0, retrieved=["D1:1"], evidence=["D4:1"]),
        _row(2, "ss", 0.0, f1=0, bleu1=0, retrieved=["D1:1"]),
    ]
    table = retrieval_table({"rag": rows, "direct": [_row(3, "ss", 1.0, f1=1, bleu1=1)]})
    assert table.columns[:3] == ["System", "Questions", "recall@5"]
    # mean over the 2 questions with evidence: recall (1 + 0) / 2 = 0.5 at every k; hit too
    assert table.rows == [["rag", 2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]]
    assert retrieval_table({"direct": [_row(3, "ss", 1.0, f1=1, bleu1=1)]}) is None


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory):
    """Two real runs of the m3exam task on a tiny persona: oracle-text and memory=context."""
    root = tmp_path_factory.mktemp("m3exam_report")
    folder = root / "Pat_Report"
    (folder / "images").mkdir(parents=True)
    Image.new("RGB", (32, 24), (200, 10, 10)).save(folder / "images" / "img_1.jpg")
    sessions = [{"session_id": "D1", "date": "2024-03-01", "dialogues": [
        {"round": "D1:1", "user": "My dog Rex ate chocolate.", "assistant": "Call a vet now.",
         "img_file": ["img_1.jpg"], "img_id": [1], "img_description": ["a brown dog"]}]}]
    questions = [
        {"question": "What did Rex eat?", "answer": ["chocolate"], "label": "chocolate",
         "supporting_facts": "D1:1", "type": "ss"},
        {"question": "Which image shows the dog? Return img_<number>.", "answer": ["img_1"],
         "label": "img_1", "supporting_facts": "D1:1", "type": "fm"},
    ]
    (folder / "sessions.json").write_text(json.dumps(sessions))
    (folder / "question.json").write_text(json.dumps(questions))
    out = []
    for regime, extra in (("text", {}), ("memory=context",
                                         {"memory_config": {"send_images": False}})):
        log = run_benchmark_task("m3exam", "m3kit/builtin", model_args={"ocr": False},
                                 task_args={"data": str(folder), "regime": regime, **extra},
                                 log_dir=root / "logs")
        assert log.status == "success"
        out.append(log)
    return out


def test_sections_from_real_logs(logs, tmp_path: Path) -> None:
    result = sections(logs, tmp_path)
    assert len(result) == 2 and [s.benchmark for s in result] == ["m3exam", "m3exam"]
    per_type, cost = result[0].tables[:2]
    systems = [row[0] for row in cost.rows]
    assert systems == ["m3kit/builtin · m3exam/Pat_Report · oracle-text",
                       "m3kit/builtin · m3exam/Pat_Report · memory=context"]
    assert per_type.columns == ["System", "Metric", "SS", "FM", "Avg."]
    # both runs scored fj by the paper's rule (the default) and their logs say so
    assert per_type.title == "M3Exam: scores by question type (FJ EM rule: exact)"
    for row in cost.rows:
        assert row[1] == 2 and row[2] == 0  # two questions, none failed
        assert row[4] > 0  # prompt tokens per question
    # The memory run reports its index build; the direct regime builds none.
    assert cost.rows[0][8] == 0.0 and cost.rows[1][8] > 0.0
    for name in result[0].figures:
        assert (tmp_path / name).is_file() and name.endswith(".png")
    # after it: the TOTAL's headline numbers as value [lo, hi], one column per system; the
    # values are the per-type table's Avg. EM (the questions' sessions resampled)
    assert result[1].title == "M3Exam · Confidence intervals"
    (intervals,) = result[1].tables
    assert intervals.title == "M3Exam · headline numbers with intervals"
    assert intervals.columns == ["number", *systems]
    assert intervals.caption.startswith("95 % intervals, 2000 resamples of session")
    em = next(row for row in intervals.rows if row[0] == "em")
    em_avg = [row[-1] for row in per_type.rows if row[1] == "EM"]
    # each run's two questions lie in one session: one unit, no interval
    assert em[1:] == [f"{v:.4f} (1 unit)" for v in em_avg]
    # the memory run's retrieved rounds against the supporting fact D1:1 (the only round)
    retrieval = next(t for t in result[0].tables if "retrieval" in t.title)
    assert retrieval.rows == [["m3kit/builtin · m3exam/Pat_Report · memory=context", 2, 1.0,
                               1.0, 1.0, 1.0, 1.0, 1.0]]


def test_letter_rule_runs_are_their_own_system(logs, tmp_path: Path) -> None:
    data = logs[0].eval.task_args["data"]
    letter = run_benchmark_task("m3exam", "m3kit/builtin", model_args={"ocr": False},
                                task_args={"data": data, "regime": "text", "fj_letter": True},
                                log_dir=tmp_path / "logs")
    assert letter.status == "success" and letter.eval.metadata["m3kit_fj_rule"] == "letter"
    per_type = sections([logs[0], letter], tmp_path)[0].tables[0]
    assert per_type.title == "M3Exam: scores by question type (FJ EM rule: exact, letter)"
    assert {r[0] for r in per_type.rows} == {
        "m3kit/builtin · m3exam/Pat_Report · oracle-text",
        "m3kit/builtin · m3exam/Pat_Report · oracle-text (fj letter)",
    }


def test_report_dispatch_writes_html(logs, tmp_path: Path) -> None:
    from m3kit.report.build import build_report

    index = build_report([Path(log.location) for log in logs], tmp_path / "report")
    html = index.read_text()
    assert "M3Exam: scores by question type" in html and "M3Exam: cost per question" in html


def test_locomo_logs_get_their_own_section(logs, tmp_path: Path) -> None:
    # A locomo log and an m3exam oracle-text log of the same model: two sections, not one row
    # with the two benchmarks' columns mixed (SS | 1 | 2 | 5).
    locomo = tmp_path / "locomo10.json"
    locomo.write_text(json.dumps([{
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "A", "speaker_b": "B", "session_1_date_time": "May 2023",
                         "session_1": [{"speaker": "A", "dia_id": "D1:1", "text": "I paint."}]},
        "qa": [{"question": "What does A do?", "answer": "paints", "evidence": ["D1:1"],
                "category": 1},
               {"question": "When?", "answer": "May 2023", "evidence": ["D1:1"], "category": 2},
               {"question": "What did B paint?", "adversarial_answer": "a sunset",
                "evidence": ["D1:1"], "category": 5}],
    }]), encoding="utf-8")  # fmt: skip
    run = run_benchmark_task("locomo", "m3kit/builtin", model_args={"ocr": False},
                             task_args={"data": str(locomo), "regime": "text"},
                             log_dir=tmp_path / "logs")
    assert run.status == "success"
    result = sections([logs[0], run], tmp_path / "out")
    assert [(s.benchmark, s.title) for s in result] == [
        ("m3exam", "M3Exam"), ("locomo", "LoCoMo"), ("m3exam", "M3Exam · Confidence intervals")]
    # one interval table for the benchmark's systems, each of either data set
    (intervals,) = result[2].tables
    assert intervals.columns == ["number", "m3kit/builtin · m3exam/Pat_Report · oracle-text",
                                 "m3kit/builtin · locomo/locomo10 · oracle-text"]
    m3exam_table, locomo_table = result[0].tables[0], result[1].tables[0]
    assert m3exam_table.columns == ["System", "Metric", "SS", "FM", "Avg."]
    assert locomo_table.title == "LoCoMo: scores by category"
    assert locomo_table.columns == ["System", "Metric", "multi-hop", "temporal", "adversarial",
                                    "Avg."]
    assert {r[0] for r in locomo_table.rows} == {"m3kit/builtin · locomo/locomo10 · oracle-text"}
    assert {r[0] for r in m3exam_table.rows} == {"m3kit/builtin · m3exam/Pat_Report · oracle-text"}
    assert set(result[0].figures).isdisjoint(result[1].figures)
    for name in result[1].figures:
        assert (tmp_path / "out" / name).is_file()
