"""The design checker: good designs pass, and each rule rejects a draft that breaks it."""

from __future__ import annotations

import pytest
from m3eval_scripted import swap_in, swap_order  # registered by conftest.py

from m3kit.benchmarks.m3eval.construct.checker import DraftItem, check_item

STEM = "Which of the following options most accurately describes what happened in Video 1?"
A_SWAP = ("In the kitchen a chef dices red onions on a wooden board and sets them aside. "
          "Later she pours the mixture into a cast iron pan and stirs it slowly until done.")
S1 = ("dices red onions", "peels green apples")
S2 = ("a cast iron pan", "a glass bowl")

A_ORDER = ("The man opens the fridge and then takes out the milk in the morning. "
           "After breakfast he washes the cup before he dries his hands on a towel.")
O1 = ["opens the fridge", "takes out the milk"]
O2 = ["washes the cup", "dries his hands"]


def _draft(raw: dict, changes: dict) -> DraftItem:
    """A draft from its good fields, with the fields a test breaks replaced."""
    return DraftItem.model_validate(raw | changes)


def swap_item(mode: str = "source_confusion", **changes) -> DraftItem:
    options = {"A": A_SWAP, "B": swap_in(A_SWAP, S1), "C": swap_in(A_SWAP, S2),
               "D": swap_in(A_SWAP, S1, S2)}
    raw = {
        "failure_mode": mode, "question": STEM, "options": options, "target_video": "video1",
        "answer": "A",
        "option_role_by_letter": {"A": "correct", "B": mode, "C": mode, "D": mode},
        "slot_1": {"correct": S1[0], "incorrect": S1[1]},
        "slot_2": {"correct": S2[0], "incorrect": S2[1]},
    }
    return _draft(raw, changes)


def order_item(**changes) -> DraftItem:
    options = {"A": A_ORDER, "B": swap_order(A_ORDER, O1), "C": swap_order(A_ORDER, O2),
               "D": swap_order(A_ORDER, O1, O2)}
    mode = "order_disruption"
    raw = {
        "failure_mode": mode, "question": STEM, "options": options, "target_video": "video1",
        "option_role_by_letter": {"A": "correct", "B": mode, "C": mode, "D": mode},
        "slot_1": {"correct_anchors": O1, "incorrect_anchors": O1[::-1]},
        "slot_2": {"correct_anchors": O2, "incorrect_anchors": O2[::-1]},
    }
    return _draft(raw, changes)


def interference_item(**changes) -> DraftItem:
    raw = {
        "failure_mode": "memory_interference", "target_video": "video1", "answer": "A",
        "question": "What colour was the mug the woman held in the target video?",
        "options": ["A. A teal mug with white dots", "B. A red mug with a chipped rim",
                 "C. An orange mug with stripes", "D. A silver laptop"],
        "option_role_by_letter": {"A": "correct", "B": "intrusion", "C": "intrusion",
                               "D": "irrelevant_distractor"},
        "intrusion_option_letter": "B",
    }
    return _draft(raw, changes)


def source_memory_item(**changes) -> DraftItem:
    raw = {
        "failure_mode": "source_memory", "target_video": "video2", "answer": "B",
        "question": "In which video did a yellow umbrella briefly appear?",
        "options": ["A. Video 1", "B. Video 2"],
        "option_role_by_letter": {"A": "video1_only", "B": "video2_only"},
    }
    return _draft(raw, changes)


def false_source_item(**changes) -> DraftItem:
    raw = {
        "failure_mode": "false_source_attribution", "target_video": "neither", "answer": "D",
        "question": "In which video did someone light a birthday candle?",
        "options": ["A. Video 1", "B. Video 2", "C. Both videos", "D. Neither video"],
        "stem_anchor": "birthday candle",
    }
    return _draft(raw, changes)


CAPTIONS = {"video1": "A chef dices red onions. A cast iron pan sits on the stove.",
            "video2": "A cook peels green apples beside a glass bowl."}


@pytest.mark.parametrize("make", [
    swap_item, lambda: swap_item("content_forgetting"), order_item, interference_item,
    source_memory_item, false_source_item,
])
def test_good_designs_pass(make) -> None:
    result = check_item(make())
    assert result.ok, result.summary()
    assert result.summary() == "ok"


def test_option_count_rule() -> None:
    item = interference_item(options=["A. one", "B. two", "C. three"])
    assert check_item(item).rules == {"option_count"}


def test_distinct_options_rule() -> None:
    # B and C differ only in case and spacing: the same option twice.
    item = interference_item(options=["A. A teal mug", "B. a red  mug", "C. A red mug",
                                      "D. A laptop"])
    assert check_item(item).rules == {"distinct_options"}


def test_role_map_rule_storyline() -> None:
    item = swap_item(option_role_by_letter={"A": "correct", "B": "source_confusion",
                                            "C": "source_confusion"})
    assert check_item(item).rules == {"role_map"}


