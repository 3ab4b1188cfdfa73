"""A synthesized M3Exam persona folder (and the released Alex_Veterinarian) as a review source:
its items (supporting rounds, their images and PDF pages, the synthesis's checks) and an export
that ``load_m3exam`` reads with no skip."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from types import ModuleType

import pytest
from PIL import Image

from m3kit.benchmarks.m3exam.construct import PersonaSpec, SynthesisConfig, synthesize
from m3kit.benchmarks.m3exam.construct.review_source import open_review_source
from m3kit.benchmarks.m3exam.load import load_m3exam
from m3kit.errors import SchemaError
from m3kit.media.pdf import write_text_pdf
from m3kit.schema.review import (
    ItemEdit,
    ReviewDecision,
    ReviewItem,
    ReviewSource,
    ReviewVerdict,
)

SPEC = PersonaSpec(name="Alex_Vet", persona="Alex, head clinician of a pet hospital.",
                   core_event="A run of hard cases with sick cats.",
                   start_date=date(2023, 9, 5), n_core_events=4, n_distractor_events=2)
CONFIG = SynthesisConfig(seed=7, images_per_event=2, rounds_per_event=2,
                         questions={"ss": 2, "ms": 1, "mr": 3, "fm": 2, "th": 1})
COLORS = ["red", "green", "blue", "gray", "white", "black", "orange", "purple"]


@pytest.fixture(scope="module")
def persona(tmp_path_factory: pytest.TempPathFactory, fake: ModuleType) -> Path:
    """``m3kit m3exam synthesize`` with the scripted model, an image pool and a document pool
    (a two-page lab report about the cat events), an audit flag on D3:1 that becomes a QC
    edit."""
    base = tmp_path_factory.mktemp("m3exam_review")
    pool = base / "pool"
    pool.mkdir()
    for i, color in enumerate(COLORS):
        Image.new("RGB", (16, 12), color).save(pool / f"photo_{i:02d}.jpg")
    docs = base / "docs"
    docs.mkdir()
    write_text_pdf(docs / "lab report.pdf", ["Lab report: sick cat\nPotassium 3.1 mmol/L",
                                             "Plan\nFluids 60 mg/kg daily"])
    backend = fake.ScriptedBackend({"dialogue.chunk_audit": [json.dumps({"flags": [
        {"target": "D3:1", "category": "hallucination", "problem": "invents a dose"}]})] * 2})
    synthesize(SPEC, backend, base / "out", config=CONFIG, image_pool=pool,
               document_pool=docs)
    return base / "out" / "Alex_Vet"


def _decision(item_id: str, verdict: ReviewVerdict, reason: str = "",
              edit: ItemEdit | None = None) -> ReviewDecision:
    return ReviewDecision(item_id=item_id, verdict=verdict, reason=reason,
                          edit=edit or ItemEdit(), reviewer="tester",
                          at=datetime(2025, 1, 2, 3, 4, tzinfo=UTC))


def _items(root: Path) -> list[ReviewItem]:
    source = open_review_source(root)
    assert source is not None
    return source.items()


def test_only_a_persona_folder_is_a_source(persona: Path, tmp_path: Path) -> None:
    source = open_review_source(persona)
    assert isinstance(source, ReviewSource)
    assert source.benchmark == "m3exam" and source.root == persona
    assert open_review_source(persona.parent) is None  # the folder above the persona
    assert open_review_source(tmp_path) is None


def test_items_show_the_supporting_rounds_and_their_media(persona: Path) -> None:
    items = _items(persona)
    questions = json.loads((persona / "question.json").read_text())
    assert [i.id for i in items] == [f"q{n}" for n in range(len(questions))]
    for item, raw in zip(items, questions, strict=True):
        assert item.group == "Alex_Vet" and item.options == ()
        assert item.question == raw["question"] and item.answer == raw["answer"][0]
        facts = dict(item.facts)
        assert facts["type"].startswith(raw["type"] + ": ")
        assert facts["supporting facts"] == raw["supporting_facts"].replace(",", ", ")
        # one evidence text per supporting round, with its dialogue
        cited = raw["supporting_facts"].split(",")
        assert [e.split(" ", 1)[0] for e in item.evidence] == cited
        assert all("User: " in e and "Assistant: " in e for e in item.evidence)
        for media in item.media:
            assert (persona / media.path).is_file()
            assert media.path.startswith("images/" if media.kind == "image" else "pdfs/")
        checks = {c.name: c for c in item.checks}
        assert checks["supporting rounds"].passed is True
        assert checks[f"type rule ({raw['type']})"].passed is True  # the synthesis kept it
    images = [i for i in items if any(m.kind == "image" for m in i.media)]
    assert images, "no question shows an image"
    pages = [m for i in items for m in i.media if m.kind == "pdf_page"]
    assert pages, "no mr question was drawn over the document"
    assert {(m.path, m.page) for m in pages} == {("pdfs/lab_report.pdf", 0),
                                                 ("pdfs/lab_report.pdf", 1)}
    fm = next(i for i in items if dict(i.facts)["type"].startswith("fm"))
    shown = {Path(m.path).stem for m in fm.media}
    assert fm.answer in shown  # the gold image and its candidates are on screen


def test_a_qc_edit_of_a_cited_round_is_a_check(persona: Path) -> None:
    edits = json.loads((persona / "_synthesis" / "dialogue_qc.json").read_text())
    assert [e["target"] for e in edits] == ["D3:1"]
    citing = 0
    for item in _items(persona):
        qc = [c for c in item.checks if c.name.startswith("QC edit")]
        cites = "D3:1" in dict(item.facts)["supporting facts"].split(", ")
        assert len(qc) == (1 if cites else 0)
        if cites:
            citing += 1
            assert qc[0].passed is None
            assert "hallucination: invents a dose" in qc[0].rationale
            assert "Repaired question D3:1" in qc[0].rationale
    assert citing > 0


def test_export_holds_exactly_the_accepted_questions_with_their_edits(
    persona: Path, tmp_path: Path
) -> None:
    items = _items(persona)
    accepted, rejected, *rest = items
    decisions = {
        accepted.id: _decision(accepted.id, "accepted", edit=ItemEdit(
            question="What did Alex note first?", answer="a sick cat")),
        rejected.id: _decision(rejected.id, "rejected", reason="answer not in the round"),
    }
    source = open_review_source(persona)
    assert source is not None
    out = tmp_path / "export"
    result = source.export(decisions, out)
    assert (result.exported, result.rejected, result.pending) == (1, 1, len(rest))
    assert (result.loaded, result.skipped) == (1, [])
    data = load_m3exam(out)
    (question,) = data.questions
    assert question.id == "Alex_Vet/0"  # the persona keeps its name: OUT/<persona>/
    assert question.text == "What did Alex note first?" and question.answer == "a sick cat"
    assert question.metadata["label"] == "a sick cat"
    # media folders are links to the source's; the generated files are untouched
    assert (out / "Alex_Vet" / "images").is_symlink()
    assert not (out / "Alex_Vet" / "_synthesis").exists()
    assert _items(persona) == items
    # an earlier export is replaced whole by the next one; the generated files stay untouched
    again = source.export(decisions, out)
    assert (again.loaded, again.skipped) == (1, []) and len(load_m3exam(out).questions) == 1
    with pytest.raises(SchemaError, match="no options"):
        source.export({accepted.id: _decision(accepted.id, "accepted",
                                              edit=ItemEdit(options={"A": "x"}))},
                      tmp_path / "bad")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]


def test_an_export_with_nothing_accepted_says_so(persona: Path, tmp_path: Path) -> None:
    source = open_review_source(persona)
    assert source is not None
    result = source.export({}, tmp_path / "none")
    assert (result.exported, result.loaded) == (0, 0)
    assert len(result.skipped) == 1 and "no question" in result.skipped[0].reason


def test_the_released_persona_round_trips(m3exam_persona: Path, tmp_path: Path) -> None:
    """Alex_Veterinarian: every question an item with its images; an export of a few is read
    back whole (into ``tmp_path``: nothing is written beside the shared data)."""
    persona = m3exam_persona
    items = _items(persona)
    assert len(items) == len(json.loads((persona / "question.json").read_text()))
    assert all((persona / m.path).is_file() for i in items for m in i.media)
    assert sum(bool(i.media) for i in items) > 0
    keep = [items[0], items[-1]]
    decisions = {i.id: _decision(i.id, "accepted") for i in keep}
    decisions[items[1].id] = _decision(items[1].id, "rejected", reason="duplicate")
    source = open_review_source(persona)
    assert source is not None
    result = source.export(decisions, tmp_path / "export")
    assert (result.exported, result.rejected, result.loaded, result.skipped) == (2, 1, 2, [])
    texts = [q.text for q in load_m3exam(tmp_path / "export").questions]
    assert texts == [i.question for i in keep]


def test_an_edit_the_layout_refuses_is_named_when_saved(persona: Path) -> None:
    source = open_review_source(persona)
    assert source is not None
    first = _items(persona)[0]
    assert "no options" in (source.check_edit(first.id, ItemEdit(options={"A": "x"})) or "")
    assert source.check_edit(first.id, ItemEdit(answer="a sick dog")) is None
    assert source.check_edit("q999", ItemEdit()) == "no item 'q999'"
