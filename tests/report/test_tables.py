"""Tables from sample rows, checked against hand-computed values."""

from __future__ import annotations

import pytest

from m3kit.report.rows import SampleRow
from m3kit.report.tables import (
    accuracy,
    accuracy_table,
    cost_table,
    interference_table,
    intrusion_rate,
    nback_table,
)


def row(i: int, **kw) -> SampleRow:
    return SampleRow(id=f"q{i}", model="m3kit/builtin", **kw)


def test_failed_and_invalid_answers_count_as_wrong():
    rows = [row(1, correct=True), row(2, invalid=True), row(3, failed=True), row(4, correct=True)]
    assert accuracy(rows) == 50.0
    assert accuracy([]) is None


def test_intrusion_rate_over_all_answers():
    rows = [
        row(1, paradigm="interference", condition="proactive", correct=True, role="correct"),
        row(2, paradigm="interference", condition="proactive", role="intrusion"),
        row(3, paradigm="interference", condition="proactive", role="irrelevant_distractor"),
        row(4, paradigm="interference", condition="proactive", failed=True),
        row(5, paradigm="interference", condition="retroactive", role="intrusion"),
    ]
    assert intrusion_rate(rows[:4]) == 25.0  # 1 of 4 (the failed answer chose nothing)
    table = interference_table(rows)
    assert table.rows == [
        ["m3kit/builtin", "proactive", 4, 25.0, 25.0],
        ["m3kit/builtin", "retroactive", 1, 0.0, 100.0],
    ]


def test_accuracy_table_splits_by_evidence_and_counts_failures():
    rows = [
        row(1, paradigm="divided_attention", question_type="source_identification",
            evidence="text", correct=True),
        row(2, paradigm="divided_attention", question_type="source_identification",
            evidence="visual"),
        row(3, paradigm="divided_attention", question_type="source_identification",
            evidence="visual", invalid=True),
    ]
    table = accuracy_table(rows)
    [line] = table.rows
    assert line[:4] == ["m3kit/builtin", "divided_attention", "source_identification", 3]
    assert line[4] == pytest.approx(100 / 3)
    assert line[5:] == [25.0, 100.0, 0.0, 1, 0]
    assert "| m3kit/builtin | divided_attention |" in table.to_markdown()


def test_nback_by_n_and_k():
    rows = [
        row(1, paradigm="nback", n=1, k=4, correct=True),
        row(2, paradigm="nback", n=1, k=6),
        row(3, paradigm="nback", n=2, k=6, correct=True),
        row(4, paradigm="nback", n=2, k=6, correct=True),
    ]
    table = nback_table(rows)
    assert table.rows == [
        ["m3kit/builtin", "N=1", 2, 50.0],
        ["m3kit/builtin", "N=2", 2, 100.0],
        ["m3kit/builtin", "K=4", 1, 100.0],
        ["m3kit/builtin", "K=6", 3, pytest.approx(200 / 3)],
    ]


def test_cost_per_answer_and_memory_systems_apart():
    rows = [
        row(1, prompt_tokens=100, completion_tokens=6, images_sent=96),
        row(2, prompt_tokens=300, completion_tokens=6, images_sent=96),
        row(3, memory="rag", prompt_tokens=50, completion_tokens=6, index_build_seconds=2.5),
    ]
    table = cost_table(rows)
    assert table.rows == [
        ["m3kit/builtin", 2, 200.0, 6.0, 96.0, 0.0, 0.0],
        ["m3kit/builtin + rag", 1, 50.0, 6.0, 0.0, 0.0, 2.5],
    ]
