"""The Super Ledger built from stage-1 captions written from a synthetic suite's truth."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sm_qa_support import TINY, write_truth_captions

from m3kit.benchmarks.supermemory.construct.ledger import (
    LedgerRetriever,
    build_ledger,
    captioned_persons,
    day_ledger,
    ledger_days,
    ledger_paths,
    ledger_text,
    read_person_captions,
    write_ledger,
)
from m3kit.benchmarks.supermemory.construct.records import SuperLedger
from m3kit.synth.ego import EgoSuite, build_ego_suite


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> EgoSuite:
    return build_ego_suite(tmp_path_factory.mktemp("ego"), TINY)


@pytest.fixture(scope="module")
def ledger(suite: EgoSuite, tmp_path_factory: pytest.TempPathFactory) -> SuperLedger:
    root = tmp_path_factory.mktemp("root")
    write_truth_captions(suite, root)
    assert captioned_persons(root) == [1]
    # read in file order; the ledger puts them on the clock
    return build_ledger(1, list(reversed(read_person_captions(root, 1))))


def test_events_are_the_scenes_on_the_persons_clock(suite: EgoSuite,
                                                    ledger: SuperLedger) -> None:
    person = suite.person(1)
    assert [s.video_id for s in ledger.sessions] == [s.video_id for s in person.sessions]
    scenes = [(s, scene) for s in person.sessions for scene in s.scenes]
    assert len(ledger.events) == len(scenes)
    for event, (session, scene) in zip(ledger.events, scenes, strict=True):
        assert event.video_id == session.video_id
        assert (event.start, event.end) == (scene.start, scene.end)
        assert event.start_unix == session.start_unix + scene.start
        assert event.end_unix == session.start_unix + scene.end
        assert event.environment == scene.label
    starts = [e.start_unix for e in ledger.events]
    assert starts == sorted(starts)


def test_text_gives_local_and_clock_times(ledger: SuperLedger) -> None:
    text = ledger_text(ledger)
    event = ledger.events[3]
    clock = datetime.fromtimestamp(event.start_unix, UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert f"[{event.video_id} {event.start:g}-{event.end:g} s | " in text
    assert clock in text
    assert text.count("\n[") == len(ledger.events)


def test_one_days_ledger(ledger: SuperLedger) -> None:
    days = ledger_days(ledger)
    assert len(days) == 2  # one session a day
    first = day_ledger(ledger, days[0])
    assert [s.video_id for s in first.sessions] == [ledger.sessions[0].video_id]
    assert {e.video_id for e in first.events} == {ledger.sessions[0].video_id}


def test_retriever_finds_an_event_by_its_words(ledger: SuperLedger) -> None:
    retriever = LedgerRetriever(ledger)
    target = next(e for e in ledger.events if e.visible_text)
    found = retriever.search(target.visible_text, 3)
    assert target.id in [e.id for e in found]
    cited = retriever.overlapping(target.video_id, target.start + 0.5, target.start + 1)
    assert [e.id for e in cited] == [target.id]


def test_saved_as_json_and_markdown(ledger: SuperLedger, tmp_path: Path) -> None:
    write_ledger(tmp_path, ledger)
    json_path, md_path = ledger_paths(tmp_path, 1)
    assert SuperLedger.model_validate_json(json_path.read_bytes()) == ledger
    assert md_path.read_text().startswith("# Super Ledger, person 1")
