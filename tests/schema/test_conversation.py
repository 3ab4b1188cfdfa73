"""Conversations: sessions, rounds, attachments, lookups, and fit to real M3Exam data."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import ValidationError

from m3kit.schema import (
    Attachment,
    Conversation,
    ImageRef,
    PdfPageRef,
    Question,
    Round,
    Session,
)


def _small_conversation() -> Conversation:
    return Conversation(
        id="noah",
        speakers=["Noah", "assistant"],
        sessions=[
            Session(
                id="D1",
                date="2024-01-05",
                rounds=[
                    Round(
                        id="D1:1",
                        speaker="Noah",
                        text="How do I dial in this espresso?",
                        response="Start with an 18 g dose.",
                        attachments=[
                            Attachment(
                                media=ImageRef(path="images/img_1.jpg"),
                                description="An espresso shot with pale crema.",
                                id="img_1",
                            )
                        ],
                    ),
                    Round(id="D1:2", speaker="Noah", text="And the grind?", response="Finer."),
                ],
            ),
            Session(
                id="D2",
                date="2024-01-09",
                rounds=[
                    Round(
                        id="D2:1",
                        speaker="Noah",
                        text="Page 3 of the manual says 93 C; is that right?",
                        response="Yes, 92-94 C is typical.",
                        attachments=[Attachment(media=PdfPageRef(path="docs/manual.pdf", page=2))],
                        is_followup=True,
                        followup_of="D1:2",
                    )
                ],
            ),
        ],
        metadata={"persona": "Barista apprentice"},
    )


def test_round_lookup_and_iteration() -> None:
    conv = _small_conversation()
    assert [r.id for r in conv.iter_rounds()] == ["D1:1", "D1:2", "D2:1"]
    assert conv.round("D1:2").text == "And the grind?"
    assert conv.session_of("D2:1").id == "D2"
    assert conv.session("D1").date == "2024-01-05"
    with pytest.raises(KeyError, match="D9:9"):
        conv.round("D9:9")
    with pytest.raises(KeyError):
        conv.session("D3")


def test_conversation_round_trip() -> None:
    conv = _small_conversation()
    back = Conversation.model_validate_json(conv.model_dump_json())
    assert back == conv
    att = back.round("D2:1").attachments[0]
    assert isinstance(att.media, PdfPageRef)
    assert att.media.page == 2
    assert back.round("D2:1").followup_of == "D1:2"
    assert back.round("D1:1").attachments[0].id == "img_1"


def test_session_keeps_raw_date_and_parses_iso() -> None:
    s = Session(id="D1", date="2023-03-01")
    assert s.date == "2023-03-01"
    assert s.parsed_date == datetime(2023, 3, 1)
    odd = Session(id="D2", date="spring 2023")
    assert (odd.date, odd.parsed_date) == ("spring 2023", None)
    from_dt = Session(id="D3", date=datetime(2023, 3, 2, 9, 30))
    assert (from_dt.date, from_dt.parsed_date) == (
        "2023-03-02T09:30:00",
        datetime(2023, 3, 2, 9, 30),
    )
    assert Session(id="D4").parsed_date is None
    assert Session.model_validate_json(from_dt.model_dump_json()) == from_dt


def test_duplicate_round_ids_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate round id 'D1:1'") as info:
        Conversation(
            id="c",
            sessions=[
                Session(id="D1", rounds=[Round(id="D1:1", text="a")]),
                Session(id="D2", rounds=[Round(id="D1:1", text="b")]),
            ],
        )
    assert [e["loc"] for e in info.value.errors()] == [("sessions",)]


def test_duplicate_session_ids_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate session id 'D1'"):
        Conversation(id="c", sessions=[Session(id="D1"), Session(id="D1")])


def test_followup_must_point_to_an_earlier_round() -> None:
    with pytest.raises(ValidationError, match="not an earlier round"):
        Conversation(
            id="c",
            sessions=[
                Session(
                    id="D1",
                    rounds=[
                        Round(id="D1:1", text="a", is_followup=True, followup_of="D1:2"),
                        Round(id="D1:2", text="b"),
                    ],
                )
            ],
        )


def test_followup_of_requires_flag() -> None:
    with pytest.raises(ValidationError, match="is_followup is False"):
        Round(id="D1:2", text="b", followup_of="D1:1")


def test_round_time_is_a_datetime() -> None:
    r = Round.model_validate({"id": "D1:1", "text": "hi", "time": "2023-03-01T08:15:00"})
    assert r.time == datetime(2023, 3, 1, 8, 15)


def _session_from_m3exam(raw: dict, image_dir: str) -> Session:
    """Hand-map one released M3Exam session (the test stands in for the future loader).

    ``img_description`` is a list with one entry per image, or, in some rounds, a single
    string (or a shorter list) describing the images together: that goes to the round.
    """
    rounds = []
    for d in raw["dialogues"]:
        files = d.get("img_file", [])
        ids = d.get("img_id", [])
        descriptions = d.get("img_description", [])
        per_item = isinstance(descriptions, list) and len(descriptions) == len(files)
        attachments = [
            Attachment(
                media=ImageRef(path=f"{image_dir}/{name}"),
                description=descriptions[i] if per_item else None,
                id=f"img_{img_id}",
            )
            for i, (name, img_id) in enumerate(zip(files, ids, strict=True))
        ]
        together = None
        if not per_item:
            together = descriptions if isinstance(descriptions, str) else "\n".join(descriptions)
        rounds.append(
            Round(
                id=d["round"],
                speaker="Alex",
                text=d["user"],
                response=d["assistant"],
                attachments=attachments,
                attachments_description=together,
            )
        )
    return Session(id=raw["session_id"], date=raw["date"], rounds=rounds)


def test_schema_fits_real_m3exam_sessions(m3exam_persona: Path) -> None:
    path = m3exam_persona / "sessions.json"
    raw_sessions = json.loads(path.read_text(encoding="utf-8"))[:2]
    conv = Conversation(
        id="Alex_Veterinarian",
        speakers=["Alex", "assistant"],
        sessions=[_session_from_m3exam(s, "images") for s in raw_sessions],
    )

    # Hand-checked against the released file.
    assert [s.id for s in conv.sessions] == ["D1", "D2"]
    assert [s.date for s in conv.sessions] == ["2023-03-01", "2023-03-02"]
    assert conv.sessions[0].parsed_date == datetime(2023, 3, 1)
    assert [len(s.rounds) for s in conv.sessions] == [12, 13]
    first = conv.round("D1:1")
    assert first.text.startswith("I'm starting my day with a puppy suspected of having canine")
    assert [a.id for a in first.attachments] == ["img_1", "img_2", "img_3", "img_4"]
    assert first.attachments[0].media == ImageRef(path="images/img_1.jpg")
    assert first.attachments[1].description == (
        "A puppy lying on a table, connected to an IV drip, being monitored by a custodian "
        "in blue scrubs."
    )
    assert first.attachments_description is None
    assert [a.id for a in conv.round("D1:10").attachments] == ["img_101", "img_102"]
    # D1:7 describes its three images in one string: kept on the round, not guessed per image.
    seventh = conv.round("D1:7")
    assert [a.id for a in seventh.attachments] == ["img_5", "img_6", "img_7"]
    assert [a.description for a in seventh.attachments] == [None, None, None]
    assert seventh.attachments_description == (
        "Image depicts a cat lying on a surgical table with an indwelling urinary catheter "
        "connected to a collection bag, highlighting post-procedure care and monitoring."
    )
    assert conv.round("D1:2").attachments == []
    assert conv.session_of("D2:4").id == "D2"
    assert sum(len(r.attachments) for r in conv.iter_rounds()) == 16

    # And it survives serialisation unchanged.
    assert Conversation.model_validate_json(conv.model_dump_json()) == conv


def test_schema_fits_real_m3exam_questions(m3exam_persona: Path) -> None:
    sessions_path = m3exam_persona / "sessions.json"
    questions_path = m3exam_persona / "question.json"
    conv = Conversation(
        id="Alex_Veterinarian",
        sessions=[
            _session_from_m3exam(s, "images")
            for s in json.loads(sessions_path.read_text(encoding="utf-8"))
        ],
    )
    raw_questions = json.loads(questions_path.read_text(encoding="utf-8"))
    # The released answer list is ordered (graded EM discounts later hits), and its head is
    # not always the canonical ``label`` (e.g. answer ["41", "41%"], label "41%"), so the
    # whole order is kept: head as answer, tail as alternatives, label in metadata.
    questions = [
        Question(
            id=f"Alex_Veterinarian/{i}",
            benchmark="m3exam",
            text=q["question"],
            answer=q["answer"][0],
            alternatives=q["answer"][1:],
            question_type=q["type"],
            evidence=[r.strip() for r in q["supporting_facts"].split(",")],
            metadata={"label": q["label"], "conversation": conv.id},
        )
        for i, q in enumerate(raw_questions)
    ]
    assert len(questions) == 358
    assert questions[0].answer == "Medial Saphenous Vein"
    assert questions[0].alternatives == ["Cephalic Vein", "Jugular Vein"]
    assert questions[0].evidence == ["D12:4"]
    # Every supporting-fact round a question cites exists in the conversation.
    for q in questions:
        for round_id in q.evidence:
            assert conv.round(round_id).id == round_id
    multi = next(q for q in questions if len(q.evidence) > 1)
    assert multi.evidence == ["D2:7", "D2:9"]
    assert Question.model_validate_json(multi.model_dump_json()) == multi
