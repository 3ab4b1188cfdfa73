"""The quickstart's tables and reading from answers, checked against hand-computed values.

Intervals are checked where the cluster bootstrap has only one possible outcome: when every unit
has the same accuracy, every resample has it too, so the 95 % interval is that value exactly.
"""

from __future__ import annotations

import pytest

from m3kit.benchmarks.m3eval.answer_tables import (
    SampleRow,
    accuracy_tables,
    chance_of,
    cost_table,
    evidence_table,
    interference_table,
    interval_cell,
    nback_table,
    percent,
    readings,
    table_notes,
    uniform_answers,
)
from m3kit.metrics import ScoredAnswer
from m3kit.metrics.bootstrap import Interval
from m3kit.schema import Usage
from m3kit.schema.question import Choice, Question


def row(i: int, status: str = "incorrect", role: str | None = None, memory: str = "none",
        usage: Usage | None = None, unit: str = "u0", chance: float = 25.0,
        letter: str | None = None, **groups) -> SampleRow:
    answer = ScoredAnswer(id=f"q{i}", status=status, role=role, answer=letter, groups=groups)
    return SampleRow(answer=answer, model="m3kit/builtin", memory=memory, usage=usage or Usage(),
                     unit=unit, chance=chance)


def test_failed_and_invalid_answers_count_as_wrong():
    rows = [row(1, "correct"), row(2, "invalid"), row(3, "failed"), row(4, "correct")]
    assert percent(rows) == 50.0
    assert percent([]) is None


def test_chance_comes_from_the_question_s_own_options():
    four = Question(id="q", benchmark="b", text="t", answer="A",
                    choices=[Choice(letter=x, text=x) for x in "ABCD"])
    two = four.model_copy(update={"choices": four.choices[:2]})
    assert chance_of(four) == 25.0 and chance_of(two) == 50.0
    assert chance_of(None, "nback") == 50.0 and chance_of(None, "content_retention") == 25.0


def test_interval_cells():
    assert interval_cell(Interval(value=42.44, lo=33.1, hi=51.26, n_units=12)) == \
        "42.4 [33.1, 51.3]"
    assert interval_cell(Interval(value=3.0, lo=-1.0, hi=7.0, n_units=12), True) == \
        "+3.0 [-1.0, +7.0]"
    assert interval_cell(Interval(value=50.0, lo=None, hi=None, n_units=1)) == "50.0"
    assert interval_cell(Interval(value=None, lo=None, hi=None, n_units=0)) == "—"


def _units(n_units: int, correct: dict[str, int], chance: float = 25.0) -> list[SampleRow]:
    """``n_units`` units, each with 2 text and 2 visual questions, ``correct[evidence]`` of
    them right in every unit."""
    rows, i = [], 0
    for u in range(n_units):
        for evidence in ("text", "visual"):
            for j in range(2):
                i += 1
                rows.append(row(i, "correct" if j < correct[evidence] else "incorrect",
                                unit=f"pair:p{u}", chance=chance, evidence=evidence,
                                paradigm="divided_attention",
                                question_type="content_retention"))
    return rows


def test_evidence_table_every_cell_with_n_units_interval_and_chance():
    # every unit: text 2/2 right, visual 1/2: each resample gives 100 % and 50 % exactly
    table = evidence_table(_units(10, {"text": 2, "visual": 1}))
    assert table.columns == ["system / evidence", "n", "units", "acc % [95 % CI]", "chance %"]
    assert table.rows == [
        ["m3kit/builtin", "", "", "", ""],
        ["  text on screen", 20, 10, "100.0 [100.0, 100.0]", 25.0],
        ["  visual only", 20, 10, "50.0 [50.0, 50.0]", 25.0],
    ]


def test_reading_says_what_the_intervals_support():
    lines = readings(_units(10, {"text": 2, "visual": 1}))
    assert lines == [
        ("m3kit/builtin, text on screen: 100.0 [100.0, 100.0] % vs chance 25.0 % (n 20; "
         "minus chance +75.0 [+75.0, +75.0]): above chance."),
        ("m3kit/builtin, visual only: 50.0 [50.0, 50.0] % vs chance 25.0 % (n 20; "
         "minus chance +25.0 [+25.0, +25.0]): above chance."),
        ("m3kit/builtin, text on screen minus visual only: +50.0 [+50.0, +50.0] points: "
         "text on screen is answered better."),
    ]
    # 1 of 2 right everywhere against a chance of 50 %: the difference is 0 in every resample
    level = readings(_units(10, {"text": 1, "visual": 1}, chance=50.0))
    assert level[0].endswith("inside the noise: not distinguishable from chance.")
    assert level[2].endswith("inside the noise: no difference shown.")
    # too few units to tell, whatever the values
    few = readings(_units(3, {"text": 2, "visual": 0}))
    assert few[0].endswith("too few units (3) to tell.")


