import json
from datetime import date

import pytest

from m3kit.benchmarks.m3exam.construct import SynthesisError
from m3kit.benchmarks.m3exam.construct.documents import (
    assign_documents,
    document_text,
    entry_pages,
    load_document_pool,
)
from m3kit.benchmarks.m3exam.construct.records import TimelineEvent
from m3kit.media.pdf import write_text_pdf


def event(index, description, keyword):
    return TimelineEvent(index=index, description=description, query="asks about it",
                         date=date(2023, 9, index), keyword=keyword, kind="core")


EVENTS = [event(1, "Vaccination day for the puppy", "vaccine"),
          event(2, "A blocked cat needs a urinary catheter", "urinary catheter"),
          event(3, "Buying snacks at the market", "snacks"),
          event(4, "Quiet evening at home", "evening")]


@pytest.fixture
def pool_dir(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    write_text_pdf(folder / "cath#notes.pdf", ["Urinary catheter care\nFlush every 6 hours"])
    write_text_pdf(folder / "vaccines.pdf", [f"Vaccine schedule page {i}" for i in range(1, 7)])
    write_text_pdf(folder / "zzz.pdf", ["Lorem ipsum dolor"])
    (folder / "damaged.pdf").write_bytes(b"%PDF-1.4\nnot a real document")
    (folder / "notes.txt").write_text("not a PDF, not looked at")
    (folder / "descriptions.json").write_text(json.dumps({"zzz.pdf": "An unrelated memo"}))
    return folder


def test_pool_reads_text_and_descriptions_and_reports_a_damaged_pdf(pool_dir):
    pool, skipped = load_document_pool(pool_dir, max_pages=2)
    assert [d.path.name for d in pool] == ["cath#notes.pdf", "vaccines.pdf", "zzz.pdf"]
    assert [d.page_count for d in pool] == [1, 6, 1]
    # text of the pages a round would show (2 of 6), which the matching reads
    assert pool[1].text == "[page 1]\nVaccine schedule page 1\n[page 2]\nVaccine schedule page 2"
    assert pool[2].description == "An unrelated memo" and pool[0].description is None
    assert len(skipped) == 1 and "damaged.pdf" in skipped[0]
    with pytest.raises(SynthesisError, match="document pool is not a folder"):
        load_document_pool(pool_dir / "missing", max_pages=2)


def test_documents_go_to_the_events_their_text_matches(pool_dir, tmp_path):
    pool, _ = load_document_pool(pool_dir, max_pages=4)
    out = tmp_path / "pdfs"
    assigned = assign_documents(EVENTS, pool, out, per_event=1, max_pages=4, seed=0)
    by_event = {k: [(d.file, d.entries()) for d in v] for k, v in assigned.items()}
    # catheter notes → the blocked-cat event ('#' would split the loader's entry: replaced);
    # the vaccine schedule → vaccination day, 4 of its 6 pages as page entries; the memo
    # overlaps nothing and lands on a free event (3 or 4), drawn by the seed
    assert by_event[2] == [("cath_notes.pdf", ["cath_notes.pdf"])]
    assert by_event[1] == [("vaccines.pdf", [f"vaccines.pdf#{i}" for i in range(1, 5)])]
    assert set(by_event) - {1, 2} in ({3}, {4})
    assert sorted(p.name for p in out.iterdir()) == ["cath_notes.pdf", "vaccines.pdf",
                                                     "zzz.pdf"]
    memo = next(d for k, v in assigned.items() if k not in (1, 2) for d in v)
    assert memo.description == "An unrelated memo"
    assert assigned[2][0].description == "Urinary catheter care"  # first line of its text
    assert assigned == assign_documents(EVENTS, pool, tmp_path / "again", per_event=1,
                                        max_pages=4, seed=0)
    # more documents than the timeline holds: the rest stay unused
    one = assign_documents(EVENTS[:1], pool, tmp_path / "one", per_event=1, max_pages=4,
                           seed=0)
    assert [d.file for d in one[1]] == ["vaccines.pdf"]


def test_document_text_is_bounded_and_entries_read_back(tmp_path):
    pdf = write_text_pdf(tmp_path / "long.pdf", ["A" * 80, "B" * 80, ""])
    # "[page 1]\n" (9) + 80 + "\n" + "[page 2]\n" (9) + 80 = 179 characters in all
    assert len(document_text(pdf, [0, 1])) == 179
    cut = document_text(pdf, [0, 1], limit=50)
    assert cut == "[page 1]\n" + "A" * 41 + " [...]"
    assert document_text(pdf, [2]) == "[page 3]\n(no text layer: a scanned page)"
    assert entry_pages("long.pdf#2", tmp_path) == (pdf, [1])
    assert entry_pages("long.pdf", tmp_path) == (pdf, [0, 1, 2])
