import json
import random
from datetime import date

import pytest

from m3kit.benchmarks.m3exam.construct.questions import (
    Window,
    generate_questions,
    sample_window,
    validate_item,
)
from m3kit.benchmarks.m3exam.construct.records import QuestionDraft, RoundRecord, SessionRecord
from m3kit.media.pdf import write_text_pdf


def rnd(rid, imgs=()):
    return RoundRecord(round=rid, user=f"user text {rid}", assistant=f"reply {rid} said 42 mg",
                       img_file=[f"img_{i}.jpg" for i in imgs], img_id=list(imgs),
                       img_description=[f"photo {i}" for i in imgs])


def sessions():
    return [
        SessionRecord(session_id="D1", date=date(2023, 9, 5),
                      dialogues=[rnd("D1:1", (1, 2)), rnd("D1:2"), rnd("D1:3")]),
        SessionRecord(session_id="D2", date=date(2023, 9, 7),
                      dialogues=[rnd("D2:1"), rnd("D2:2", (3,)), rnd("D2:3")]),
        SessionRecord(session_id="D3", date=date(2023, 9, 9),
                      dialogues=[rnd("D3:1"), rnd("D3:2")]),
    ]


def window(qtype, *parts):
    ss = {s.session_id: s for s in sessions()}
    return Window("w", qtype, tuple(
        (ss[sid], tuple(r for r in ss[sid].dialogues if r.round in rids))
        for sid, rids in parts))


def draft(question="Q?", answer=("gold",), facts=("D1:1",)):
    return QuestionDraft(question=question, answer=list(answer), supporting_facts=list(facts))


def test_supporting_facts_outside_the_window_are_rejected():
    w = window("ss", ("D1", {"D1:1", "D1:2"}))
    with pytest.raises(ValueError, match=r"\['D1:3'\] fall outside the sampled window"):
        validate_item(draft(facts=["D1:3"]), w)
    item = validate_item(draft(facts=["D1:2"]), w)
    assert item.model_dump() == {"question": "Q?", "answer": ["gold"], "label": "gold",
                                 "supporting_facts": "D1:2", "type": "ss"}


@pytest.mark.parametrize("qtype,parts,d,reason", [
    ("ss", [("D1", {"D1:1", "D1:2"})], draft(facts=["D1:1", "D1:2"]), "exactly one round"),
    ("ms", [("D1", {"D1:1", "D1:2"}), ("D2", {"D2:1"})], draft(facts=["D1:1", "D1:2"]),
     "at least two sessions"),
    ("ii", [("D1", {"D1:1"}), ("D2", {"D2:1"})], draft(answer=["3"], facts=["D1:1", "D2:1"]),
     "not counts"),
    ("th", [("D1", {"D1:1"})], draft(answer=["only one level"]), "hierarchically"),
    ("mr", [("D1", {"D1:1", "D1:2"})], draft(facts=["D1:2"]), "image-bearing round"),
    ("mr", [("D1", {"D1:1"})], draft(answer=["42 mg"]), "stated in the dialogue text"),
    ("fm", [("D1", {"D1:1"})], draft(answer=["img_1"]), "at least one other candidate"),
    ("fm", [("D1", {"D1:1"})], draft(answer=["img_1", "img_9"]), r"not shown in the window: \[9\]"),
    ("fm", [("D1", {"D1:1"}), ("D2", {"D2:2"})], draft(answer=["img_3", "img_1"]),
     "not attached to a cited round"),
    ("fm", [("D1", {"D1:1"})], draft(answer=["the cat photo", "img_1"]), "not an img_<number>"),
    ("fj", [("D1", {"D1:1"})], draft(question="(A) a (B) b (C) c (D) d", answer=["E"]),
     "single letter"),
    ("fj", [("D1", {"D1:1"})], draft(question="Pick (A) or (B)", answer=["A"]),
     r"options \(A\) to \(D\)"),
])
def test_type_constraints_reject(qtype, parts, d, reason):
    with pytest.raises(ValueError, match=reason):
        validate_item(d, window(qtype, *parts))


def test_fm_and_fj_are_normalised_to_the_released_form():
    fm = validate_item(draft(question="Which image shows the cat?",
                             answer=["IMG_2.jpg", "img_1"]), window("fm", ("D1", {"D1:1"})))
    assert fm.answer == ["img_2", "img_1"] and fm.label == "img_2"
    assert fm.question.endswith("Return the image file name in the format img_<number>.")
    fj = validate_item(draft(question="Which? (A) a (B) b (C) c (D) d", answer=["(c)"]),
                       window("fj", ("D1", {"D1:1"})))
    assert fj.answer == ["C"]
    assert fj.question.endswith("Output only the letter of the correct option (A, B, C, or D).")


def test_window_sampling_follows_each_type_and_the_seed():
    ss = sessions()
    for seed in range(20):
        ms = sample_window("ms", ss, random.Random(seed), "w")
        assert len(ms.parts) >= 2
        assert [p[0].session_id for p in ms.parts] == sorted(
            (p[0].session_id for p in ms.parts), key=lambda s: int(s[1:]))
        fm = sample_window("fm", ss, random.Random(seed), "w")
        assert "D1:1" in fm.rounds  # the only round with two images
        single = sample_window("ss", ss, random.Random(seed), "w")
        assert len(single.parts) == 1
    assert (sample_window("tr", ss, random.Random(5), "w").render()
            == sample_window("tr", ss, random.Random(5), "w").render())
    one_session = ss[:1]
    assert sample_window("ms", one_session, random.Random(0), "w") is None


