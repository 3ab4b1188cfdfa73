"""Tables from answers, checked against hand-computed values."""

from __future__ import annotations

import pytest

from m3kit.benchmarks.m3eval.report import (
    SampleRow,
    accuracy_table,
    cost_table,
    evidence_table,
    interference_table,
    nback_table,
    percent,
)
from m3kit.metrics import ScoredAnswer
from m3kit.schema import Usage


def row(i: int, status: str = "incorrect", role: str | None = None, memory: str = "none",
        usage: Usage | None = None, **groups) -> SampleRow:
    answer = ScoredAnswer(id=f"q{i}", status=status, role=role, groups=groups)
    return SampleRow(answer=answer, model="m3kit/builtin", memory=memory, usage=usage or Usage())


def test_failed_and_invalid_answers_count_as_wrong():
    rows = [row(1, "correct"), row(2, "invalid"), row(3, "failed"), row(4, "correct")]
    assert percent(rows) == 50.0
    assert percent([]) is None


def test_interference_accuracy_and_intrusion():
    rows = [
        row(1, "correct", "correct", paradigm="interference", condition="proactive"),
        row(2, "incorrect", "intrusion", paradigm="interference", condition="proactive"),
        row(3, "incorrect", "irrelevant_distractor", paradigm="interference",
            condition="proactive"),
        row(4, "failed", paradigm="interference", condition="proactive"),
        row(5, "incorrect", "intrusion", paradigm="interference", condition="retroactive"),
    ]
    # proactive: 1 of 4 correct, 1 of 4 chose an intrusion (the failed one chose nothing)
    assert interference_table(rows).rows == [
        ["m3kit/builtin", "proactive", 4, 25.0, 25.0],
        ["m3kit/builtin", "retroactive", 1, 0.0, 100.0],
    ]


def test_accuracy_table_splits_by_evidence_and_counts_failures():
    common = {"paradigm": "divided_attention", "question_type": "source_identification"}
    rows = [row(1, "correct", evidence="text", **common), row(2, evidence="visual", **common),
            row(3, "invalid", evidence="visual", **common)]
    [line] = accuracy_table(rows).rows
    assert line[:4] == ["m3kit/builtin", "divided_attention", "source_identification", 3]
    assert line[4] == pytest.approx(100 / 3)
    assert line[5:] == [25.0, 100.0, 0.0, 1, 0]
    assert "| m3kit/builtin | divided_attention |" in accuracy_table(rows).to_markdown()


def test_evidence_headline_with_the_chance_of_its_questions():
    rows = [row(1, "correct", evidence="text", question_type="content_retention"),
            row(2, evidence="text", question_type="source_memory"),
            row(3, evidence="visual", question_type="nback")]
    assert evidence_table(rows).rows == [
        ["m3kit/builtin", "text", 2, 50.0, 37.5],  # chance (25 + 50) / 2
        ["m3kit/builtin", "visual", 1, 0.0, 50.0],
    ]


def test_nback_by_n_and_k():
    rows = [row(1, "correct", paradigm="nback", n=1, k=4), row(2, paradigm="nback", n=1, k=6),
            row(3, "correct", paradigm="nback", n=2, k=6),
            row(4, "correct", paradigm="nback", n=2, k=6)]
    assert nback_table(rows).rows == [
        ["m3kit/builtin", "N=1", 2, 50.0],
        ["m3kit/builtin", "N=2", 2, 100.0],
        ["m3kit/builtin", "K=4", 1, 100.0],
        ["m3kit/builtin", "K=6", 3, pytest.approx(200 / 3)],
    ]


def test_cost_per_answer_and_memory_systems_apart():
    rows = [
        row(1, usage=Usage(prompt_tokens=100, completion_tokens=6, images_sent=96)),
        row(2, usage=Usage(prompt_tokens=300, completion_tokens=6, images_sent=96)),
        row(3, memory="rag", usage=Usage(prompt_tokens=50, completion_tokens=6,
                                         index_build_seconds=2.5)),
    ]
    assert cost_table(rows).rows == [
        ["m3kit/builtin", 2, 200.0, 6.0, 96.0, 0.0, 0.0],
        ["m3kit/builtin + rag", 1, 50.0, 6.0, 0.0, 0.0, 2.5],
    ]
