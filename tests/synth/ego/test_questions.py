"""Question writing over many seeds and sizes (no rendering): every config gives valid,
balanced questions of all six skills, deterministically."""

from __future__ import annotations

from collections import Counter

import pytest

from m3kit.schema.supermemory import ABSTAIN_TEXT, SKILLS
from m3kit.synth.ego import EgoSuiteConfig, generate_person
from m3kit.synth.ego.questions import suite_questions

CONFIGS = [EgoSuiteConfig(seed=seed) for seed in range(12)] + [
    EgoSuiteConfig(persons=1, sessions=2),
    EgoSuiteConfig(persons=5, sessions=5, segments=8, transcript_only=0),
    EgoSuiteConfig.large(),
]


def _questions(config: EgoSuiteConfig):
    worlds = [generate_person(config, n) for n in range(1, config.persons + 1)]
    return suite_questions(worlds, config)


@pytest.mark.parametrize("config", CONFIGS,
                         ids=lambda c: f"seed{c.seed}-p{c.persons}-s{c.sessions}")
def test_every_config_gives_valid_balanced_questions(config: EgoSuiteConfig) -> None:
    records, truth = _questions(config)
    assert {r.metadata.skill for r in records} == set(SKILLS)
    golds = Counter(r.correct_option_index for r in records)
    assert max(golds.values()) - min(golds.values()) <= 1
    assert [t.question_id for t in truth] == [r.question_id for r in records]
    for r, t in zip(records, truth, strict=True):
        assert len(set(r.choices)) == 4 and r.choices.count(ABSTAIN_TEXT) == 1
        assert r.is_answerable == t.is_answerable == (r.correct_answer != ABSTAIN_TEXT)
        assert all(e.end_unix <= t.question_time_unix for e in t.evidence)
        if t.leak is not None:
            assert t.leak.start_unix > t.question_time_unix


def test_generation_is_pure() -> None:
    config = EgoSuiteConfig(seed=3)
    assert _questions(config) == _questions(config)
    assert generate_person(config, 2) == generate_person(config, 2)
    assert generate_person(config, 2) != generate_person(config, 3)


def test_sessions_fall_on_different_days_and_persons_in_different_weeks() -> None:
    config = EgoSuiteConfig(persons=2, sessions=3)
    first, second = (generate_person(config, n) for n in (1, 2))
    days = [int(s.start_unix // 86_400) for s in first.sessions]
    assert days == [days[0], days[0] + 1, days[0] + 2]
    assert int(second.sessions[0].start_unix // 86_400) == days[0] + 7
    assert [s.has_video for s in first.sessions] == [True, False, True]
    assert all(s.has_video for s in second.sessions)
