"""M3Exam text-matching rules, each against hand-computed values."""

from __future__ import annotations

import math

import pytest

from m3kit.metrics.text_match import (
    bleu1,
    extract_choice_letter,
    fj_em,
    fm_em,
    graded_em,
    image_id,
    image_ids,
    item_kind,
    normalize_sentence,
    score_text_answer,
    squad_tokens,
    token_f1,
)


def test_sentence_normalisation() -> None:
    assert normalize_sentence("  Medial   Saphenous\tVein. ") == "medial saphenous vein"
    assert normalize_sentence("**63%**") == "63"  # "%" and "*" are non-word at the ends
    assert normalize_sentence("img_60") == "img_60"  # underscore is a word character
    assert normalize_sentence("(C)") == "c"
    assert normalize_sentence("a-b") == "a-b"  # inner punctuation stays
    assert normalize_sentence("...") == ""


def test_squad_tokens() -> None:
    # lowercase, punctuation -> space, articles dropped.
    assert squad_tokens("The Medial-Saphenous vein, an option.") == [
        "medial", "saphenous", "vein", "option",
    ]  # fmt: skip
    assert squad_tokens("A the an") == []


def test_graded_em_discounts_by_position() -> None:
    answers = ["Medial Saphenous Vein", "Cephalic Vein", "Jugular Vein"]
    assert graded_em("medial saphenous vein.", answers) == 1.0  # i=0: 1/2^0
    assert graded_em("Cephalic vein", answers) == 0.5  # i=1: 1/2^1
    assert graded_em("  JUGULAR VEIN!", answers) == 0.25  # i=2: 1/2^2
    assert graded_em("the saphenous vein", answers) == 0.0  # not a whole-string match
    assert graded_em("x", []) == 0.0
    # The earliest matching position wins when two entries normalise alike.
    assert graded_em("41", ["41%", "41"]) == 1.0  # "41%" normalises to "41"


def test_image_ids() -> None:
    assert image_ids("It is img_60, not IMG_061.jpg or img_60 again") == ["img_60", "img_61"]
    assert image_id("img_07.png") == "img_7"
    assert image_id("img_1 or img_2") is None
    assert image_id("image 60") is None
    assert image_ids("xyzimg_5") == []  # not a word start


def test_fm_image_rule_with_hard_negatives() -> None:
    answers = ["img_60", "img_61"]  # gold img_60, img_61 a hard negative
    assert fm_em("img_60", answers) == 1.0
    assert fm_em("The picture is img_60.jpg", answers) == 1.0
    assert fm_em("img_60 and img_99", answers) == 1.0  # img_99 is not a candidate
    assert fm_em("img_60 or img_61", answers) == 0.0  # names the hard negative too
    assert fm_em("img_61", answers) == 0.0  # released code: 1 (any candidate); m3kit: 0
    assert fm_em("the cat photo", answers) == 0.0


def test_fm_text_rule_full_credit_on_any_candidate() -> None:
    answers = ["otoscope", "ear scope"]
    assert fm_em("Otoscope", answers) == 1.0
    assert fm_em("ear scope.", answers) == 1.0  # no 1/2 discount for fm text
    assert fm_em("an otoscope", answers) == 0.0


@pytest.mark.parametrize(
    ("prediction", "letter"),
    [
        ("C", "C"), ("(c)", "C"), ("C.", "C"), ("C) A temperature and ventilation system", "C"),
        ("The answer is C.", "C"), ("Answer: (B)", "B"), ("the answer is a lamp", None),
        ("A temperature and ventilation control system", None), ("", None),
    ],
)  # fmt: skip
def test_extract_choice_letter(prediction: str, letter: str | None) -> None:
    assert extract_choice_letter(prediction) == letter


@pytest.mark.parametrize(
    ("prediction", "exact", "letter"),
    [
        ("C", 1.0, 1.0),
        ("c", 1.0, 1.0),  # lowercased by the sentence normalisation
        ("c.", 1.0, 1.0),  # the trailing "." is a non-word character at the end: stripped
        ("(C)", 1.0, 1.0),  # "(" and ")" at the ends: stripped
        ("  **C**\n", 1.0, 1.0),
        ("The answer is C", 0.0, 1.0),  # "the answer is c" != "c"
        ("The answer is C.", 0.0, 1.0),
        ("C) A temperature and ventilation control system", 0.0, 1.0),
        ("(C) A temperature and ventilation control system", 0.0, 1.0),
        ("A temperature and ventilation control system", 0.0, 0.0),
        ("B", 0.0, 0.0),
        ("", 0.0, 0.0),
    ],
)  # fmt: skip
def test_fj_em_whole_answer_by_default_letter_on_request(
    prediction: str, exact: float, letter: float
) -> None:
    assert fj_em(prediction, ["C"]) == exact  # the paper's rule is the default
    assert fj_em(prediction, ["C"], "exact") == exact
    assert fj_em(prediction, ["C"], "letter") == letter


def test_fj_graded_em_on_letter() -> None:
    assert fj_em("(C) A temperature and ventilation control system", ["C"], "letter") == 1.0
    assert fj_em("B", ["C"], "letter") == 0.0
    assert fj_em("B", ["C", "B"], "letter") == 0.5  # graded: second entry, 1/2^1
    assert fj_em("no idea", ["C"], "letter") == 0.0
    # the whole-answer rule is graded the same way
    assert fj_em("b.", ["C", "B"]) == 0.5
    with pytest.raises(ValueError, match="fj rule 'first' is not one of exact, letter"):
        fj_em("C", ["C"], "first")  # type: ignore[arg-type]


