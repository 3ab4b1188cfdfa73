"""M3Exam loader: the real persona folder, and released-format fixtures with faults."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from m3kit.benchmarks.m3exam.load import (
    M3ExamData,
    load_m3exam,
    parse_evidence,
    retrieved_rounds,
    split_supporting_facts,
)
from m3kit.errors import M3kitError
from m3kit.schema import ImageRef, PdfPageRef


@pytest.fixture(scope="module")
def alex(m3exam_persona: Path) -> M3ExamData:
    return load_m3exam(m3exam_persona)


def test_real_persona_loads_whole(alex: M3ExamData, m3exam_persona: Path) -> None:
    assert list(alex.conversations) == ["Alex_Veterinarian"]
    assert alex.skipped == []
    assert len(alex.questions) == 358
    # Type counts hand-checked against question.json.
    assert Counter(q.question_type for q in alex.questions) == {
        "tr": 87, "ms": 61, "mr": 50, "ss": 48, "th": 44, "fj": 29, "fm": 24, "ii": 15,
    }  # fmt: skip
    conv = alex.conversations["Alex_Veterinarian"]
    assert conv.speakers == ["Alex", "assistant"]
    assert len(conv.sessions) == 15
    assert sum(1 for _ in conv.iter_rounds()) == 163
    assert sum(len(r.attachments) for r in conv.iter_rounds()) == 110

    first = conv.round("D1:1")
    assert [a.id for a in first.attachments] == ["img_1", "img_2", "img_3", "img_4"]
    media = first.attachments[0].media
    assert isinstance(media, ImageRef)
    assert Path(media.path).is_absolute()
    assert Path(media.path) == (m3exam_persona / "images" / "img_1.jpg").resolve()
    assert first.attachments[1].description.startswith("A puppy lying on a table")
    # A single string describing several images stays on the round.
    seventh = conv.round("D1:7")
    assert [a.description for a in seventh.attachments] == [None, None, None]
    assert seventh.attachments_description.startswith("Image depicts a cat lying")


def test_real_questions_fields(alex: M3ExamData) -> None:
    q0 = alex.question("Alex_Veterinarian/0")
    assert (q0.benchmark, q0.question_type) == ("m3exam", "ss")
    assert q0.answer == "Medial Saphenous Vein"
    assert q0.alternatives == ["Cephalic Vein", "Jugular Vein"]
    assert q0.evidence == ["D12:4"]
    assert q0.metadata["persona"] == "Alex_Veterinarian"
    assert q0.metadata["label"] == "Medial Saphenous Vein"
    assert alex.conversation_of(q0).id == "Alex_Veterinarian"
    multi = next(q for q in alex.questions if q.question_type == "ii")
    assert multi.evidence == ["D12:6", "D15:2", "D15:3"]
    fm = next(q for q in alex.questions if q.question_type == "fm")
    assert (fm.answer, fm.alternatives) == ("img_60", ["img_61"])


def test_split_supporting_facts() -> None:
    assert split_supporting_facts("D2:1,D12:1") == ["D2:1", "D12:1"]
    assert split_supporting_facts("D2:1, D12:1; D3:4") == ["D2:1", "D12:1", "D3:4"]
    assert split_supporting_facts(["D1:1", "D1:2"]) == ["D1:1", "D1:2"]
    assert split_supporting_facts(None) == []


def test_parse_evidence_normalises_released_typos() -> None:
    # Forms in LoCoMo's locomo10.json: several ids in one entry (";" or " "), "D:11:26" (a
    # stray colon), "D30:05" (a leading zero), a bare "D"; a repeated id counts once.
    ids, malformed = parse_evidence(["D8:6; D9:17", "D9:1 D4:4", "D:11:26", "D30:05", "D",
                                     "D8:6"])  # fmt: skip
    assert ids == ["D8:6", "D9:17", "D9:1", "D4:4", "D11:26", "D30:5"]
    assert malformed == ["D"]
    assert parse_evidence("D2:1,D12:1") == (["D2:1", "D12:1"], [])


def _make_persona(root: Path, name: str, *, with_faults: bool) -> Path:
    import pypdfium2

    folder = root / name
    (folder / "images").mkdir(parents=True)
    (folder / "pdfs").mkdir()
    (folder / "images" / "img_1.jpg").write_bytes(b"\xff\xd8\xff\xd9")
    doc = pypdfium2.PdfDocument.new()
    for _ in range(3):
        doc.new_page(200, 300)
    doc.save(str(folder / "pdfs" / "manual.pdf"))
    doc.close()
    dialogues = [
        {
            "round": "D1:1",
            "user": "Look at this.",
            "assistant": "Nice.",
            "img_file": ["img_1.jpg", "img_2.jpg"] if with_faults else ["img_1.jpg"],
            "img_id": [1, 2] if with_faults else [1],
            "img_description": ["one", "two"] if with_faults else ["one"],
        },
        {
            "round": "D1:2",
            "user": "And page 2 of the manual?",
            "assistant": "It says 93 C.",
            "pdf_file": ["manual.pdf#2", "manual.pdf"] + (["gone.pdf"] if with_faults else []),
            "is_followup": True,
            "followup_of": "D1:1",
        },
    ]
    if with_faults:
        dialogues.append({"round": "D1:3", "assistant": "no user text"})
        dialogues.append({"round": "D1:4", "user": "x", "assistant": "y", "followup_of": "D9:9"})
    sessions = [{"session_id": "D1", "date": "2024-02-01", "dialogues": dialogues}]
    questions = [
        {"question": "Which image?", "answer": ["img_1"], "label": "img_1",
         "supporting_facts": "D1:1", "type": "fm"},
        {"question": "Temperature?", "answer": ["93 C", "93"], "label": "93 C",
         "supporting_facts": "D1:2,D7:7" + (",X" if with_faults else ""), "type": "mr"},
        {"question": "", "answer": ["x"], "label": "x", "supporting_facts": "D1:1", "type": "ss"},
        {"question": "No answer?", "answer": [], "supporting_facts": "D1:1", "type": "ss"},
    ]  # fmt: skip
    (folder / "sessions.json").write_text(json.dumps(sessions), encoding="utf-8")
    (folder / "question.json").write_text(json.dumps(questions), encoding="utf-8")
    return folder


def test_folder_of_personas_with_faults_reports_and_goes_on(tmp_path: Path) -> None:
    _make_persona(tmp_path, "Bea_Clean", with_faults=False)
    faulty = _make_persona(tmp_path, "Cy_Faulty", with_faults=True)
    (tmp_path / "not_a_persona").mkdir()
    data = load_m3exam(tmp_path)
    assert list(data.conversations) == ["Bea_Clean", "Cy_Faulty"]
    assert [q.id for q in data.questions] == [
        "Bea_Clean/0", "Bea_Clean/1", "Cy_Faulty/0", "Cy_Faulty/1",
    ]  # fmt: skip

    clean = data.conversations["Bea_Clean"]
    pages = [a.media for a in clean.round("D1:2").attachments]
    # "manual.pdf#2" is page 2 (0-based 1); the bare name brings all three pages.
    assert pages == [
        PdfPageRef(path=str((tmp_path / "Bea_Clean" / "pdfs" / "manual.pdf").resolve()), page=p)
        for p in (1, 0, 1, 2)
    ]
    assert clean.round("D1:2").followup_of == "D1:1"

    conv = data.conversations["Cy_Faulty"]
    # The missing image is dropped, the round keeps its text and the image that exists.
    assert [a.id for a in conv.round("D1:1").attachments] == ["img_1"]
    assert conv.round("D1:1").text == "Look at this."
    assert [r.id for r in conv.iter_rounds()] == ["D1:1", "D1:2", "D1:4"]
    assert conv.round("D1:4").followup_of is None

    issues = {(Path(s.file).name, s.record, s.field) for s in data.skipped}
    assert issues == {
        ("sessions.json", "D1:1", "img_file"),
        ("sessions.json", "D1:2", "pdf_file"),
        ("sessions.json", "D1:3", "user"),
        ("sessions.json", "D1:4", "followup_of"),
        ("question.json", "Bea_Clean/1", "supporting_facts"),
        ("question.json", "Cy_Faulty/1", "supporting_facts"),
        ("question.json", "Bea_Clean/2", "question"),
        ("question.json", "Bea_Clean/3", "answer"),
        ("question.json", "Cy_Faulty/2", "question"),
        ("question.json", "Cy_Faulty/3", "answer"),
    }
    # Cy's "X" names no round and "D7:7" no round of the conversation: two reports.
    evidence = [s.reason for s in data.skipped if s.record == "Cy_Faulty/1"]
    assert len(evidence) == 2 and "'X'" in evidence[0] and "D7:7" in evidence[1]
    assert data.question("Cy_Faulty/1").evidence == ["D1:2", "D7:7"]
    missing = next(s for s in data.skipped if s.field == "img_file")
    assert "img_2.jpg" in missing.reason and str(faulty / "sessions.json") == missing.file
    assert "img_2.jpg" in str(missing.to_error())


def test_followups_to_pdf_session_rounds_resolve_by_the_release_rule(tmp_path: Path) -> None:
    """The release links some follow-ups to ``P<n>:<m>``: utterance m (user, assistant, ... from
    1) of the n-th session that carries a PDF, i.e. round (m + 1) / 2 for an odd m. Here the
    persona's first PDF session is D1 (D0 before it has none): ``P1:3`` is D1:2, kept;
    ``P1:2`` (an assistant turn), ``P2:1`` (no second PDF session) and ``P1:13`` (D1:7, not
    earlier) do not resolve and are dropped by name, each round kept."""
    folder = _make_persona(tmp_path, "Noa_Links", with_faults=False)
    sessions = json.loads((folder / "sessions.json").read_text(encoding="utf-8"))
    plain = {"round": "D0:1", "user": "Hello.", "assistant": "Hi."}
    sessions.insert(0, {"session_id": "D0", "date": "2024-01-01", "dialogues": [plain]})
    sessions[1]["dialogues"] += [
        {"round": f"D1:{n}", "user": "About that page again?", "assistant": "Yes.",
         "is_followup": True, "followup_of": link}
        for n, link in ((3, "P1:3"), (4, "P1:2"), (5, "P2:1"), (6, "P1:13"))]
    (folder / "sessions.json").write_text(json.dumps(sessions), encoding="utf-8")
    data = load_m3exam(folder)
    conversation = data.conversations["Noa_Links"]
    assert conversation.round("D1:3").followup_of == "D1:2"
    for rid in ("D1:4", "D1:5", "D1:6"):
        rnd = conversation.round(rid)
        assert rnd.followup_of is None and rnd.is_followup
    reasons = {s.record: s.reason for s in data.skipped if s.field == "followup_of"}
    assert reasons == {
        "D1:4": "follow-up link to 'P1:2' dropped: utterance 2 is an assistant turn, not a "
                "round's start",
        "D1:5": "follow-up link to 'P2:1' dropped: the persona has 1 PDF session(s), not 2",
        "D1:6": "follow-up link to 'P1:13' dropped: read as D1:7, which is not an earlier "
                "round",
    }


def test_unusable_folder_raises_typed_error(tmp_path: Path) -> None:
    with pytest.raises(M3kitError, match="not an M3Exam persona folder"):
        load_m3exam(tmp_path)
    bad = tmp_path / "Dee_Broken"
    bad.mkdir()
    (bad / "sessions.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(M3kitError, match="no persona could be loaded.*invalid JSON"):
        load_m3exam(tmp_path)
    with pytest.raises(M3kitError, match="no such file"):
        load_m3exam(tmp_path / "absent")


def test_unknown_question_type_is_a_reported_skip(tmp_path: Path) -> None:
    folder = _make_persona(tmp_path, "Eve_Types", with_faults=False)
    questions = json.loads((folder / "question.json").read_text(encoding="utf-8"))
    questions[1]["type"] = "zz"
    (folder / "question.json").write_text(json.dumps(questions), encoding="utf-8")
    data = load_m3exam(folder)
    # Only the fm item is left; the "zz" item is skipped naming file, record and field.
    assert [q.id for q in data.questions] == ["Eve_Types/0"]
    zz = next(s for s in data.skipped if s.record == "Eve_Types/1")
    assert (Path(zz.file).name, zz.field) == ("question.json", "type")
    assert "'zz'" in zz.reason and "ss" in zz.reason


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "file not found"), ("{oops", "invalid JSON"), ('{"a": 1}', "expected a JSON list"),
     ("[]", "no question could be loaded")],
)
def test_unusable_question_json_is_a_typed_error(
    tmp_path: Path, content: str | None, reason: str
) -> None:
    folder = _make_persona(tmp_path, "Fay_NoQuestions", with_faults=False)
    target = folder / "question.json"
    if content is None:
        target.unlink()
    else:
        target.write_text(content, encoding="utf-8")
    with pytest.raises(M3kitError, match=reason) as info:
        load_m3exam(folder)
    assert "\n" not in str(info.value)


def test_a_ranking_is_read_as_rounds_and_summaries_take_no_slot() -> None:
    """An attachment is its round; M3Proctor's session summaries and hierarchical's round
    summaries are no round: recall@k is over the first k distinct rounds."""
    from m3kit.metrics.retrieval import recall_at_k

    ranked = ["session:D1", "D1:2/img_1", "round-summary:D1:2", "D1:2", "D3:4/doc.pdf#page=2",
              "D5:1"]
    assert retrieved_rounds(ranked) == ["D1:2", "D1:2", "D3:4", "D5:1"]
    # the summary ahead of them no longer pushes D5:1 out of the top 3
    assert recall_at_k(retrieved_rounds(ranked), ["D1:2", "D3:4", "D5:1"], 3) == 1.0
