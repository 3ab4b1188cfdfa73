import json
from datetime import date

import pytest

from m3kit.benchmarks.m3exam.construct import MalformedReplyError, PersonaSpec
from m3kit.benchmarks.m3exam.construct.dialogue import (
    DialogueConfig,
    audit_dialogue,
    generate_round,
    plan_rounds,
    to_sessions,
)
from m3kit.benchmarks.m3exam.construct.documents import NumberedDocument
from m3kit.benchmarks.m3exam.construct.images import NumberedImage
from m3kit.benchmarks.m3exam.construct.records import TimelineEvent
from m3kit.media.pdf import write_text_pdf

SPEC = PersonaSpec(name="Alex_Vet", persona="Alex, head clinician.", core_event="Hard cases.",
                   start_date=date(2023, 9, 5))


def events(*days):
    return [TimelineEvent(index=i, description=f"event {i}", query=f"asks about {i}",
                          date=date(2023, 9, d), keyword="cat", kind="core")
            for i, d in enumerate(days, 1)]


def generate(evs, backend, config, images=None):
    by_index = {e.index: e for e in evs}
    rounds = []
    for plan in plan_rounds(evs, config):
        rounds.append(generate_round(SPEC, plan, by_index, images or {}, rounds, backend,
                                     "/nowhere", config))
    return rounds


def test_plan_partitions_by_date_and_session_size():
    # events on days 5, 5, 6 with 2 rounds each and sessions of at most 3 rounds:
    # day 5 has 4 rounds -> D1 (3 rounds) + D2 (1 round); day 6 -> D3 (2 rounds)
    plans = plan_rounds(events(5, 5, 6), DialogueConfig(rounds_per_event=2,
                                                       max_rounds_per_session=3))
    assert [(p.round_id, p.event_index, p.step) for p in plans] == [
        ("D1:1", 1, 0), ("D1:2", 1, 1), ("D1:3", 2, 0), ("D2:1", 2, 1),
        ("D3:1", 3, 0), ("D3:2", 3, 1)]
    assert [p.date.day for p in plans] == [5, 5, 5, 5, 6, 6]


def test_rounds_follow_the_window_memory_and_follow_up_rules(scripted):
    images = {2: [NumberedImage(id=1, file="img_1.jpg", source="a.jpg", description="a cat"),
                  NumberedImage(id=2, file="img_2.jpg", source="b.jpg", description="a dog")]}
    # the simulator claims a follow-up on the very first round: there is nothing to follow
    backend = scripted({"dialogue.user@D1:1": ['{"user": "hi", "is_followup": true}'],
                               "dialogue.user@D2:1": ['{"user": "new", "is_followup": true}']})
    config = DialogueConfig(rounds_per_event=2)
    rounds = generate(events(5, 6), backend, config, images)
    assert [r.round for r in rounds] == ["D1:1", "D1:2", "D2:1", "D2:2"]
    assert [(r.is_followup, r.followup_of) for r in rounds] == [
        (False, None), (True, "D1:1"), (True, "D1:2"), (True, "D2:1")]
    # images go with the round that opens their event, to the prompt and to the backend
    assert rounds[2].img_file == ["img_1.jpg", "img_2.jpg"] and rounds[3].img_file == []
    user_call = next(c for c in backend.calls if (c.stage, c.item) == ("dialogue.user", "D2:1"))
    assert "img_1 (a cat)" in user_call.prompt and len(user_call.images) == 2
    assert "Previous event: event 1" in user_call.prompt
    # the running memory of round summaries conditions the simulator
    assert "[D1:2] Round D1:2 discussed treating a cat." in user_call.prompt
    assert "(nothing yet)" in backend.calls[0].prompt
    sessions = to_sessions(plan_rounds(events(5, 6), config), rounds)
    assert [(s.session_id, len(s.dialogues)) for s in sessions] == [("D1", 2), ("D2", 2)]
    assert sessions[1].released()["dialogues"][0]["img_id"] == [1, 2]
    assert "img_id" not in sessions[1].released()["dialogues"][1]


def test_empty_assistant_reply_is_retried_then_rejected(scripted):
    backend = scripted({"dialogue.assistant": ["  ", "", "\n"]})
    with pytest.raises(MalformedReplyError) as info:
        generate(events(5), backend, DialogueConfig(rounds_per_event=1, retries=2))
    assert (info.value.field, info.value.record) == ("dialogue.assistant", "D1:1")