def test_token_f1_hand_computed() -> None:
    # pred tokens [saphenous, vein, medial, leg] (article dropped), gold [medial, saphenous, vein]
    # overlap 3; P = 3/4, R = 3/3; F1 = 2*0.75*1/(1.75) = 6/7
    assert token_f1("The saphenous vein, medial leg", "Medial Saphenous Vein") == pytest.approx(
        6 / 7
    )
    # Multiset: pred [vein, vein], gold [vein]; overlap 1, P = 1/2, R = 1, F1 = 2/3
    assert token_f1("vein vein", "vein") == pytest.approx(2 / 3)
    assert token_f1("", "") == 1.0  # both empty
    assert token_f1("the", "vein") == 0.0  # one side empty after normalisation
    assert token_f1("cat", "dog") == 0.0


def test_bleu1_brevity_penalty_hand_computed() -> None:
    # Short prediction: pred [saphenous, vein] (c=2), gold [medial, saphenous, vein] (r=3);
    # p1 = 2/2 = 1; BP = exp(1 - 3/2) = exp(-0.5); BLEU-1 = exp(-0.5) ~ 0.6065
    assert bleu1("saphenous vein", "Medial Saphenous Vein") == pytest.approx(math.exp(-0.5))
    # Long prediction: pred [medial, saphenous, vein, in, leg] (c=5 > r=3): BP = 1; p1 = 3/5
    assert bleu1("medial saphenous vein in the leg", "Medial Saphenous Vein") == pytest.approx(0.6)
    # Equal length: c = r = 2, BP = exp(1 - 1) = 1; clipped counts: pred [vein, vein] vs
    # gold [vein, site] -> min(2, 1) = 1; p1 = 1/2
    assert bleu1("vein vein", "vein site") == pytest.approx(0.5)
    assert bleu1("", "") == 1.0
    assert bleu1("", "vein") == 0.0


def test_item_kind_and_per_type_rules() -> None:
    assert item_kind("fj", ["C"]) == "fj"
    assert item_kind("fm", ["img_60", "img_61"]) == "fm_image"
    assert item_kind("fm", ["otoscope"]) == "fm_text"
    assert item_kind("ss", ["x"]) == "text"

    fj = score_text_answer("C", ["C"], "C", "fj")
    assert (fj.em, fj.f1, fj.bleu1, fj.judged, fj.in_total) == (1.0, None, None, False, False)
    stated = score_text_answer("The answer is C", ["C"], "C", "fj")
    assert (stated.em, stated.f1, stated.judged) == (0.0, None, False)  # paper's rule
    stated = score_text_answer("The answer is C", ["C"], "C", "fj", fj_rule="letter")
    assert (stated.em, stated.f1, stated.judged) == (1.0, None, False)
    # the rule touches fj items only: an ss answer is scored the same under either
    ss_rule = score_text_answer("C", ["the answer is c"], None, "ss", fj_rule="letter")
    assert ss_rule.em == 0.0
    fm = score_text_answer("img_61", ["img_60", "img_61"], "img_60", "fm")
    assert (fm.em, fm.f1, fm.judged, fm.in_total) == (0.0, None, False, False)
    fm_text = score_text_answer("ear scope", ["otoscope", "ear scope"], "otoscope", "fm")
    # EM 1 (any candidate); F1/BLEU against the label "otoscope": no overlap -> 0
    assert (fm_text.em, fm_text.f1, fm_text.bleu1, fm_text.judged, fm_text.in_total) == (
        1.0, 0.0, 0.0, True, False,
    )  # fmt: skip
    ss = score_text_answer("Cephalic vein", ["Medial Saphenous Vein", "Cephalic Vein"],
                           "Medial Saphenous Vein", "ss")  # fmt: skip
    # EM 1/2; F1: pred [cephalic, vein], gold [medial, saphenous, vein]: overlap 1,
    # P = 1/2, R = 1/3, F1 = 2*(1/6)/(5/6) = 0.4; BLEU-1: p1 = 1/2, c=2 < r=3,
    # BP = exp(1 - 3/2) -> 0.5*exp(-0.5)
    assert ss.em == 0.5
    assert ss.f1 == pytest.approx(0.4)
    assert ss.bleu1 == pytest.approx(0.5 * math.exp(-0.5))
    assert (ss.judged, ss.in_total) == (True, True)


def test_locomo_adversarial_abstention_rule() -> None:
    from m3kit.metrics.text_match import abstention_score

    # snap-research/locomo task_eval/evaluation.py, category 5: 1 when the lowercased output
    # contains "no information available" or "not mentioned", else 0.
    assert abstention_score("Not mentioned in the conversation.") == 1.0
    assert abstention_score("Sorry, NO INFORMATION AVAILABLE") == 1.0
    assert abstention_score("a sunset") == 0.0
    assert abstention_score("no info") == 0.0
    trap = score_text_answer("a sunset", ["Not mentioned in the conversation"],
                             "Not mentioned in the conversation", "5")
    assert (trap.kind, trap.em, trap.f1, trap.bleu1, trap.judged, trap.in_total) == (
        "abstention", 0.0, 0.0, 0.0, False, True)
    # Token overlap would give "it was not mentioned" partial F1 against the gold; the rule
    # gives all three metrics 1.
    said = score_text_answer("It was not mentioned", ["Not mentioned in the conversation"],
                             None, "5")
    assert (said.em, said.f1, said.bleu1) == (1.0, 1.0, 1.0)
    # M3Exam's letter-coded types never take the rule.
    assert score_text_answer("not mentioned", ["a dog"], None, "ss").kind == "text"