def test_table_notes_count_answers_and_flag_few_units():
    rows = [*_units(3, {"text": 2, "visual": 1}), row(99, "invalid", unit="pair:p0",
                                                      evidence="text")]
    notes = table_notes(rows)
    assert notes[0].startswith("13 answers counted; 1 invalid and 0 failed, each counted wrong")
    assert "fewer than 10 units" in notes[1]
    assert len(table_notes(_units(10, {"text": 1, "visual": 1}))) == 1


def test_accuracy_tables_one_per_system_paradigm_heading_rows():
    rows = [*_units(2, {"text": 1, "visual": 1}),
            row(50, "correct", memory="rag", unit="pair:p0", paradigm="nback",
                question_type="nback", chance=50.0)]
    direct, rag = accuracy_tables(rows)
    assert direct.title == "Accuracy by paradigm · m3kit/builtin"
    assert direct.rows == [["divided attention", "", "", "", ""],
                           ["  content", 8, 2, "50.0 [50.0, 50.0]", 25.0]]
    assert rag.rows == [["N-back", "", "", "", ""], ["  N-back", 1, 1, "100.0", 50.0]]


def test_interference_accuracy_and_intrusion():
    rows = [
        row(1, "correct", "correct", paradigm="interference", condition="proactive"),
        row(2, "incorrect", "intrusion", paradigm="interference", condition="proactive"),
        row(3, "incorrect", "irrelevant_distractor", paradigm="interference",
            condition="proactive"),
        row(4, "failed", paradigm="interference", condition="proactive"),
        row(5, "incorrect", "intrusion", paradigm="interference", condition="retroactive"),
    ]
    # proactive: 1 of 4 correct, 1 of 4 chose an intrusion (the failed one chose nothing);
    # one unit: no interval
    assert interference_table(rows).rows == [
        ["m3kit/builtin", "", "", "", ""],
        ["  proactive", 4, 1, "25.0", "25.0"],
        ["  retroactive", 1, 1, "0.0", "100.0"],
    ]


def test_nback_by_n_and_k():
    rows = [row(1, "correct", unit="t1", paradigm="nback", n=1, k=4, chance=50.0),
            row(2, unit="t2", paradigm="nback", n=1, k=6, chance=50.0),
            row(3, "correct", unit="t3", paradigm="nback", n=2, k=6, chance=50.0),
            row(4, "correct", unit="t3", paradigm="nback", n=2, k=6, chance=50.0)]
    table = nback_table(rows)
    assert [r[:3] for r in table.rows] == [["m3kit/builtin", "", ""], ["  N=1", 2, 2],
                                           ["  N=2", 2, 1], ["  K=4", 1, 1], ["  K=6", 3, 2]]
    assert [r[3].split(" [")[0] for r in table.rows[1:]] == ["50.0", "100.0", "100.0", "66.7"]
    assert {r[4] for r in table.rows[1:]} == {50.0}


def test_uniform_answers_are_named():
    rows = [row(i, letter="B", paradigm="nback", question_type="nback") for i in range(4)]
    (line,) = uniform_answers(rows)
    assert line.startswith("m3kit/builtin gave the same answer (B) to all 4 N-back questions")
    assert uniform_answers([*rows, row(9, letter="A", paradigm="nback")]) == []


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


@pytest.mark.parametrize("table", [
    evidence_table(_units(10, {"text": 2, "visual": 1})),
    *accuracy_tables(_units(10, {"text": 2, "visual": 1})),
])
def test_tables_fit_80_columns(table):
    """Rendered as the quickstart prints them (rich, 80 columns, not a terminal), no cell is
    wrapped or cut."""
    import io

    from rich.console import Console

    from m3kit.cli.quickstart import _rich_table

    buffer = io.StringIO()
    Console(file=buffer, width=80, force_terminal=False).print(_rich_table(table))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    for cells in table.rows:
        for cell in cells:
            text = table.cell(cell)
            assert not text or any(text.strip() in line for line in lines), text


def test_a_cell_whose_gold_never_varies_gets_a_caveat():
    def gold(i: int, text: str, kind: str) -> SampleRow:
        return row(i, paradigm="interference", question_type=kind).model_copy(
            update={"gold_text": text})

    rows = [gold(0, "Neither video", "false_memory"), gold(1, "Neither video", "false_memory"),
            gold(2, "a red cup", "source_memory"), gold(3, "a blue hat", "source_memory")]
    notes = table_notes(rows)
    caveats = [n for n in notes if "same correct option" in n]
    assert caveats == [("Every interference / false_memory question has the same correct "
                        "option, 'Neither video': a model that always answers it scores 100 % "
                        "there, whatever it remembers.")]
