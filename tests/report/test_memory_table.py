"""The main layout on hand-made M3Exam records: the rows grouped no memory / text-based /
multimodal, per type n, EM, F1, BLEU-1 (and LLM-J only where a judge scored) with intervals,
the numbers equal to M3Exam's own scoring, M3Exam and LoCoMo in tables of their own."""

from __future__ import annotations

import pytest

from m3kit.benchmarks import Benchmark, benchmark_named
from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.benchmarks.m3exam.score import scores_from_log
from m3kit.report.memory_table import main_section, main_table, main_tables
from m3kit.schema import LoggedSample, Usage
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import LoggedRun


@pytest.fixture(scope="module")
def m3exam() -> Benchmark:
    found = benchmark_named("m3exam")
    assert found is not None
    return found


def _text(i: int, qtype: str, em: float, f1: float, bleu1: float, session: str,
          judge: float | None = None) -> LoggedSample:
    item = M3ExamItem(status="correct" if em == 1 else "incorrect", kind="text", em=em, f1=f1,
                      bleu1=bleu1, judged=True, in_total=True, question_type=qtype,
                      session=session, llm_judge=judge)
    return LoggedSample(id=f"q{i}", item=item, memory_key="p")


def _closed(i: int, qtype: str, em: float, session: str) -> LoggedSample:
    item = M3ExamItem(status="correct" if em == 1 else "incorrect",
                      kind="fj" if qtype == "fj" else "fm_image", em=em, f1=None, bleu1=None,
                      judged=False, in_total=False, question_type=qtype, session=session)
    return LoggedSample(id=f"q{i}", item=item, memory_key="p")


def _samples(judges: tuple[float | None, float | None] = (None, None)) -> list[LoggedSample]:
    return [_text(1, "ss", 1.0, 1.0, 0.5, "p/D1", judges[0]),
            _text(2, "ss", 0.5, 0.5, 0.25, "p/D2", judges[1]),
            _closed(3, "fm", 1.0, "p/D1"), _closed(4, "fj", 0.0, "p/D3")]


def _run(memory: str | None, samples: list[LoggedSample], images: int = 0,
         model: str = "m3kit/builtin", task: str = "m3exam") -> LoggedRun:
    if images:  # the memory sent the answer model images (class rule 4)
        samples = [s.model_copy(update={"usage": Usage(images_sent=images)}) for s in samples]
    regime = f"memory={memory}" if memory else "oracle"
    return LoggedRun(task=task, model=model, status="success",
                     card=ReproCard(model=model, memory=memory),
                     metadata={"m3kit_regime": regime, "m3kit_memory": memory},
                     task_args={"data": "/d/Pat"}, samples=samples)


