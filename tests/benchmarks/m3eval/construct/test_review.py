"""The review file: written as CSV + HTML, read back as id -> status, statuses kept on rewrite."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval.construct.review import (
    ReviewItem,
    read_review,
    read_review_items,
    review_paths,
    set_status,
    write_review,
)
from m3kit.errors import SchemaError


def _items() -> list[ReviewItem]:
    return [
        ReviewItem(id="q1", paradigm="split_screen", failure_mode="source_confusion",
                   question="Which, with a comma?", options=["A. one", "B. two, \"quoted\""],
                   answer="A", roles={"A": "correct", "B": "source_confusion"}),
        ReviewItem(id="q2", status="rejected", checker="slot_grid: option C differs"),
        ReviewItem(id="q3", question="<b>html</b> & more"),
    ]


def test_write_then_read(tmp_path: Path) -> None:
    csv_path, html_path = write_review(tmp_path, _items())
    assert (csv_path, html_path) == review_paths(tmp_path)
    assert read_review(csv_path) == {"q1": "pending", "q2": "rejected", "q3": "pending"}
    first = read_review_items(csv_path)[0]
    assert first.options == ["A. one", 'B. two, "quoted"']
    assert first.roles == {"A": "correct", "B": "source_confusion"}
    page = html_path.read_text()
    assert "&lt;b&gt;html&lt;/b&gt; &amp; more" in page and "<b>html" not in page
    assert "3 items: 0 accepted, 1 rejected, 2 pending" in page


def test_rewrite_keeps_reviewer_statuses(tmp_path: Path) -> None:
    write_review(tmp_path, _items())
    assert set_status(tmp_path, {"q1": "accepted", "q3": "rejected"}) == 2
    # A new generation run produces q1 again (pending by default) and a new q4; q3 is gone
    # but a reviewer judged it, so it stays. q2 was the generator's own rejection (checker
    # reasons) and the new run did not repeat it: it leaves the file.
    write_review(tmp_path, [ReviewItem(id="q1", question="regenerated"), ReviewItem(id="q4")])
    statuses = read_review(review_paths(tmp_path)[0])
    assert statuses == {"q1": "accepted", "q4": "pending", "q3": "rejected"}


def test_generator_rejections_follow_the_latest_run(tmp_path: Path) -> None:
    """The file's rejected rows are the run's rejections, so the generate summary
    and ``m3kit m3eval review`` count the same."""
    write_review(tmp_path, [
        ReviewItem(id="il-1"),  # passes, a reviewer will accept it
        ReviewItem(id="il-2", status="rejected", checker="slot_grid: option C differs"),
        ReviewItem(id="v1_caption_batch0", status="rejected", checker="not JSON after 3"),
    ])
    set_status(tmp_path, {"il-1": "accepted"})
    # Rerun: il-1 now fails the checker, il-2 now passes, the caption batch succeeded.
    write_review(tmp_path, [
        ReviewItem(id="il-1", status="rejected", checker="order_swap: slot 2 unchanged"),
        ReviewItem(id="il-2"),
    ])
    items = {i.id: i for i in read_review_items(review_paths(tmp_path)[0])}
    assert {k: v.status for k, v in items.items()} == {"il-1": "rejected", "il-2": "pending"}
    assert items["il-1"].checker == "order_swap: slot 2 unchanged"


def test_missing_file_is_an_empty_review(tmp_path: Path) -> None:
    assert read_review(tmp_path / "review" / "review.csv") == {}


def test_bad_status_names_file_row_and_field(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    path.write_text("id,status\nq1,accepted\nq2,acepted\n")
    with pytest.raises(SchemaError) as info:
        read_review(path)
    assert info.value.field == "status" and info.value.record == "q2 (row 3)"
    assert "acepted" in str(info.value)


def test_status_column_is_case_and_blank_tolerant(tmp_path: Path) -> None:
    path = tmp_path / "review.csv"
    path.write_text("id,status,note\nq1, Accepted ,ok\nq2,,\n,accepted,\n")
    assert read_review(path) == {"q1": "accepted", "q2": "pending"}


def test_set_status_refuses_unknown_ids_and_statuses(tmp_path: Path) -> None:
    write_review(tmp_path, _items())
    with pytest.raises(SchemaError, match="no such item"):
        set_status(tmp_path, {"nope": "accepted"})
    with pytest.raises(SchemaError, match="not one of"):
        set_status(tmp_path, {"q1": "maybe"})
