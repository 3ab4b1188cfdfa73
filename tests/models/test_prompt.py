"""Reading questions, options and answer formats out of prompt text (pure, no models)."""

from __future__ import annotations

import pytest

from m3kit.models.prompt import FormatKind, detect_format, is_abstain, parse_prompt

M3EVAL = (
    "Which room is the meeting in?\n"
    "A. Room 17\nB. Room 42\nC. The cafeteria\nD. Neither video\n"
    'Answer with the letter of one option. The last line of your response must be exactly '
    '"The final answer is X", where X is one uppercase option letter (A, B, C or D).'
)


def test_m3eval_prompt_parses_question_options_and_format() -> None:
    parsed = parse_prompt(M3EVAL)
    assert parsed.question == "Which room is the meeting in?"
    assert [(o.letter, o.text, o.abstain) for o in parsed.options] == [
        ("A", "Room 17", False), ("B", "Room 42", False), ("C", "The cafeteria", False),
        ("D", "Neither video", True),
    ]
    assert parsed.answer_format.kind is FormatKind.FINAL_ANSWER_IS
    assert parsed.answer_format.explicit
    assert parsed.context == ()  # instructions are not evidence
    assert not parsed.yes_no


@pytest.mark.parametrize("style", ["A. {}", "A) {}", "(A) {}", "A: {}", "Option A: {}"])
def test_option_styles(style: str) -> None:
    lines = [style.replace("A", letter, 1).format(text)
             for letter, text in zip("ABC", ["red", "green", "blue"], strict=True)]
    parsed = parse_prompt("What colour is the car?\n" + "\n".join(lines))
    assert [o.text for o in parsed.options] == ["red", "green", "blue"]
    assert [o.letter for o in parsed.options] == ["A", "B", "C"]


def test_context_lines_before_the_question_are_evidence() -> None:
    prompt = (
        "Subtitles: the chef adds two eggs.\nQuestion: How many eggs are added?\n"
        "A. One\nB. Two\nAnswer with the option's letter from the given choices directly."
    )
    parsed = parse_prompt(prompt)
    assert parsed.question == "How many eggs are added?"
    assert parsed.context == ("Subtitles: the chef adds two eggs.",)
    assert parsed.answer_format.kind is FormatKind.BARE


def test_the_last_option_block_wins() -> None:
    prompt = "Example:\nA. x\nB. y\nNow the real one?\nA. first\nB. second\nC. third"
    parsed = parse_prompt(prompt)
    assert parsed.question == "Now the real one?"
    assert [o.text for o in parsed.options] == ["first", "second", "third"]


def test_yes_no_bullets() -> None:
    prompt = (
        "Does the final clip show the same scene as the clip 2 positions earlier?\n- Yes\n- No\n"
        'Answer Yes or No. The last line of your response must be exactly '
        '"The final answer is Yes" or "The final answer is No".'
    )
    parsed = parse_prompt(prompt)
    assert parsed.yes_no
    assert [o.label for o in parsed.options] == ["Yes", "No"]
    assert parsed.question.startswith("Does the final clip")
    assert parsed.answer_format.kind is FormatKind.FINAL_ANSWER_IS


def test_lettered_yes_no() -> None:
    parsed = parse_prompt("Is the door open?\nA. Yes\nB. No")
    assert parsed.yes_no and [o.label for o in parsed.options] == ["A", "B"]


def test_free_form_has_no_options() -> None:
    parsed = parse_prompt("Earlier I said where I parked.\nWhere did I park the car?")
    assert not parsed.multiple_choice
    assert parsed.question == "Where did I park the car?"
    assert parsed.context == ("Earlier I said where I parked.",)
    assert not parsed.answer_format.explicit


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (("The entire content of your response should be of the following format: "
         "'ANSWER: $LETTER' (without quotes)"), FormatKind.ANSWER_COLON),
        ('End with "The final answer is X".', FormatKind.FINAL_ANSWER_IS),
        ("Reply in the form Final Answer: <letter>", FormatKind.FINAL_ANSWER_COLON),
        ("Answer with the option's letter from the given choices directly.", FormatKind.BARE),
        ("Respond with only the letter.", FormatKind.BARE),
        ("Choose the best option.", FormatKind.FINAL_ANSWER_IS),
        ('End with one line "Ranking: B > D > A > C".', FormatKind.RANKING),
    ],
)
def test_detect_format(text: str, kind: FormatKind) -> None:
    assert detect_format(text).kind is kind


def test_render() -> None:
    assert detect_format("ANSWER: $LETTER").render("C") == "ANSWER: C"
    assert detect_format("letter only").render("C") == "C"
    assert detect_format("").render("C") == "The final answer is C"


@pytest.mark.parametrize(
    ("text", "abstain"),
    [
        ("Neither video", True), ("None of the above", True), ("N/A", True),
        ("Not mentioned in the video", True), ("I don't know", True),
        ("Cannot be determined", True), ("Video 1", False), ("Both videos", False),
        ("The man in the red jacket", False), ("Nathan", False),
        ("This question can not be answered.", True),
    ],
)
def test_abstain_options(text: str, abstain: bool) -> None:
    assert is_abstain(text) is abstain