def test_bank_keeps_valid_items_and_documents_rejections(scripted):
    bad_batch = json.dumps([
        {"question": "Outside?", "answer": ["x"], "supporting_facts": "D9:9"},
        {"question": "No facts?", "answer": ["x"], "supporting_facts": []},
    ])
    backend = scripted({"questions.ss": ["sorry, no", bad_batch]})
    bank, rejected = generate_questions(sessions(), backend, {"ss": 2, "fm": 1, "ms": 1},
                                        seed=1, images_dir="/nowhere", retries=0)
    counts = {t: sum(q.type == t for q in bank) for t in ("ss", "fm", "ms")}
    assert counts == {"ss": 2, "fm": 1, "ms": 1}
    reasons = [(r.type, r.reason) for r in rejected]
    assert reasons[0][0] == "ss" and "malformed backend output" in reasons[0][1]
    # the second batch's items are judged one by one
    assert reasons[1:3] == [
        ("ss", "supporting facts ['D9:9'] fall outside the sampled window"),
        ("ss", ("malformed item: supporting_facts: List should have at least 1 item after "
                "validation, not 0"))]
    fm = next(q for q in bank if q.type == "fm")
    assert fm.supporting_facts == "D1:1" and set(fm.answer) == {"img_1", "img_2"}
    fm_call = next(c for c in backend.calls if c.stage == "questions.fm")
    # the generator sees the window's images (D1:1..D1:3 around the two-image round)
    assert [p.name for p in fm_call.images] == ["img_1.jpg", "img_2.jpg"]


def test_invalid_items_in_a_batch_are_dropped_one_by_one(scripted):
    batch = json.dumps([
        {"question": "Outside?", "answer": ["x"], "supporting_facts": "D9:9"},
        {"question": "Fine?", "answer": ["y"], "supporting_facts": "D1:1"},
    ])
    ss = [sessions()[0]]
    backend = scripted({"questions.ss": [batch]})
    bank, rejected = generate_questions(ss, backend, {"ss": 1}, seed=0, images_dir="/x")
    assert [q.question for q in bank] == ["Fine?"]
    assert [(r.question, r.reason) for r in rejected] == [
        ("Outside?", "supporting facts ['D9:9'] fall outside the sampled window")]


def test_resuming_a_partial_bank_tops_it_up_without_duplicates(scripted):
    first, _ = generate_questions(sessions(), scripted(), {"tr": 1}, seed=3,
                                  images_dir="/x")
    bank, rejected = generate_questions(sessions(), scripted(), {"tr": 3}, seed=3,
                                        images_dir="/x", existing=first)
    assert bank[0] == first[0] and len(bank) == 3
    assert len({q.question for q in bank}) == 3
    assert any("duplicate" in r.reason for r in rejected)


def doc_sessions():
    ss = sessions()
    d2 = ss[1].dialogues
    d2[2] = d2[2].model_copy(update={"pdf_file": ["labs.pdf#2"]})
    return ss


def test_mr_windows_centre_on_image_or_document_rounds():
    ss = doc_sessions()
    documents = {"D2:3": "Attached document labs.pdf (pages 2):\n[page 2]\nSodium 151 mmol/L"}
    drawn = {}
    for seed in range(30):
        w = sample_window("mr", ss, random.Random(seed), "w", documents)
        drawn.setdefault(w.modality, w)
        if w.modality == "document":
            assert w.focus == "D2:3" and w.documents == documents
            assert "    [page 2]\n    Sodium 151 mmol/L" in w.render()
        else:
            assert w.focus in ("D1:1", "D2:2")
    assert set(drawn) == {"image", "document"}
    # fm stays with images; a window that does not show the document round carries no text
    assert sample_window("fm", ss, random.Random(0), "w", documents).documents == {}
    doc = drawn["document"]
    no_doc = next(r for r in doc.rounds if r != "D2:3")
    with pytest.raises(ValueError, match="over a document cites the document round"):
        validate_item(draft(answer=["151 mmol/L"], facts=[no_doc]), doc)
    item = validate_item(draft(answer=["151 mmol/L"], facts=["D2:3"]), doc)
    assert item.supporting_facts == "D2:3"
    # an image-centred window accepts a document round as the multimodal evidence too
    image_window = Window("w", "mr", ((ss[1], tuple(ss[1].dialogues[1:])),),
                          focus="D2:2", modality="image")
    assert validate_item(draft(answer=["151 mmol/L"], facts=["D2:3"]), image_window).type == "mr"


def test_the_bank_reads_document_pages_into_windows_and_cites_the_document(tmp_path, scripted):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    write_text_pdf(pdfs / "labs.pdf", ["Potassium 3.1 mmol/L",
                                       "Sodium 151 mmol/L\nFluids 60 mg/kg"])
    backend = scripted()
    bank, rejected = generate_questions(doc_sessions(), backend, {"mr": 6}, seed=0,
                                        images_dir=str(tmp_path / "images"),
                                        pdfs_dir=str(pdfs), pages_dir=str(tmp_path / "pages"))
    assert rejected == [] and len(bank) == 6
    over_doc = [q for q in bank if q.supporting_facts == "D2:3"]
    # only page 2 was attached ("labs.pdf#2"): answers come from it, never from page 1
    assert over_doc and {q.answer[0] for q in over_doc} <= {"151 mmol/L", "60 mg/kg"}
    doc_call = next(c for c in backend.calls if "Focus: the document" in c.prompt)
    assert "Focus: the document attached to round D2:3; ask about its pages" in doc_call.prompt
    assert "Potassium" not in doc_call.prompt
    assert [p.suffix for p in doc_call.images if p.parent.name == "pages"] == [".png"]
