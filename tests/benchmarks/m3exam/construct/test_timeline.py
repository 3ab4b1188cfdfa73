import json
from datetime import date

import pytest

from m3kit.benchmarks.m3exam.construct import MalformedReplyError, PersonaSpec
from m3kit.benchmarks.m3exam.construct.timeline import (
    generate_timeline,
    released_timeline,
    timeline_from_released,
)

SPEC = PersonaSpec(name="Alex_Vet", persona="Alex, head clinician of a pet hospital.",
                   core_event="A run of hard cases.", start_date=date(2023, 9, 5),
                   n_core_events=3, n_distractor_events=2)


def ev(desc, day):
    return {"description": desc, "query": "q", "date": day, "keyword": "k"}


def test_core_and_distractors_merge_by_date_and_renumber(scripted):
    backend = scripted({
        "timeline.core": [json.dumps([ev("c1", "2023-09-05"), ev("c2", "2023-09-10"),
                                      ev("c3", "2023-09-20")])],
        "timeline.distractors": [json.dumps([ev("d1", "2023-09-10"), ev("d2", "2023-09-15")])],
    })
    events, edits = generate_timeline(SPEC, backend)
    # same-day core event c2 goes before distractor d1
    assert [(e.index, e.description, e.kind) for e in events] == [
        (1, "c1", "core"), (2, "c2", "core"), (3, "d1", "distractor"),
        (4, "d2", "distractor"), (5, "c3", "core")]
    assert edits == []
    assert backend.stages() == ["timeline.core", "timeline.distractors", "timeline.self_check"]
    released = released_timeline(SPEC, events)
    assert released[0]["Event_Type"] == "Persona" and released[0]["Event_Index"] == 0
    assert released[3] == {"Event_Index": 3, "Event_Type": "Distractor",
                           "Event_Description": "d1", "Query_Description": "q",
                           "Event_Time": "2023-09-10", "Keyword": "k"}
    assert timeline_from_released(released) == events


def test_core_line_out_of_date_order_is_retried(scripted):
    bad = json.dumps([ev("c1", "2023-09-05"), ev("c2", "2023-09-04"), ev("c3", "2023-09-20")])
    backend = scripted({"timeline.core": [bad]})
    events, _ = generate_timeline(SPEC, backend)
    assert backend.stages()[:2] == ["timeline.core", "timeline.core"]
    assert "dates must strictly increase" in backend.calls[1].prompt
    assert [e.date for e in events] == sorted(e.date for e in events)


def test_distractor_outside_the_core_span_is_retried(scripted):
    core = json.dumps([ev("c1", "2023-09-05"), ev("c2", "2023-09-10"), ev("c3", "2023-09-20")])
    late = json.dumps([ev("d1", "2023-09-06"), ev("d2", "2024-01-01")])
    backend = scripted({"timeline.core": [core], "timeline.distractors": [late]})
    events, _ = generate_timeline(SPEC, backend)
    assert backend.stages().count("timeline.distractors") == 2
    assert "outside 2023-09-05..2023-09-20" in backend.calls[2].prompt
    assert max(e.date for e in events) == date(2023, 9, 20)


def test_self_check_flag_is_repaired_within_the_neighbours_dates_and_documented(scripted):
    core = json.dumps([ev("c1", "2023-09-05"), ev("c2", "2023-09-10"), ev("c3", "2023-09-20")])
    flags = json.dumps({"flags": [{"target": 2, "category": "persona_violation",
                                   "problem": "Alex is a vet, not a pilot"}]})
    backend = scripted({
        "timeline.core": [core], "timeline.distractors": ["[]"],
        "timeline.self_check": [flags],
        # first repair leaves the range 2023-09-05..2023-09-20, the second is in it
        "timeline.repair": [json.dumps(ev("fixed", "2023-10-01")),
                            json.dumps(ev("fixed", "2023-09-12"))],
    })
    spec = SPEC.model_copy(update={"n_distractor_events": 0})
    events, edits = generate_timeline(spec, backend)
    assert [e.description for e in events] == ["c1", "fixed", "c3"]
    assert events[1].date == date(2023, 9, 12) and events[1].kind == "core"
    assert backend.stages().count("timeline.repair") == 2
    assert len(edits) == 1
    assert (edits[0].target, edits[0].category) == ("2", "persona_violation")
    assert "c2" in edits[0].before and "fixed" in edits[0].after


def test_self_check_naming_a_missing_event_is_malformed_and_retried(scripted):
    backend = scripted({"timeline.self_check": [
        '{"flags": [{"target": 99, "category": "contradiction", "problem": "x"}]}']})
    events, edits = generate_timeline(SPEC, backend)
    assert backend.stages().count("timeline.self_check") == 2
    assert "event '99'" in backend.calls[3].prompt
    assert edits == [] and len(events) == 5


def test_duplicate_event_is_caught_without_the_model(scripted):
    core = json.dumps([ev("Same case", "2023-09-05"), ev("same  CASE", "2023-09-10"),
                       ev("c3", "2023-09-20")])
    backend = scripted({"timeline.core": [core], "timeline.distractors": ["[]"]})
    spec = SPEC.model_copy(update={"n_distractor_events": 0})
    events, edits = generate_timeline(spec, backend)  # the self-check answers no flags
    assert [e.target for e in edits] == ["2"]
    assert "repeats event 1" in edits[0].problem
    assert events[1].description == "Repaired event 2"


def test_permanently_malformed_core_line_raises_naming_stage_and_item(scripted):
    backend = scripted({"timeline.core": ["I cannot do that."] * 3})
    with pytest.raises(MalformedReplyError) as info:
        generate_timeline(SPEC, backend, retries=2)
    assert info.value.field == "timeline.core" and info.value.record == "Alex_Vet"
