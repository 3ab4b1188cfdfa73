"""Questions: choices with roles, groups, free-form answers, validation."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from m3kit.schema import (
    Choice,
    ChoiceRole,
    ImageRef,
    Question,
    QuestionGroup,
    VideoRef,
)


def _interference_question(**overrides: object) -> Question:
    """An M3Eval memory-interference question: one correct, two intrusions, one irrelevant."""
    fields: dict[str, object] = {
        "id": "m3eval-mi-0001",
        "benchmark": "m3eval",
        "text": "What colour was the apron in Video 1?",
        "choices": [
            Choice(letter="A", text="Red", role=ChoiceRole.INTRUSION),
            Choice(letter="B", text="Green", role=ChoiceRole.CORRECT),
            Choice(letter="C", text="Blue", role=ChoiceRole.INTRUSION),
            Choice(letter="D", text="Striped", role=ChoiceRole.IRRELEVANT_DISTRACTOR),
        ],
        "answer": "B",
        "question_type": "memory_interference",
        "media": [VideoRef(path="probes/pair_07.mp4", start=0.0, end=95.0)],
        "metadata": {"target_video": "video1", "intrusion_option_letter": "A"},
    }
    fields.update(overrides)
    return Question(**fields)  # type: ignore[arg-type]


def test_multiple_choice_helpers() -> None:
    q = _interference_question()
    assert q.is_multiple_choice
    assert q.letters == ["A", "B", "C", "D"]
    assert q.choice("D").text == "Striped"
    assert q.role_of("A") is ChoiceRole.INTRUSION
    assert q.role_of("B") == "correct"  # StrEnum compares equal to its value
    with pytest.raises(KeyError):
        q.choice("E")


def test_multiple_choice_round_trip() -> None:
    q = _interference_question()
    back = Question.model_validate_json(q.model_dump_json())
    assert back == q
    assert isinstance(back.media[0], VideoRef)
    assert back.choices[0].role is ChoiceRole.INTRUSION


def test_role_serialises_as_plain_string() -> None:
    dumped = _interference_question().model_dump(mode="json")
    assert [c["role"] for c in dumped["choices"]] == [
        "intrusion",
        "correct",
        "intrusion",
        "irrelevant_distractor",
    ]


def test_free_form_question_with_alternatives_and_evidence() -> None:
    q = Question(
        id="Alex_Veterinarian/0",
        benchmark="m3exam",
        text="Which vein is recommended for first-choice venipuncture in cats?",
        answer="Medial Saphenous Vein",
        alternatives=["Cephalic Vein", "Jugular Vein"],
        question_type="ss",
        evidence=["D12:4"],
    )
    assert not q.is_multiple_choice
    assert q.letters == []
    back = Question.model_validate_json(q.model_dump_json())
    assert back == q
    assert back.alternatives == ["Cephalic Vein", "Jugular Vein"]
    assert back.evidence == ["D12:4"]


def test_grouped_question_round_trip() -> None:
    group = QuestionGroup(
        id="vmme2-g042", position=3, size=4, type="logic", structure="[1, [2, 3], 4]"
    )
    q = Question(
        id="vmme2-042-3",
        benchmark="videomme_v2",
        text="Why did the character pretend to be dead?",
        choices=[Choice(letter=x, text=f"option {x}") for x in "ABCDEFGH"],
        answer="F",
        media=[VideoRef(path="v/042.mp4")],
        group=group,
    )
    back = Question.model_validate_json(q.model_dump_json())
    assert back == q
    assert back.group == group
    assert back.group is not None and back.group.structure == "[1, [2, 3], 4]"


def test_supermemory_abstain_is_a_gold_answer() -> None:
    # An unanswerable SuperMemory-VQA question: three wrong choices plus the appended N/A.
    q = Question(
        id="smvqa-p1-0099",
        benchmark="supermemory_vqa",
        text="Which brand was the blender I used on Tuesday?",
        choices=[
            Choice(letter="A", text="Vitamix", role=ChoiceRole.WRONG),
            Choice(letter="B", text="Ninja", role=ChoiceRole.WRONG),
            Choice(letter="C", text="Oster", role=ChoiceRole.WRONG),
            Choice(letter="D", text="N/A", role=ChoiceRole.ABSTAIN),
        ],
        answer="D",
        time=5400.0,
    )
    assert q.role_of(q.answer) is ChoiceRole.ABSTAIN
    assert Question.model_validate_json(q.model_dump_json()) == q


def _loc_of(exc: ValidationError) -> list[tuple[object, ...]]:
    return [e["loc"] for e in exc.errors()]


def test_duplicate_letters_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate choice letters: A") as info:
        Question(
            id="q",
            benchmark="b",
            text="?",
            choices=[Choice(letter="A", text="x"), Choice(letter="A", text="y")],
            answer="A",
        )
    assert _loc_of(info.value) == [("choices",)]


def test_letters_must_run_from_a() -> None:
    with pytest.raises(ValidationError, match="got ABD"):
        Question(
            id="q",
            benchmark="b",
            text="?",
            choices=[Choice(letter=x, text=x) for x in "ABD"],
            answer="A",
        )


def test_answer_must_be_a_letter() -> None:
    with pytest.raises(ValidationError, match="not one of the choice letters ABCD") as info:
        _interference_question(answer="Green")
    assert _loc_of(info.value) == [("answer",)]


def test_answer_cannot_be_a_distractor() -> None:
    with pytest.raises(ValidationError, match="has role 'intrusion'"):
        _interference_question(answer="A")


def test_alternatives_must_be_letters_when_choices() -> None:
    with pytest.raises(ValidationError) as info:
        _interference_question(alternatives=["Z"])
    assert _loc_of(info.value) == [("alternatives",)]


@pytest.mark.parametrize("letter", ["a", "AA", "1", ""])
def test_choice_letter_must_be_one_capital(letter: str) -> None:
    with pytest.raises(ValidationError):
        Choice(letter=letter, text="x")


def test_group_position_within_size() -> None:
    assert QuestionGroup(id="g", position=4, size=4).position == 4
    with pytest.raises(ValidationError, match="beyond the group size 4"):
        QuestionGroup(id="g", position=5, size=4)
    with pytest.raises(ValidationError):
        QuestionGroup(id="g", position=0, size=4)


def test_question_time_non_negative() -> None:
    with pytest.raises(ValidationError):
        _interference_question(time=-0.1)


def test_question_accepts_media_dicts_by_kind() -> None:
    q = _interference_question(
        media=[{"kind": "image", "path": "a.jpg"}, {"kind": "video", "path": "b.mp4", "end": 3}]
    )
    assert q.media == [ImageRef(path="a.jpg"), VideoRef(path="b.mp4", end=3.0)]


def test_choice_role_values() -> None:
    assert {r.value for r in ChoiceRole} >= {
        "correct",
        "intrusion",
        "irrelevant_distractor",
        "distractor",
        "vague",
        "wrong",
        "abstain",
        "unknown",
    }
    assert ChoiceRole("vague") is ChoiceRole.VAGUE