def test_rows_grouped_and_every_number_m3exams_own(m3exam: Benchmark) -> None:
    worse = [_text(1, "ss", 0.0, 0.2, 0.1, "p/D1"), _text(2, "ss", 1.0, 1.0, 1.0, "p/D2"),
             _closed(3, "fm", 0.0, "p/D1"), _closed(4, "fj", 1.0, "p/D3")]
    runs = [_run("context", _samples(), images=1), _run("rag", worse), _run(None, _samples())]
    table = main_table(m3exam, runs, "m3exam")
    assert table.types == ["ss", "fm", "fj"] and not table.judged
    # the paper's groups, in its order, whatever the inputs' order
    assert [(cls, [r.run.memory for r in rows]) for cls, rows in table.groups()] == [
        ("none", [None]), ("text", ["rag"]), ("multimodal", ["context"])]
    context = table.rows[0]
    ss = context.per_type["ss"]
    # SS: EM (1 + 0.5) / 2, F1 (1 + 0.5) / 2, BLEU-1 (0.5 + 0.25) / 2, over the 2 questions,
    # in 2 sessions; FM and FJ EM only; Avg.: EM over all 4, F1 and BLEU-1 over SS alone
    assert (ss["em"].value, ss["f1"].value, ss["bleu1"].value) == (0.75, 0.75, 0.375)
    assert ss["em"].n == 2 and ss["em"].n_units == 2 and ss["llm_judge"].judged == 0
    assert set(context.per_type["fm"]) == {"em", "f1", "bleu1", "llm_judge"}
    assert context.per_type["fm"]["f1"].n == 0 and context.per_type["fm"]["f1"].value is None
    assert context.per_type["fj"]["em"].value == 0.0
    assert context.avg["em"].value == 2.5 / 4 and context.avg["em"].n == 4
    assert context.avg["f1"].n == 2 and context.avg["overall"].value is None
    for cell in (ss["em"], context.avg["em"]):  # a percentile interval around the value
        assert cell.lo is not None and cell.hi is not None
        assert 0.0 <= cell.lo <= cell.value <= cell.hi <= 1.0
    # each number is the one M3Exam's scoring gives (m3kit score m3exam, the report's tables)
    for row, run in zip(table.rows, runs, strict=True):
        card = scores_from_log(run.samples)
        for qtype, numbers in card.per_type.items():
            for metric in ("em", "f1", "bleu1"):
                assert row.per_type[qtype][metric].value == numbers.get(metric)
        for metric in ("em", "f1", "bleu1"):
            assert row.avg[metric].value == card.total[metric]

    section = main_section(m3exam, table)
    (view,) = section.tables
    assert view.title == "M3Exam: memory systems by question type (EM / F1 / BLEU-1)"
    assert view.columns == ["System", "Model", "n", "n", "EM", "F1", "BLEU-1", "n", "EM", "n",
                            "EM", "EM", "F1", "BLEU-1"]
    assert view.header_groups == [("", 3), ("SS", 4), ("FM", 2), ("FJ", 2), ("Avg.", 3)]
    labels = [row[0] for row in view.rows]
    assert labels == ["No memory (direct)", "m3kit/builtin · m3exam/Pat · oracle",
                      "Text-based memory systems", "m3kit/builtin · m3exam/Pat · memory=rag",
                      "Multimodal memory systems",
                      "m3kit/builtin · m3exam/Pat · memory=context"]
    assert view.rows[0][1:] == [""] * (len(view.columns) - 1)  # a group's heading row
    context_row = view.rows[5]
    assert context_row[1:4] == ["m3kit/builtin", "4", "2"]
    assert context_row[4] == ss["em"].text(".4f", units=True)
    assert context_row[4].startswith("0.7500 [") and context_row[4].endswith("(2 units)")
    assert context_row[7:9] == ["1", "1.0000 (1 unit)"]  # FM: one question, one session
    notes = " ".join(section.notes)
    assert "memory=rag: it sent no image to the answer model" in notes
    assert "memory=context: it sent images to the answer model" in notes


def test_llm_j_only_where_a_judge_scored(m3exam: Benchmark) -> None:
    judged = _run("rag", _samples(judges=(1.0, 0.5)))
    partial = _run("rag-mm", _samples(judges=(0.25, None)))
    table = main_table(m3exam, [judged, partial], "m3exam")
    assert table.judged
    rag, mm = table.rows
    assert rag.per_type["ss"]["llm_judge"].value == 0.75 and rag.avg["llm_judge"].value == 0.75
    # Overall = 0.5 * 0.75 + (0.625 + 0.75 + 0.375) / 6
    assert rag.avg["overall"].value == pytest.approx(0.375 + 1.75 / 6)
    # a partial judge: no mean over the judged subset, no Overall
    assert mm.per_type["ss"]["llm_judge"].value is None and mm.avg["overall"].value is None
    assert mm.per_type["ss"]["llm_judge"].judged == 1
    (view,) = main_section(m3exam, table).tables
    assert view.title.endswith("(EM / F1 / BLEU-1 / LLM-J)")
    assert view.header_groups == [("", 3), ("SS", 5), ("FM", 2), ("FJ", 2), ("Avg.", 5)]
    assert view.columns[-5:] == ["EM", "F1", "BLEU-1", "LLM-J", "Overall"]
    mm_row = view.rows[-1]
    assert mm_row[7] == "1 of 2 judged" and mm_row[-2] == "1 of 2 judged"
    assert mm_row[-1] == "—"


def test_locomo_runs_get_their_own_table(m3exam: Benchmark) -> None:
    locomo = _run("rag", [_text(1, "1", 1.0, 1.0, 1.0, "c/D1")], task="locomo")
    locomo = locomo.model_copy(update={"task_args": {"data": "/d/locomo10.json"}})
    tables = main_tables(m3exam, [_run("rag", _samples()), locomo])
    assert [(t.benchmark, t.types) for t in tables] == [("m3exam", ["ss", "fm", "fj"]),
                                                        ("locomo", ["1"])]
    section = main_section(m3exam, tables[1])
    assert section.title == "LoCoMo: memory systems by category"
    assert section.tables[0].header_groups[1] == ("multi-hop", 4)
