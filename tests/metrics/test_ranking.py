"""Ranked answers with abstention (SuperMemory-VQA): every rule with hand-computed values."""

from __future__ import annotations

import math

import pytest

from m3kit.metrics.ranking import (
    DecisionCounts,
    binary_f1,
    choice_credit,
    decision_counts,
    mean_and_sample_std,
    parse_ranking,
    ranking_from_values,
    reciprocal_rank,
)


@pytest.mark.parametrize(("reply", "ranking"), [
    ("Ranking: B > D > A > C", [1, 3, 0, 2]),
    ("ranking:B>D>A>C.", [1, 3, 0, 2]),
    ("I think so.\nRANKING: C, A", [2, 0]),
    ("Answer: B", [1]),
    ("answer: (C).", [2]),
    ("B", [0 + 1]),
    ("(D)", [3]),
    ("  A > A > B  ", [0, 1]),  # a repeat is dropped after its first place
    ("Ranking: A > B\nAnswer: D", [3]),  # the last label wins
    ("Answer: C\nRanking: D > B", [3, 1]),
])
def test_parse_ranking_reads_the_stated_order(reply, ranking):
    assert parse_ranking(reply) == ranking


@pytest.mark.parametrize("reply", [
    None, "", "The answer is B.", "Ranking: E > A", "Ranking: b > a", "A B C D",
    "Ranking: B > D then A", "Answer: B.\nBecause the kettle was there.", "BD", "Ranking:",
])
def test_parse_ranking_refuses_anything_else(reply):
    assert parse_ranking(reply) is None


def test_parse_ranking_takes_the_whole_reply_without_a_label():
    assert parse_ranking("D > C > B > A.") == [3, 2, 1, 0]


@pytest.mark.parametrize(("values", "ranking"), [
    (["B", "D"], [1, 3]), ([1, 3, 0, 2], [1, 3, 0, 2]), ([2, 2, 0], [2, 0]), (["C"], [2]),
])
def test_ranking_from_values(values, ranking):
    assert ranking_from_values(values) == ranking


@pytest.mark.parametrize("values", [[], ["E"], [4], [-1], [True], ["AB"], [None]])
def test_ranking_from_values_refuses_what_names_no_option(values):
    assert ranking_from_values(values) is None


def test_reciprocal_rank_full_and_partial():
    assert reciprocal_rank([1, 3, 0, 2], 0) == pytest.approx(1 / 3)
    assert reciprocal_rank([0], 0) == 1.0
    # one letter given and wrong: the other three share ranks 2-4
    assert reciprocal_rank([1], 0) == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    # two given, gold not among them: ranks 3 and 4 shared
    assert reciprocal_rank([1, 2], 0) == pytest.approx((1 / 3 + 1 / 4) / 2)
    assert reciprocal_rank([1, 2, 3], 0) == pytest.approx(1 / 4)
    assert reciprocal_rank(None, 0) == 0.0


def test_decisions_count_invalid_as_the_wrong_decision():
    gold = [True, True, False, False]
    predicted = [True, None, None, False]
    # answerable+answered: TP; answerable+invalid: FN; unanswerable+invalid: FP; TN
    assert decision_counts(gold, predicted) == DecisionCounts(tp=1, fp=1, fn=1)
    assert binary_f1(gold, predicted) == pytest.approx(2 / (2 + 1 + 1))


def test_abstention_f1_takes_unanswerable_as_positive():
    answerable = [True, True, False, False, False]
    answered = [True, False, True, False, None]
    # positive = unanswerable: predicted positive = abstained
    abstained = [None if a is None else not a for a in answered]
    gold = [not a for a in answerable]
    # q1 TN, q2 FP (abstained on answerable), q3 FN, q4 TP, q5 invalid on unanswerable: FN
    assert decision_counts(gold, abstained) == DecisionCounts(tp=1, fp=1, fn=2)
    assert binary_f1(gold, abstained) == pytest.approx(2 / (2 + 1 + 2))


def test_binary_f1_is_undefined_without_any_positive():
    assert binary_f1([False, False], [False, False]) is None
    assert binary_f1([True], [True]) == 1.0


def test_choice_credit():
    assert choice_credit("correct", answerable=True, vague_weight=0.5) == 1.0
    assert choice_credit("vague", answerable=True, vague_weight=0.5) == 0.5
    assert choice_credit("vague", answerable=True, vague_weight=0.25) == 0.25
    assert choice_credit("vague", answerable=False, vague_weight=0.5) == 0.0
    assert choice_credit("incorrect", answerable=True, vague_weight=0.5) == 0.0
    assert choice_credit(None, answerable=True, vague_weight=0.5) == 0.0


def test_mean_and_sample_std():
    mean, std = mean_and_sample_std([50.0, 100.0, 0.0])
    assert mean == 50.0
    assert std == pytest.approx(50.0)  # sqrt((0 + 2500 + 2500) / 2)
    assert mean_and_sample_std([80.0]) == (80.0, None)
    assert mean_and_sample_std([]) == (None, None)
    assert not math.isnan(mean_and_sample_std([1.0, 1.0])[1])