def test_role_map_rule_interference() -> None:
    item = interference_item(option_role_by_letter={"A": "correct", "B": "intrusion",
                                                    "C": "correct", "D": "irrelevant_distractor"})
    assert "role_map" in check_item(item).rules


def test_answer_rule() -> None:
    assert check_item(swap_item(answer="C")).rules == {"answer"}
    assert check_item(source_memory_item(answer="A")).rules == {"answer"}
    assert check_item(false_source_item(answer="C")).rules == {"answer"}


def test_target_rule() -> None:
    stem = STEM.replace("Video 1", "Video 2")
    assert check_item(swap_item(question=stem)).rules == {"target"}
    assert check_item(interference_item(target_video="video3")).rules == {"target"}
    assert check_item(false_source_item(target_video="video1")).rules == {"target"}


def test_anchors_rule_paraphrased_anchor() -> None:
    # D paraphrases slot 2's wrong detail: the anchor is no longer verbatim present.
    opts = swap_item().options | {"D": swap_in(A_SWAP, S1, ("a cast iron pan", "a glass dish"))}
    rules = check_item(swap_item(options=opts)).rules
    assert "anchors" in rules and "slot_grid" in rules


def test_anchors_rule_both_versions_present() -> None:
    # B keeps the true detail beside the wrong one: the correct anchor must be absent from B.
    b = swap_in(A_SWAP, S1) + " She also dices red onions."
    rules = check_item(swap_item(options=swap_item().options | {"B": b})).rules
    assert "anchors" in rules


def test_slot_grid_rule() -> None:
    # C differs from A at slot 2 and also rewords "wooden" -> "oak": a change outside its slot.
    c = swap_in(A_SWAP, S2).replace("wooden", "oak")
    assert check_item(swap_item(options=swap_item().options | {"C": c})).rules == {"slot_grid"}


def test_slot_overlap_rule() -> None:
    # Slot 2's anchor sits inside slot 1's: presence/absence can no longer tell the slots apart.
    item = swap_item(slot_2={"correct": "red onions", "incorrect": "yellow onions"})
    assert check_item(item).rules == {"slot_overlap"}


def test_order_swap_rule_not_reversed() -> None:
    item = order_item(slot_1={"correct_anchors": O1, "incorrect_anchors": O1})
    assert check_item(item).rules == {"order_swap"}


def test_order_swap_rule_clause_dropped() -> None:
    d = swap_order(A_ORDER, O1, O2).replace("washes the cup", "rinses the cup")
    rules = check_item(order_item(options=order_item().options | {"D": d})).rules
    assert "order_swap" in rules


def test_order_swap_rule_moved_not_swapped_in_place() -> None:
    # B reverses slot 1 by moving a clause into the other sentence: the order is reversed but the
    # paragraph is not A with the two clauses exchanged in place.
    b = ("The man takes out the milk in the morning. After breakfast he opens the fridge and "
         "then washes the cup before he dries his hands on a towel.")
    rules = check_item(order_item(options=order_item().options | {"B": b})).rules
    assert rules == {"order_swap"}


def test_order_swap_rule_wrong_grid_cell() -> None:
    # C reverses slot 1 instead of slot 2.
    c = swap_order(A_ORDER, O1)
    assert "order_swap" in check_item(order_item(options=order_item().options | {"C": c})).rules


def test_order_swap_rule_clauses_in_different_sentences() -> None:
    a = ("The man opens the fridge in the morning. Then he takes out the milk. After breakfast "
         "he washes the cup before he dries his hands on a towel.")
    options = {"A": a, "B": swap_order(a, O1), "C": swap_order(a, O2), "D": swap_order(a, O1, O2)}
    assert check_item(order_item(options=options)).rules == {"order_swap"}


def test_intrusion_letter_rule() -> None:
    assert check_item(interference_item(intrusion_option_letter="D")).rules == {
        "intrusion_letter"}


def test_source_labels_rule() -> None:
    item = source_memory_item(options=["A. The first video", "B. Video 2"])
    assert check_item(item).rules == {"source_labels"}
    item = false_source_item(options=["A. Video 1", "B. Video 2", "C. Video 3",
                                      "D. Neither video"])
    assert check_item(item).rules == {"source_labels"}


def test_absent_detail_rule() -> None:
    # Content forgetting's "fabricated" slot-1 detail is really in video 2's captions.
    item = swap_item("content_forgetting")
    assert check_item(item, captions=CAPTIONS).rules == {"absent_detail"}
    assert check_item(item).ok  # without captions the rule has nothing to read
    fs = false_source_item(stem_anchor="Cast iron PAN")
    assert check_item(fs, captions=CAPTIONS).rules == {"absent_detail"}
    assert check_item(false_source_item(), captions=CAPTIONS).ok
