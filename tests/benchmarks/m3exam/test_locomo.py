"""LoCoMo loader: a ``locomo10.json``-format fixture made here, into the conversation schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam.locomo import load_locomo
from m3kit.benchmarks.m3exam.predictions import PredictionRecord
from m3kit.errors import M3kitError
from m3kit.schema import ImageRef


def _locomo_file(tmp_path: Path) -> Path:
    # The released shapes (snap-research/locomo README and the file as third-party audits
    # describe it): ``img_url`` a list of links with one ``blip_caption`` and the crawler's
    # ``query``; a caption with no link; a ``session_N_date_time`` with no ``session_N``;
    # ``observation``/``session_summary``/``event_summary`` beside ``conversation``; numeric
    # answers; category-5 items with ``adversarial_answer`` only; evidence typos.
    samples = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Caroline",
                "speaker_b": "Melanie",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!"},
                    {
                        "speaker": "Melanie",
                        "dia_id": "D1:2",
                        "text": "Look at my painting.",
                        "img_url": ["https://example.org/lake.jpg"],
                        "blip_caption": "a painting of a lake at sunrise",
                        "query": "lake sunrise painting",
                    },
                    {"speaker": "Caroline", "dia_id": "D1:3", "text": "Here is my dog.",
                     "blip_caption": "a photo of a brown dog on a sofa"},
                ],
                "session_2_date_time": "1:14 pm on 25 May, 2023",
                "session_2": [
                    {"speaker": "Caroline", "dia_id": "D2:1", "text": "I went to a group."},
                    {"speaker": "Melanie", "text": "no id here"},
                ],
                "session_3_date_time": "8:00 pm on 1 June, 2023",
            },
            "observation": {"session_1_observation": {"Caroline": [["Caroline greets", "D1:1"]]}},
            "session_summary": {"session_1_summary": "They talk about painting."},
            "event_summary": {"events_session_1": {"Caroline": [], "date": "8 May, 2023"}},
            "qa": [
                {"question": "What did Melanie paint?", "answer": "a lake sunrise",
                 "evidence": ["D1:2"], "category": 4},
                {"question": "When did Caroline go to the group?", "answer": 2023,
                 "evidence": ["D2:1; D1:1"], "category": 2},
                {"question": "What did Caroline paint?", "adversarial_answer": "a lake",
                 "evidence": ["D1:2"], "category": 5},
                {"question": "Broken?", "evidence": [], "category": 1},
                {"question": "What pet does Caroline have?", "answer": "a dog",
                 "evidence": ["D:1:3", "D", "D01:03", "D9:9"], "category": 1},
                {"question": "Would Caroline like a dog park?",
                 "answer": "Likely yes; she has a dog", "evidence": ["D1:3"], "category": 3},
            ],
        },
        {"sample_id": "conv-2"},
    ]  # fmt: skip
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(samples), encoding="utf-8")
    return path


def test_locomo_fixture_loads(tmp_path: Path) -> None:
    path = _locomo_file(tmp_path)
    data = load_locomo(tmp_path)  # a folder holding the file works too
    assert data == load_locomo(path)
    conv = data.conversations["conv-1"]
    assert conv.speakers == ["Caroline", "Melanie"]
    # session_3 has a date and no turns key: no session for it.
    assert [s.id for s in conv.sessions] == ["D1", "D2"]
    assert conv.sessions[0].date == "1:56 pm on 8 May, 2023"
    assert [r.id for r in conv.iter_rounds()] == ["D1:1", "D1:2", "D1:3", "D2:1"]
    painting = conv.round("D1:2")
    assert painting.speaker == "Melanie"
    assert painting.text == "Look at my painting."
    assert painting.attachments[0].media == ImageRef(path="https://example.org/lake.jpg")
    assert painting.attachments[0].description == "a painting of a lake at sunrise"
    # The attachment's own name: memories prefix the round (``D1:2/img_1``), once.
    assert painting.attachments[0].id == "img_1"
    # A caption with no link joins the text, as the released evaluation code renders it.
    dog = conv.round("D1:3")
    assert dog.attachments == []
    assert dog.text == "Here is my dog. [shares a photo of a brown dog on a sofa]"

    assert [q.id for q in data.questions] == [
        "conv-1/0", "conv-1/1", "conv-1/2", "conv-1/4", "conv-1/5",
    ]  # fmt: skip
    q0, q1, q2, q4, q5 = data.questions
    assert (q0.benchmark, q0.answer, q0.question_type, q0.evidence) == (
        "locomo", "a lake sunrise", "4", ["D1:2"],
    )  # fmt: skip
    assert q0.metadata["category_name"] == "single-hop"
    assert (q1.answer, q1.evidence, q1.metadata["category_name"]) == (
        "2023", ["D2:1", "D1:1"], "temporal",
    )  # fmt: skip
    # Category 5: the adversarial_answer is the trap, kept aside; the gold is the abstention.
    assert (q2.answer, q2.metadata["adversarial"], q2.metadata["category_name"]) == (
        "Not mentioned in the conversation", True, "adversarial",
    )  # fmt: skip
    assert q2.metadata["adversarial_answer"] == "a lake" and q2.question_type == "5"
    # "D:1:3" and "D01:03" both name D1:3 (kept once); the bare "D" and D9:9 are reported.
    assert (q4.evidence, q4.metadata["category_name"]) == (["D1:3", "D9:9"], "multi-hop")
    # Open-domain: the label (F1/BLEU-1/judge gold) is the part before ";", as released scoring.
    assert (q5.answer, q5.metadata["label"]) == ("Likely yes; she has a dog", "Likely yes")

    where = {(s.record, s.field) for s in data.skipped}
    assert where == {
        ("conv-1 session_2[1]", "dia_id"),
        ("conv-1/3", "answer"),
        ("conv-1/4", "evidence"),
        ("conv-2", "conversation"),
        (None, "img_url"),  # the web links, reported once for the file
    }
    evidence = [s.reason for s in data.skipped if s.record == "conv-1/4"]
    assert "'D'" in evidence[0] and "D9:9" in evidence[1]


def test_locomo_unusable_raises(tmp_path: Path) -> None:
    with pytest.raises(M3kitError, match="no locomo"):
        load_locomo(tmp_path)
    bad = tmp_path / "locomo10.json"
    bad.write_text(json.dumps({"not": "a list"}), encoding="utf-8")
    with pytest.raises(M3kitError, match="expected a JSON list"):
        load_locomo(bad)


def test_adversarial_items_score_by_the_released_rule(tmp_path: Path) -> None:
    from m3kit.benchmarks.m3exam.score import score_outputs

    data = load_locomo(_locomo_file(tmp_path))
    # conv-1/2 asks "What did Caroline paint?" with the trap "a lake". The released
    # evaluation credits only an output saying the information is not there.
    cases = {
        "a lake": 0.0,  # the trap: 0 on every metric (it scored 1.0 before)
        "Not mentioned in the conversation": 1.0,
        "That is NOT MENTIONED anywhere.": 1.0,
        "No information available.": 1.0,
        "I don't know": 0.0,  # not one of the two phrases
    }
    for prediction, expected in cases.items():
        result = score_outputs(data, {"conv-1/2": prediction})
        row = result.per_type["5"]
        assert (row["em"], row["f1"], row["bleu1"]) == (expected, expected, expected), prediction
        assert "llm_judge" not in row  # no judge in play: no LLM-J from the rule alone
    # With given judge scores in play the rule is the category-5 judge score, whatever the
    # file says: cat 4 judged 0.5 (given), cat 5 abstains -> rule 1 (its given 0 ignored).
    result = score_outputs(data, [
        PredictionRecord(id="conv-1/0", prediction="a lake sunrise", judge=0.5),
        PredictionRecord(id="conv-1/2", prediction="not mentioned", judge=0.0),
    ])  # fmt: skip
    assert result.per_type["5"]["llm_judge"] == 1.0
    # The other three questions (categories 1, 2, 3) have no prediction: counted wrong, 0 on
    # every metric, LLM-J 0 as judge scores are in play. TOTAL over the five:
    # LLM-J (0.5 + 1 + 0 + 0 + 0) / 5 = 0.3; EM, F1, BLEU-1 (1 + 1 + 0 + 0 + 0) / 5 = 0.4.
    # Overall = 0.5 * 0.3 + (0.4 + 0.4 + 0.4) / 6 = 0.35.
    assert result.n_missing == 3
    assert result.total["llm_judge"] == pytest.approx(0.3)
    assert result.total["em"] == pytest.approx(0.4)
    assert result.total["overall"] == pytest.approx(0.35)


def _jpeg_data_uri(colour: tuple[int, int, int]) -> str:
    import base64
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), colour).save(buffer, format="JPEG")
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def locomo_with_images(tmp_path: Path) -> Path:
    """Released ``img_url`` shapes: web links (two turns), an inline JPEG (``conv-42`` D5:6
    and ``conv-44`` D19:28 of the released file ship such), a malformed inline image."""
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "My painting!",
         "img_url": ["https://example.invalid/lake.jpg"], "blip_caption": "a painting of a lake"},
        {"speaker": "Bo", "dia_id": "D1:2", "text": "My turtles.",
         "img_url": [_jpeg_data_uri((20, 120, 40))],
         "blip_caption": "a photography of three turtles sitting on rocks in a pond"},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "And my dogs.",
         "img_url": ["data:image/jpeg;base64,////not-an-image"],
         "blip_caption": "three dogs on a couch"},
        {"speaker": "Bo", "dia_id": "D1:4", "text": "Two more photos.",
         "img_url": ["http://example.invalid/a.jpg", "https://example.invalid/b.jpg"],
         "blip_caption": "a beach at dusk"},
    ]
    qa = [{"question": "What animals does Bo keep?", "answer": "turtles", "evidence": ["D1:2"],
           "category": 4},
          {"question": "What did Ann paint?", "answer": "a lake", "evidence": ["D1:1"],
           "category": 4}]
    path = tmp_path / "locomo10.json"
    conversation = {"speaker_a": "Ann", "speaker_b": "Bo",
                    "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": turns}
    path.write_text(json.dumps([{"sample_id": "conv-1", "conversation": conversation,
                                 "qa": qa}]), encoding="utf-8")
    return path


def test_web_inline_and_malformed_images(tmp_path: Path) -> None:
    from m3kit.memory.events import conversation_events

    data = load_locomo(locomo_with_images(tmp_path))
    conv = data.conversations["conv-1"]
    web, inline, malformed, pair = (conv.round(f"D1:{n}") for n in range(1, 5))
    assert web.attachments[0].media.remote and not web.attachments[0].media.inline
    assert inline.attachments[0].media.inline
    assert inline.attachments[0].description.startswith("a photography of three turtles")
    # A malformed inline image is a named skip; the turn keeps its caption in its text.
    assert malformed.attachments == []
    assert malformed.text == "And my dogs. [shares three dogs on a couch]"
    assert [a.id for a in pair.attachments] == ["img_1", "img_2"]
    bad = [s for s in data.skipped if s.record == "conv-1 D1:3"]
    assert len(bad) == 1 and bad[0].field == "img_url"
    assert bad[0].reason.startswith("inline image skipped: ")
    # The web links are reported once for the whole file, with their count.
    (note,) = [s for s in data.skipped if s.record is None]
    assert note.field == "img_url" and note.reason.startswith("3 shared images are web links")
    # Memory item ids carry the round once.
    ids = [e.id for e in conversation_events(conv) if e.kind == "image"]
    assert ids == ["D1:1/img_1", "D1:2/img_1", "D1:4/img_1", "D1:4/img_2"]
