import json
from datetime import date

import pytest
from PIL import Image

from m3kit.benchmarks.m3exam.construct import (
    BackendRequest,
    PersonaSpec,
    SynthesisConfig,
    SynthesisError,
    synthesize,
)
from m3kit.benchmarks.m3exam.load import load_m3exam
from m3kit.media.pdf import pdf_page_text, write_text_pdf

SPEC = PersonaSpec(name="Alex_Vet", persona="Alex, head clinician of a pet hospital.",
                   core_event="A run of hard cases with sick cats.",
                   start_date=date(2023, 9, 5), n_core_events=4, n_distractor_events=2)
CONFIG = SynthesisConfig(seed=7, images_per_event=2, rounds_per_event=2,
                         questions={t: 2 for t in ("ss", "ms", "tr", "mr", "fm", "th", "ii",
                                                   "fj")})


@pytest.fixture
def pool(tmp_path):
    folder = tmp_path / "pool"
    folder.mkdir()
    colors = ["red", "green", "blue", "gray", "white", "black", "orange", "purple", "pink",
              "brown", "yellow", "cyan"]
    for i, color in enumerate(colors):
        Image.new("RGB", (16, 12), color).save(folder / f"photo_{i:02d}.jpg")
    # half the pool comes described; the other half is captioned by the backend
    (folder / "descriptions.json").write_text(json.dumps(
        {f"photo_{i:02d}.jpg": f"A sick cat on a {c} blanket" for i, c in
         enumerate(colors[:6])}))
    return folder


class Refusing:
    """The scripted model again, which must not be called (every stage is already written, every
    call is in the transcript; the call cache is keyed by the model's name)."""

    name = "scripted"

    def complete(self, request: BackendRequest) -> str:
        raise AssertionError(f"unexpected call {request.stage} {request.item}")


def test_pipeline_writes_the_released_layout_that_the_loader_reads_back(tmp_path, pool, scripted):
    backend = scripted({"dialogue.chunk_audit": [json.dumps({"flags": [
        {"target": "D1:2", "category": "hallucination", "problem": "invents a dose"}]})]})
    stages = []
    result = synthesize(SPEC, backend, tmp_path / "out", config=CONFIG, image_pool=pool,
                        progress=lambda stage, done, total: stages.append(stage))
    out = tmp_path / "out" / "Alex_Vet"
    assert result.out_dir == out
    # 4 core + 2 distractor events, 2 rounds each, 2 images each from a 12-image pool
    assert (result.events, result.rounds, result.images) == (6, 12, 12)
    assert result.questions == {t: 2 for t in CONFIG.questions}
    assert result.qc_edits == 1
    assert list(dict.fromkeys(stages)) == ["timeline", "images", "dialogue", "audit",
                                           "questions"]
    assert sorted(p.name for p in (out / "images").iterdir()) == sorted(
        f"img_{i}.jpg" for i in range(1, 13))
    timeline = json.loads((out / "timeline_Alex_Vet.json").read_text())
    assert len(timeline) == 7 and timeline[0]["Event_Type"] == "Persona"
    sessions = json.loads((out / "sessions.json").read_text())
    first = sessions[0]["dialogues"][0]
    assert set(first) == {"round", "user", "assistant", "img_file", "img_id",
                          "img_description"}
    assert sessions[0]["dialogues"][1]["user"] == "Repaired question D1:2"
    captions = [d for s in sessions for r in s["dialogues"] for d in r.get("img_description", [])]
    assert sum(c.startswith("A photo named photo_") for c in captions) == 6
    # every question cites rounds that exist, in the released question layout
    questions = json.loads((out / "question.json").read_text())
    ids = {r["round"] for s in sessions for r in s["dialogues"]}
    for q in questions:
        assert set(q) == {"question", "answer", "label", "supporting_facts", "type"}
        assert set(q["supporting_facts"].split(",")) <= ids
        assert q["label"] == q["answer"][0]

    data = load_m3exam(out)
    assert data.skipped == []
    conversation = data.conversations["Alex_Vet"]
    assert len(conversation.sessions) == len(sessions)
    assert len(data.questions) == 16
    assert data.questions[0].id == "Alex_Vet/0"
    fm = [q for q in data.questions if q.question_type == "fm"]
    assert fm and all(q.answer.startswith("img_") for q in fm)


def test_rerun_skips_finished_stages_and_a_killed_run_resumes_identically(tmp_path, pool, scripted):
    synthesize(SPEC, scripted(), tmp_path / "a", config=CONFIG, image_pool=pool)
    a = tmp_path / "a" / "Alex_Vet"
    files = {n: (a / n).read_text() for n in ("timeline_Alex_Vet.json", "sessions.json",
                                              "question.json")}
    # a rerun has nothing left to do: no backend call at all
    synthesize(SPEC, Refusing(), tmp_path / "a", config=CONFIG, image_pool=pool)
    assert {n: (a / n).read_text() for n in files} == files

    # a run killed in the dialogue stage: rounds.jsonl half written, no sessions.json or bank
    (a / "sessions.json").unlink()
    (a / "question.json").unlink()
    rounds = (a / "_synthesis" / "rounds.jsonl").read_text().splitlines()
    (a / "_synthesis" / "rounds.jsonl").write_text("\n".join(rounds[:5]) + '\n{"round": "D')
    synthesize(SPEC, Refusing(), tmp_path / "a", config=CONFIG, image_pool=pool)
    assert {n: (a / n).read_text() for n in files} == files

    # the same seed in a fresh folder makes the same dataset
    synthesize(SPEC, scripted(), tmp_path / "b", config=CONFIG, image_pool=pool)
    b = tmp_path / "b" / "Alex_Vet"
    assert {n: (b / n).read_text() for n in files} == files


