"""The cost layout: every cell of one system's row computed by hand from its samples' usage,
each memory key's index build counted once, the per-question means over answered questions,
and the records unrounded."""

from __future__ import annotations

import json

import pytest

from m3kit.benchmarks import benchmark_named
from m3kit.benchmarks.m3exam.item import M3ExamItem
from m3kit.report.cost_table import COLUMNS, cost_rows, cost_section
from m3kit.schema import LoggedSample, Usage
from m3kit.schema.card import ReproCard
from m3kit.schema.evallog import LoggedRun


def _item(status: str = "correct") -> M3ExamItem:
    return M3ExamItem(status=status, kind="text", em=1.0 if status == "correct" else 0.0,
                      f1=1.0, bleu1=1.0, judged=True, in_total=True, question_type="ss")


def _samples() -> list[LoggedSample]:
    return [
        # key A: its index built in 3 s, repeated on both of its samples; the first question
        # fed 4 events (2 calls, 50 + 5 tokens), the second 1 more after a replay
        LoggedSample(id="q1", memory_key="A", item=_item(), total_seconds=2.0, usage=Usage(
            prompt_tokens=100, completion_tokens=10, images_sent=2, index_build_seconds=3.0,
            ingest_events=4, ingest_calls=2, ingest_prompt_tokens=50,
            ingest_completion_tokens=5, ingest_seconds=1.5)),
        LoggedSample(id="q2", memory_key="A", item=_item("incorrect"), total_seconds=4.0,
                     usage=Usage(model_calls=3, prompt_tokens=300, completion_tokens=20,
                                 images_sent=0, index_build_seconds=3.0, ingest_events=1,
                                 ingest_calls=1, ingest_prompt_tokens=20,
                                 ingest_completion_tokens=2, ingest_seconds=0.25,
                                 ingest_replays=1)),
        # key B: the answer failed after its ingest: its ingest counts, its answer's cost not
        LoggedSample(id="q3", memory_key="B", failure="model: timed out", total_seconds=9.0,
                     item=_item("failed"), usage=Usage(
                         prompt_tokens=700, completion_tokens=0, images_sent=5,
                         index_build_seconds=1.5, ingest_events=3, ingest_prompt_tokens=7,
                         ingest_seconds=0.5)),
        # no key: the question is its own (no index build)
        LoggedSample(id="q4", item=_item(), total_seconds=1.0,
                     usage=Usage(model_calls=1, prompt_tokens=201, completion_tokens=1,
                                 images_sent=1)),
    ]


def _run(model: str = "m3kit/builtin", memory: str = "rag", wall: float | None = 6.0
         ) -> LoggedRun:
    return LoggedRun(task="m3exam", model=model, status="success", wall_seconds=wall,
                     card=ReproCard(model=model, memory=memory),
                     metadata={"m3kit_regime": f"memory={memory}"},
                     task_args={"data": "/d/Pat"}, samples=_samples())


def test_every_cell_by_hand() -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    (row,) = cost_rows(m3exam, [_run()])
    assert row.questions == 4 and row.failed == 1
    assert row.memory_keys == 3  # A, B, and q4 on its own
    # ingestion: summed over every question, the failed one's too
    assert row.ingest_events == 4 + 1 + 3
    assert row.ingest_calls == 2 + 1
    assert row.ingest_prompt_tokens == 50 + 20 + 7 and row.ingest_completion_tokens == 5 + 2
    assert row.ingest_tokens == 84
    assert row.ingest_seconds == 1.5 + 0.25 + 0.5 and row.ingest_replays == 1
    # index builds once per key: A 3 s (not 2 x 3 s) + B 1.5 s + q4 0 s
    assert row.index_build_seconds == 4.5
    # per question, over the 3 answered (q1, q2, q4): (100 + 300 + 201) / 3, (10 + 20 + 1) / 3,
    # (2 + 0 + 1) / 3 images, one question's own time (2 + 4 + 1) / 3
    assert row.prompt_tokens_per_question == 601 / 3
    assert row.calls_per_question == (0 + 3 + 1) / 3  # q1 reported no call count
    assert row.completion_tokens_per_question == 31 / 3
    assert row.images_per_question == 1.0
    assert row.latency_seconds == 7 / 3
    # the run's 6 s of wall clock over its 4 questions (they ran concurrently)
    assert row.seconds_per_question == 1.5

    section = cost_section(m3exam, [row])
    (table,) = section.tables
    assert table.columns == COLUMNS
    assert table.rows == [["m3kit/builtin · m3exam/Pat · memory=rag", "m3kit/builtin", "rag", 4,
                           1, 3, 84, 4.5, 2.25, 1, 4 / 3, 601 / 3, 31 / 3, 1.5, 1.0]]
    assert (" | 4 | 1 | 3 | 84 | 4.50 | 2.25 | 1 | 1.33 | 200.33 | 10.33 | 1.50 | 1.00 |"
            in table.to_markdown())
    assert section.title == "M3Exam: cost of each run" and section.notes == []
    # the record keeps every digit
    data = json.loads(row.model_dump_json())
    assert data["prompt_tokens_per_question"] == 601 / 3 == 200.33333333333334
    # images reached the answer model (and the name and settings say nothing): multimodal
    assert data["run"]["memory"] == "rag" and data["run"]["memory_class"] == "multimodal"


def test_unknown_wall_time_and_no_answered_question() -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    run = _run(wall=None).model_copy(update={"samples": _samples()[2:3]})
    (row,) = cost_rows(m3exam, [run])
    assert row.seconds_per_question is None  # a killed run records no end
    assert row.prompt_tokens_per_question is None and row.latency_seconds is None
    assert row.failed == 1 and row.ingest_events == 3 and row.index_build_seconds == 1.5
    (table,) = cost_section(m3exam, [row]).tables
    assert table.to_markdown().splitlines()[-1].endswith("| — | — | — | — |")


def test_rows_of_another_answer_model_are_flagged() -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    rows = cost_rows(m3exam, [_run(), _run(memory="context"), _run(model="other")])
    assert [r.run.model_differs for r in rows] == [False, False, True]
    section = cost_section(m3exam, rows)
    assert section.tables[0].rows[2][0] == "other · m3exam/Pat · memory=rag †"
    assert len(section.notes) == 1 and "(m3kit/builtin)" in section.notes[0]


@pytest.mark.parametrize("missing", ["wall", "none"])
def test_pooled_tasks_sum_their_wall_time(missing: str) -> None:
    m3exam = benchmark_named("m3exam")
    assert m3exam is not None
    parts = [_run(wall=2.0), _run(wall=None if missing == "wall" else 4.0)]
    pooled = _run(wall=4.0).model_copy(update={"parts": parts})
    (row,) = cost_rows(m3exam, [pooled])
    assert row.seconds_per_question == (None if missing == "wall" else 6.0 / 4)