def test_chunk_and_cross_chunk_audits_flag_rounds_that_are_repaired(scripted):
    config = DialogueConfig(rounds_per_event=2, audit_chunk=2)
    evs = events(5, 6)
    rounds = generate(evs, scripted(), config)
    chunk_flag = json.dumps({"flags": [{"target": "D1:2", "category": "hallucination",
                                        "problem": "invents a drug"}]})
    outside = json.dumps({"flags": [{"target": "D2:1", "category": "contradiction",
                                     "problem": "x"}]})
    cross = json.dumps({"flags": [{"target": "D2:2", "category": "contradiction",
                                   "problem": "cat's weight differs from D1:1"}]})
    backend = scripted({
        "dialogue.chunk_audit@D1:1-D1:2": [outside, chunk_flag],  # first names a hidden round
        "dialogue.cross_audit": [cross],
    })
    audited, edits = audit_dialogue(SPEC, rounds, backend, config)
    assert [(c.stage, c.item) for c in backend.calls[:4]] == [
        ("dialogue.chunk_audit", "D1:1-D1:2"), ("dialogue.chunk_audit", "D1:1-D1:2"),
        ("dialogue.chunk_audit", "D2:1-D2:2"), ("dialogue.cross_audit", "Alex_Vet")]
    assert "round 'D2:1', which was not shown" in backend.calls[1].prompt
    # the cross-chunk pass sees the compact overview: one summary per round
    assert "[D1:1] Round D1:1 discussed treating a cat." in backend.calls[3].prompt
    assert [(e.target, e.category) for e in edits] == [("D1:2", "hallucination"),
                                                       ("D2:2", "contradiction")]
    assert audited[1].user == "Repaired question D1:2" and audited[0] == rounds[0]
    repair = next(c for c in backend.calls if c.stage == "dialogue.repair")
    # the repair is conditioned on both neighbours
    assert "Previous round: [D1:1]" in repair.prompt and "Next round: [D2:1]" in repair.prompt
    assert audited[3].summary == "Round D2:2.repaired discussed treating a cat."


def test_repeated_user_turn_is_flagged_without_the_model(scripted):
    config = DialogueConfig(rounds_per_event=1)
    same = '{"user": "How do I treat this?", "is_followup": false}'
    backend = scripted({"dialogue.user": [same, same]})
    rounds = generate(events(5, 6), backend, config)
    audited, edits = audit_dialogue(SPEC, rounds, scripted(), config)
    assert [(e.target, e.problem) for e in edits] == [("D2:1", "repeats the user turn of D1:1")]
    assert audited[1].user == "Repaired question D2:1"


def test_a_document_round_shows_its_bounded_text_and_rendered_pages(tmp_path, scripted):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    long_line = "Creatinine 2.4 mg/dL " + "x" * 5000  # past the prompt bound
    write_text_pdf(pdfs / "labs.pdf", ["Potassium 3.1 mmol/L", long_line, "page three"])
    doc = NumberedDocument(file="labs.pdf", source="/pool/labs.pdf", page_count=3,
                           pages=[0, 1], description="Bloodwork of Miso")
    backend = scripted()
    config = DialogueConfig(rounds_per_event=2)
    evs = events(5)
    rounds = []
    for plan in plan_rounds(evs, config):
        rounds.append(generate_round(SPEC, plan, {1: evs[0]}, {}, rounds, backend, "/nowhere",
                                     config, {1: [doc]}, pdfs, tmp_path / "pages"))
    # the opening round attaches pages 1-2 of 3 (as page entries); the follow-up does not
    assert [r.pdf_file for r in rounds] == [["labs.pdf#1", "labs.pdf#2"], []]
    assert rounds[0].released()["pdf_file"] == ["labs.pdf#1", "labs.pdf#2"]
    assert "pdf_file" not in rounds[1].released()
    user, assistant = (next(c for c in backend.calls if (c.stage, c.item) == (s, "D1:1"))
                       for s in ("dialogue.user", "dialogue.assistant"))
    assert "document labs.pdf (pages 1-2 of 3): Bloodwork of Miso" in user.prompt
    assert "quote a concrete number, label or term" in user.prompt
    assert "3.1 mmol/L" in rounds[0].user  # the simulator quoted the page
    for call in (user, assistant):
        assert "[page 1]\nPotassium 3.1 mmol/L\n[page 2]\nCreatinine 2.4 mg/dL" in call.prompt
        assert "page three" not in call.prompt and "x" * 3000 not in call.prompt
        assert " [...]" in call.prompt
        assert [p.parent.name for p in call.images] == ["pages", "pages"]
    assert all(p.is_file() and p.suffix == ".png" for p in user.images)
    followup = next(c for c in backend.calls if (c.stage, c.item) == ("dialogue.user", "D1:2"))
    assert followup.images == () and "Potassium" not in followup.prompt