def test_a_folder_of_another_spec_is_refused_but_a_bank_can_grow(tmp_path, pool, scripted):
    small = CONFIG.model_copy(update={"questions": {"ss": 1}})
    synthesize(SPEC, scripted(), tmp_path, config=small, image_pool=pool)
    bank = tmp_path / "Alex_Vet" / "question.json"
    assert len(json.loads(bank.read_text())) == 1
    result = synthesize(SPEC, scripted(), tmp_path, config=CONFIG, image_pool=pool)
    assert result.questions == {t: 2 for t in CONFIG.questions}
    with pytest.raises(SynthesisError, match="another persona spec"):
        synthesize(SPEC, scripted(), tmp_path, image_pool=pool,
                   config=CONFIG.model_copy(update={"rounds_per_event": 3}))


def test_without_images_the_image_types_are_reported_unsupported(tmp_path, scripted):
    result = synthesize(SPEC, scripted(), tmp_path, config=CONFIG.model_copy(
        update={"questions": {"ss": 1, "mr": 1, "fm": 1}}))
    assert result.questions == {"ss": 1}
    rejected = json.loads((tmp_path / "Alex_Vet" / "_synthesis" /
                           "rejected_questions.json").read_text())
    assert [(r["type"], r["reason"]) for r in rejected] == [
        ("mr", "the dataset cannot support this type"),
        ("fm", "the dataset cannot support this type")]


LAB_PAGES = ["Bloodwork for Miso the cat\nPotassium 3.1 mmol/L\nCreatinine 2.4 mg/dL",
             "Plan\nFluids 60 mg/kg daily\nRecheck in 14 days"]


@pytest.fixture
def documents(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    # a two-page lab report about a sick cat (matches the cat events), a six-page snack
    # leaflet (matches the snack errands; only its first four pages are shown), a damaged file
    write_text_pdf(folder / "lab report.pdf", LAB_PAGES)
    write_text_pdf(folder / "snacks.pdf",
                   [f"Side errand snacks page {i}\nPrice {i}.5 kg bag" for i in range(1, 7)])
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    return folder


def test_documents_round_trip_through_the_loader(tmp_path, pool, documents, scripted):
    config = CONFIG.model_copy(update={"questions": {"mr": 4, "ss": 1}, "max_document_pages": 4})
    backend = scripted()
    result = synthesize(SPEC, backend, tmp_path / "out", config=config, image_pool=pool,
                        document_pool=documents)
    out = tmp_path / "out" / "Alex_Vet"
    assert result.documents == 2
    assert len(result.skipped_documents) == 1 and "broken.pdf" in result.skipped_documents[0]
    # the PDF name loses its space (the loader splits entries at '#'); snacks shows 4 of 6
    assert sorted(p.name for p in (out / "pdfs").iterdir()) == ["lab_report.pdf", "snacks.pdf"]
    sessions = json.loads((out / "sessions.json").read_text())
    rounds = {r["round"]: r for s in sessions for r in s["dialogues"]}
    with_docs = {rid: r["pdf_file"] for rid, r in rounds.items() if "pdf_file" in r}
    assert sorted(with_docs.values()) == [["lab_report.pdf"],
                                          [f"snacks.pdf#{i}" for i in range(1, 5)]]
    # a document event carries its document instead of pool images: 6 events, 2 with a
    # document, 2 images each for the other 4
    assert result.images == 8
    assert not any("img_file" in rounds[rid] for rid in with_docs)
    lab_round = next(rid for rid, files in with_docs.items() if files == ["lab_report.pdf"])
    # the user quotes the pages; the assistant saw their text and the rendered pages
    assert "3.1 mmol/L" in rounds[lab_round]["user"]
    assistant_call = next(c for c in backend.calls
                          if (c.stage, c.item) == ("dialogue.assistant", lab_round))
    assert "Fluids 60 mg/kg daily" in assistant_call.prompt
    assert "using only the document's visible pages" in assistant_call.prompt
    assert [p.suffix for p in assistant_call.images] == [".png", ".png"]

    data = load_m3exam(out)
    assert data.skipped == []
    loaded = {r.id: r for r in data.conversations["Alex_Vet"].iter_rounds()}
    pages = [(a.media.page, a.id) for a in loaded[lab_round].attachments]
    assert pages == [(0, "lab_report.pdf#page=1"), (1, "lab_report.pdf#page=2")]
    assert [pdf_page_text(a.media.path, a.media.page)
            for a in loaded[lab_round].attachments] == LAB_PAGES

    mr = [q for q in data.questions if q.question_type == "mr"]
    assert len(mr) == 4
    over_docs = [q for q in mr if set(q.evidence) & set(with_docs)]
    assert over_docs, "no mr item was drawn over a document"
    for q in over_docs:
        doc_round = loaded[next(r for r in q.evidence if r in with_docs)]
        page_text = "\n".join(pdf_page_text(a.media.path, a.media.page)
                              for a in doc_round.attachments)
        # the gold is read off the pages and is not in the dialogue text
        assert q.answer in page_text
        assert q.answer not in f"{doc_round.text} {doc_round.response}"

    # a rerun has everything written: no call, same files
    before = (out / "sessions.json").read_text()
    synthesize(SPEC, Refusing(), tmp_path / "out", config=config, image_pool=pool,
               document_pool=documents)
    assert (out / "sessions.json").read_text() == before
