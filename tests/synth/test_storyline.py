"""The 2×2 storyline grid, checked by hand on small clause lists."""

from __future__ import annotations

import random

import pytest

from m3kit.schema.question import ChoiceRole
from m3kit.synth.options import Option, item_rng, letter_options
from m3kit.synth.phrases import paragraph
from m3kit.synth.storyline import GRID_CELLS, order_grid, substitution_grid


def test_paragraph_scaffold():
    assert paragraph(["a", "b", "c", "d"]) == "First, a. Next, b. Then, c. Finally, d."


def test_substitution_grid_realises_cc_ic_ci_ii():
    # Only positions 1 and 3 have alternatives: the slots are forced.
    design = substitution_grid(["a", "b", "c", "d"], [None, "B", None, "D"], "source_confusion",
                               random.Random(0))
    assert design is not None
    assert design.slots == [[1], [3]]
    assert list(design.options) == list(GRID_CELLS) == ["cc", "ic", "ci", "ii"]
    assert design.options == {
        "cc": "First, a. Next, b. Then, c. Finally, d.",
        "ic": "First, a. Next, B. Then, c. Finally, d.",
        "ci": "First, a. Next, b. Then, c. Finally, D.",
        "ii": "First, a. Next, B. Then, c. Finally, D.",
    }
    assert design.correct == [["b"], ["d"]] and design.incorrect == [["B"], ["D"]]


def test_substitution_grid_needs_two_non_adjacent_slots():
    assert substitution_grid(["a", "b", "c", "d"], [None, "B", "C", None], "content_forgetting",
                             random.Random(0)) is None


def test_order_grid_reverses_two_disjoint_pairs_in_place():
    design = order_grid(["a", "b", "c", "d"], random.Random(0))
    assert design is not None
    assert design.slots == [[0, 1], [2, 3]]
    assert design.options == {
        "cc": "First, a. Next, b. Then, c. Finally, d.",
        "ic": "First, b. Next, a. Then, c. Finally, d.",
        "ci": "First, a. Next, b. Then, d. Finally, c.",
        "ii": "First, b. Next, a. Then, d. Finally, c.",
    }
    assert order_grid(["a", "b", "c"], random.Random(0)) is None
    assert order_grid(["a", "b", "a", "c"], random.Random(0)) is None


def test_lettering_shuffles_and_records_roles():
    options = [Option("right", ChoiceRole.CORRECT, "cc"),
               Option("w1", ChoiceRole.ORDER_DISRUPTION, "ic"),
               Option("w2", ChoiceRole.ORDER_DISRUPTION, "ci"),
               Option("w3", ChoiceRole.ORDER_DISRUPTION, "ii")]
    fixed = letter_options(options, None)
    assert fixed.answer == "A" and fixed.tag_by_letter == dict(zip("ABCD", GRID_CELLS, strict=True))
    orders = {tuple(letter_options(options, item_rng(1, "q", i)).tag_by_letter.values())
              for i in range(20)}
    assert len(orders) > 1  # the answer letter moves
    shuffled = letter_options(options, item_rng(1, "q", 0))
    again = letter_options(options, item_rng(1, "q", 0))
    assert shuffled == again  # same item key, same letters
    by_letter = {c.letter: c for c in shuffled.choices}
    assert by_letter[shuffled.answer].text == "right"
    assert shuffled.role_by_letter[shuffled.answer] == "correct"


def test_gold_position_cycles_through_every_letter():
    from m3kit.synth.options import gold_position

    for n in (2, 4):
        first = [gold_position(slot, n, 3, "kind") for slot in range(n)]
        assert sorted(first) == list(range(n))  # each position once per cycle
        assert [gold_position(slot + n, n, 3, "kind") for slot in range(n)] == first
    # another kind (or seed) draws another order, reproducibly
    orders = {tuple(gold_position(s, 4, seed, "kind") for s in range(4)) for seed in range(12)}
    assert len(orders) > 1
    assert gold_position(5, 4, 3, "kind") == gold_position(5, 4, 3, "kind")


def test_letter_options_puts_the_answer_at_the_gold_position():
    options = [Option("right", ChoiceRole.CORRECT, "c"),
               *(Option(f"wrong {i}", ChoiceRole.DISTRACTOR, "w") for i in range(3))]
    for gold in range(4):
        lettered = letter_options(options, random.Random(1), gold)
        assert lettered.answer == "ABCD"[gold]
        assert lettered.role_by_letter[lettered.answer] == "correct"
        # the wrong options keep the shuffle's order around it
        shuffled = letter_options(options, random.Random(1))
        assert ([c.text for c in lettered.choices if c.text != "right"]
                == [c.text for c in shuffled.choices if c.text != "right"])
    fixed = letter_options(options, None, 2)
    assert [c.text for c in fixed.choices] == ["wrong 0", "wrong 1", "right", "wrong 2"]
    with pytest.raises(ValueError, match="gold position"):
        letter_options(options, None, 4)
