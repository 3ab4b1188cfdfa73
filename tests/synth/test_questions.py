"""Questions of every paradigm: option-role structure, answers that follow from the scripts, and
evidence variants that mean what they say."""

from __future__ import annotations

import re
from collections import Counter

from m3kit.schema.question import ChoiceRole
from m3kit.synth import Suite
from m3kit.synth.phrases import paragraph
from m3kit.synth.storyline import GRID_CELLS
from m3kit.synth.vocab import ACTION_WORDS, ACTOR_COLOURS, SHAPES

_FAMILY_ROLE = {
    "source_identification": "source_confusion",
    "order_understanding": "order_disruption",
    "content_retention": "content_forgetting",
}


def test_every_answer_is_the_correct_role_and_ids_are_unique(tiny_suite: Suite):
    qs = tiny_suite.questions
    assert len({q.id for q in qs}) == len(qs)
    for q in qs:
        roles = q.metadata["option_role_by_letter"]
        assert roles == {c.letter: c.role.value for c in q.choices}
        assert roles[q.answer] == "correct"
        assert list(roles.values()).count("correct") == 1
        assert q.metadata["memory_key"] == q.metadata["probe"] == q.id.split("/")[0]
        assert q.metadata["evidence"] in ("text", "visual")


def test_every_kind_has_both_evidence_variants(tiny_suite: Suite):
    kinds = Counter((q.metadata["paradigm"], q.question_type, q.metadata["evidence"])
                    for q in tiny_suite.questions)
    expected = {
        "divided_attention": ["source_identification", "order_understanding",
                              "content_retention", "source_memory"],
        "interference": ["memory_interference"],
        "interleaved": ["source_identification", "order_understanding", "content_retention",
                        "source_memory", "false_memory_discrimination"],
        "nback": ["nback"],
    }
    for paradigm, types in expected.items():
        for qtype in types:
            for ev in ("text", "visual"):
                assert kinds[(paradigm, qtype, ev)] > 0, (paradigm, qtype, ev)


def test_storyline_grid_before_shuffling(tiny_suite: Suite):
    storylines = [q for q in tiny_suite.questions if q.question_type in _FAMILY_ROLE]
    assert storylines
    for q in storylines:
        design = q.metadata["storyline"]
        cells = q.metadata["grid_cell_by_letter"]
        assert sorted(cells.values()) == sorted(GRID_CELLS)
        by_cell = {cells[c.letter]: c for c in q.choices}
        # Rebuild each cell's paragraph from the true clauses and the slot versions.
        for cell in GRID_CELLS:
            clauses = list(design["clauses"])
            for flag, slot, wrong in zip(cell, design["slots"], design["incorrect"], strict=True):
                if flag == "i":
                    for pos, text in zip(slot, wrong, strict=True):
                        clauses[pos] = text
            assert by_cell[cell].text == paragraph(clauses)
            want = "correct" if cell == "cc" else _FAMILY_ROLE[q.question_type]
            assert by_cell[cell].role.value == want
        assert cells[q.answer] == "cc"


def test_storyline_clauses_come_from_the_target_script(tiny_suite: Suite):
    pair = tiny_suite.pair("p0")
    for q in tiny_suite.questions:
        if q.question_type not in _FAMILY_ROLE:
            continue
        script = pair.script(q.metadata["target_video"])
        other = pair.other(q.metadata["target_video"])
        ev = q.metadata["evidence"]
        channel = script.channel(ev)
        if ev == "text":
            assert q.metadata["storyline"]["clauses"] == [e.caption for e in channel]
        else:
            assert q.metadata["storyline"]["clauses"] == [script.visual_clause(e) for e in channel]
        if q.question_type == "source_identification":
            theirs = [other.text_clause(e) if ev == "text" else other.visual_clause(e)
                      for e in other.channel(ev)]
            for slot, wrong in zip(q.metadata["storyline"]["slots"],
                                   q.metadata["storyline"]["incorrect"], strict=True):
                assert wrong == [theirs[slot[0]]]
        if q.question_type == "content_retention":
            every = {c for s in (script, other) for e in s.events
                     for c in (s.text_clause(e), s.visual_clause(e))}
            for wrong in q.metadata["storyline"]["incorrect"]:
                assert wrong[0] not in every  # fabricated: in neither video


def test_interference_options_one_correct_two_intrusions_one_irrelevant(tiny_suite: Suite):
    pair = tiny_suite.pair("p0")
    v1, v2 = pair.video1, pair.video2
    qs = tiny_suite.select(paradigm="interference")
    assert qs
    for q in qs:
        roles = Counter(c.role for c in q.choices)
        assert roles == {ChoiceRole.CORRECT: 1, ChoiceRole.INTRUSION: 2,
                         ChoiceRole.IRRELEVANT_DISTRACTOR: 1}
        event = v1.events[q.metadata["event"]["beat"]]
        actor = v1.actor(event.actor)
        text = (lambda a: f"the {a.name}") if q.metadata["evidence"] == "text" else \
            (lambda a: a.colour)
        assert q.choice(q.answer).text == text(actor)
        competitor = {text(a) for a in v2.actors}
        target = {text(a) for a in v1.actors}
        for c in q.choices:
            if c.role == ChoiceRole.INTRUSION:
                assert c.text in competitor
            if c.role == ChoiceRole.IRRELEVANT_DISTRACTOR:
                assert c.text not in competitor | target
        same = v2.event_with_action(event.action)
        if same is not None:  # the competing video's own answer is one of the intrusions
            assert text(v2.actor(same.actor)) in {c.text for c in q.choices
                                                  if c.role == ChoiceRole.INTRUSION}


