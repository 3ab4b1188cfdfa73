"""Event scripts: reproducible, valid, paired by similarity, and no caption leaks a visual fact."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest

from m3kit.synth import SynthError, generate_pair, generate_script
from m3kit.synth.vocab import ACTOR_COLOURS, SHAPES


def test_same_seed_same_script_other_seed_other_script():
    a = generate_script(11)
    assert generate_script(11).model_dump_json() == a.model_dump_json()
    assert generate_script(11).content_hash() == a.content_hash()
    others = {generate_script(s).content_hash() for s in range(12, 20)}
    assert a.content_hash() not in others and len(others) == 8


def test_script_structure():
    s = generate_script(3, beats=8, beat_seconds=1.5, fps=10, actors=4, scene_runs=3)
    assert s.duration == 12.0 and s.frames_per_beat == 15 and s.frame_count == 120
    assert [e.index for e in s.events] == list(range(8))
    assert [(e.start, e.end) for e in s.events] == [(1.5 * i, 1.5 * (i + 1)) for i in range(8)]
    assert len({e.action for e in s.events}) == 8  # one beat per action
    assert {e.actor for e in s.events} == {a.id for a in s.actors}  # every actor acts
    assert len({a.colour for a in s.actors}) == len({a.shape for a in s.actors}) == 4
    # captioned and silent beats alternate; the caption is the beat's text clause
    flags = [e.caption is not None for e in s.events]
    assert all(x != y for x, y in pairwise(flags))
    for e in s.channel("text"):
        assert e.caption == s.text_clause(e)
    assert len(s.timeline) == 3 and s.timeline[0].start == 0 and s.timeline[-1].end == 12.0
    assert s.beat_of_frame(14) == 0 and s.beat_of_frame(15) == 1 and s.beat_of_frame(119) == 7


def test_captions_never_name_a_colour_or_a_shape():
    """The invariant behind the visual evidence variant: pixels-only facts never appear as text."""
    visual_words = set(ACTOR_COLOURS) | set(SHAPES)
    for seed in range(30):
        pair = generate_pair(seed, similarity=0.5)
        for script in (pair.video1, pair.video2):
            for _, _, text in script.captions:
                assert not set(re.findall(r"[a-z]+", text)) & visual_words, text


def test_pair_shares_structure_and_never_colours_or_names():
    for seed in range(10):
        pair = generate_pair(seed, similarity=0.8)
        v1, v2 = pair.video1, pair.video2
        assert v2.similar_to == v1.id and v2.similarity == 0.8
        assert [e.caption is None for e in v1.events] == [e.caption is None for e in v2.events]
        assert [(t.start, t.end) for t in v1.timeline] == [(t.start, t.end) for t in v2.timeline]
        assert not {a.colour for a in v1.actors} & {a.colour for a in v2.actors}
        assert not {a.name for a in v1.actors} & {a.name for a in v2.actors}


def test_similarity_knob_controls_what_is_copied():
    same = generate_pair(4, similarity=1.0)
    v1, v2 = same.video1, same.video2
    assert [e.action for e in v1.events] == [e.action for e in v2.events]
    assert [e.scene for e in v1.events] == [e.scene for e in v2.events]
    assert [a.shape for a in v1.actors] == [a.shape for a in v2.actors]
    assert [e.actor for e in v1.events] == [e.actor for e in v2.events]
    apart = generate_pair(4, similarity=0.0)
    w1, w2 = apart.video1, apart.video2
    assert all(a.action != b.action for a, b in zip(w1.events, w2.events, strict=True))
    assert all(a.scene != b.scene for a, b in zip(w1.timeline, w2.timeline, strict=True))
    assert all(a.shape != b.shape for a, b in zip(w1.actors, w2.actors, strict=True))


@pytest.mark.parametrize("kwargs, field", [
    ({"beats": 11}, "beats"),
    ({"actors": 5}, "actors"),
    ({"beat_seconds": 0.25, "fps": 10}, "beat_seconds"),
    ({"size": (321, 240)}, "size"),
    ({"similarity": 1.5}, "similarity"),
])
def test_bad_arguments_name_the_field(kwargs, field):
    with pytest.raises(SynthError) as info:
        generate_script(1, **kwargs)
    assert info.value.field == field