def test_interference_questions_identical_across_orders(tiny_suite: Suite):
    by_item: dict[str, list] = {}
    for q in tiny_suite.select(paradigm="interference"):
        by_item.setdefault(q.metadata["item"], []).append(q)
    conditions = set(tiny_suite.config.interference_conditions)
    for item, qs in by_item.items():
        assert {q.metadata["condition"] for q in qs} == conditions
        assert len({(q.metadata["stem"], tuple(c.text for c in q.choices), q.answer)
                    for q in qs}) == 1, item
    orders = {q.metadata["condition"]: q.metadata["order"]
              for q in tiny_suite.select(paradigm="interference")}
    assert orders["retroactive"] == ["video1", "video2"]
    assert orders["proactive"] == ["video2", "video1"]
    assert orders["repeat_target"] == ["video1", "video1", "video2"]
    assert orders["repeat_interferer"] == ["video1", "video2", "video2"]


def test_false_memory_answer_is_neither_video_and_the_event_never_happened(tiny_suite: Suite):
    pair = tiny_suite.pair("p0")
    qs = tiny_suite.select(question_type="false_memory_discrimination")
    assert qs
    for q in qs:
        # the paper's labels; "Neither video" moved to the balanced gold position, the others
        # in the paper's order around it
        assert sorted(c.text for c in q.choices) == sorted(
            ["Video 1", "Video 2", "Both videos", "Neither video"])
        assert [c.text for c in q.choices if c.text != "Neither video"] == [
            "Video 1", "Video 2", "Both videos"]
        assert q.choice(q.answer).text == "Neither video"
        assert q.metadata["target_video"] == "neither"
        fake = q.metadata["fake_event"]
        lure = pair.script(q.metadata["lure_video"])
        assert not any(e.actor == fake["actor"] and e.action == fake["action"]
                       for e in lure.events)


def test_source_memory_answer_is_the_video_of_the_event(tiny_suite: Suite):
    pair = tiny_suite.pair("p0")
    targets = Counter()
    for q in tiny_suite.select(question_type="source_memory"):
        assert [c.text for c in q.choices] == ["Video 1", "Video 2"]
        target = q.metadata["target_video"]
        assert q.choice(q.answer).text == {"video1": "Video 1", "video2": "Video 2"}[target]
        assert q.metadata["event"]["script"] == pair.script(target).id
        targets[target] += 1
    assert targets["video1"] == targets["video2"] > 0


def test_nback_answers_follow_the_scripts(tiny_suite: Suite):
    qs = tiny_suite.select(paradigm="nback")
    assert qs
    answers = Counter()
    for q in qs:
        n, k, attr = q.metadata["n"], q.metadata["k"], q.metadata["attribute"]
        clips = q.metadata["clips"]
        assert len(clips) == k and len(q.media) == 1  # one probe video, clips in metadata
        spans = [(c["start"], c["end"]) for c in clips]
        record = tiny_suite.probe(q.metadata["probe"])
        assert spans == [(s, e) for _, s, e in record.spans]
        assert all(s < e <= record.duration for s, e in spans)
        # Look the attribute up in the clips' scripts, not in the question's own record.
        last, earlier = (tiny_suite.script(c["script"]) for c in (clips[-1], clips[-1 - n]))
        assert len(last.events) == len(earlier.events) == 1  # one scene, one action per clip
        assert last.events[0].evidence == earlier.events[0].evidence == q.metadata["evidence"]
        match = getattr(last.events[0], attr) == getattr(earlier.events[0], attr)
        assert q.choice(q.answer).text == ("Yes" if match else "No")
        # a match is never pixel identity: the compared clip shows another actor
        looks = [(s.actors[0].shape, s.actors[0].colour) for s in (last, earlier)]
        assert looks[0] != looks[1]
        answers[q.choice(q.answer).text] += 1
    assert answers["Yes"] == answers["No"]  # balanced by design


def test_visual_questions_use_no_word_any_caption_shows(tiny_suite: Suite):
    """A reader of on-screen text learns nothing about a visual question's options."""
    captions = " ".join(c for s in (tiny_suite.script("p0v1"), tiny_suite.script("p0v2"))
                        for _, _, c in s.captions)
    caption_words = set(re.findall(r"[a-z]+", captions))
    visual_words = set(ACTOR_COLOURS) | set(SHAPES)
    assert not caption_words & visual_words
    for q in tiny_suite.select(evidence="visual"):
        if q.question_type in ("memory_interference",):
            for c in q.choices:
                assert c.text in ACTOR_COLOURS and c.text not in caption_words


def test_text_questions_are_answerable_from_captions(tiny_suite: Suite):
    pair = tiny_suite.pair("p0")
    every_caption = {c for s in (pair.video1, pair.video2) for _, _, c in s.captions}
    for q in tiny_suite.select(evidence="text"):
        if q.question_type in _FAMILY_ROLE:
            target = pair.script(q.metadata["target_video"])
            assert set(q.metadata["storyline"]["clauses"]) == {c for _, _, c in target.captions}
        elif q.question_type == "memory_interference":
            name = q.choice(q.answer).text.removeprefix("the ")
            assert any(re.search(rf"\bthe {name}\b", c) for c in every_caption)
        elif q.question_type == "nback":
            for clip in q.metadata["clips"]:
                event = tiny_suite.script(clip["script"]).events[0]
                assert event.scene in event.caption
                assert ACTION_WORDS[event.action].present in event.caption
