"""The review app over the synthetic egocentric suite, through Starlette's test client: the
list and its progress, decisions saved atomically with who and when, a rejection without a
reason refused, media served from the source's root only (with Range requests), the export
read back by the benchmark's loader with zero skips."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from m3kit.benchmarks.supermemory.load import load_supermemory
from m3kit.review import open_review
from m3kit.review.store import DECISIONS_FILE, HISTORY_FILE, DecisionStore
from m3kit.schema.review import REVIEW_DIR, ReviewDecision


@pytest.fixture
def client(suite_root: Path) -> TestClient:
    return TestClient(open_review(suite_root, "ann"), base_url="http://127.0.0.1")


def test_list_and_progress(client: TestClient) -> None:
    data = client.get("/api/items").json()
    assert data["benchmark"] == "supermemory" and data["reviewer"] == "ann"
    assert data["progress"] == {"reviewed": 0, "total": 30, "accepted": 0, "rejected": 0,
                                "pending": 30}
    assert {item["verdict"] for item in data["items"]} == {"pending"}
    item = client.get("/api/items/1").json()["item"]
    assert [o["role"] for o in item["options"]] == ["incorrect", "abstain", "correct", "vague"]
    assert client.get("/api/items/nope").status_code == 404
    page = client.get("/")
    assert page.status_code == 200 and "m3kit review" in page.text
    for static in ("/", "/static/app.js", "/static/app.css"):  # nothing from the internet
        assert "://" not in client.get(static).text


def test_decision_saved_with_who_and_when(client: TestClient, suite_root: Path) -> None:
    generated = (suite_root / "data/json/all_qa.json").read_bytes()
    reply = client.post("/api/items/1/decision", json={
        "verdict": "accepted", "edit": {"options": {"A": "Edited text"}}})
    assert reply.status_code == 200, reply.text
    assert reply.json()["progress"]["reviewed"] == 1
    client.post("/api/items/2/decision", json={"verdict": "accepted", "reviewer": "bob"})
    stored = json.loads((suite_root / REVIEW_DIR / DECISIONS_FILE).read_text())["decisions"]
    assert stored["1"]["reviewer"] == "ann" and stored["1"]["at"]
    assert stored["1"]["edit"]["options"] == {"A": "Edited text"}
    assert stored["2"]["reviewer"] == "bob"
    history = (suite_root / REVIEW_DIR / HISTORY_FILE).read_text().splitlines()
    assert len(history) == 2
    assert (suite_root / "data/json/all_qa.json").read_bytes() == generated
    listed = {i["id"]: i for i in client.get("/api/items").json()["items"]}
    assert listed["1"]["edited"] and listed["1"]["verdict"] == "accepted"


def test_reject_needs_a_reason_and_edits_are_checked(client: TestClient,
                                                      suite_root: Path) -> None:
    assert client.post("/api/items/3/decision", json={"verdict": "rejected"}).status_code == 400
    assert client.post("/api/items/3/decision",
                       json={"verdict": "rejected", "reason": "  "}).status_code == 400
    assert client.post("/api/items/3/decision", json={
        "verdict": "accepted", "edit": {"options": {"Z": "x"}}}).status_code == 400
    assert client.post("/api/items/3/decision", json={
        "verdict": "accepted", "edit": {"answer": "Q"}}).status_code == 400
    # an edit the released format refuses is refused when saved, not first at export: the
    # abstain option renamed (the loader finds it by its text), another option made a second
    options = client.get("/api/items/3").json()["item"]["options"]
    abstain = next(o["letter"] for o in options if o["role"] == "abstain")
    other = next(o["letter"] for o in options if o["role"] != "abstain")
    for edit in ({abstain: "Cannot tell from the recordings"}, {other: "N/A"}):
        refused = client.post("/api/items/3/decision", json={
            "verdict": "accepted", "edit": {"options": edit}})
        assert refused.status_code == 400 and "abstain" in refused.json()["detail"]
    assert not (suite_root / REVIEW_DIR / DECISIONS_FILE).exists()
    ok = client.post("/api/items/3/decision", json={"verdict": "rejected", "reason": "vague"})
    assert ok.status_code == 200 and ok.json()["decision"]["reason"] == "vague"


def test_cross_site_posts_and_foreign_hosts_are_refused(client: TestClient) -> None:
    evil = client.post("/api/items/1/decision", json={"verdict": "accepted"},
                       headers={"Origin": "http://evil.example"})
    assert evil.status_code == 403
    same = client.post("/api/items/1/decision", json={"verdict": "accepted"},
                       headers={"Origin": "http://127.0.0.1"})
    assert same.status_code == 200
    assert client.get("/api/items", headers={"Host": "evil.example"}).status_code == 400


@pytest.mark.parametrize("path", [
    "/media/..%2F..%2Fetc%2Fpasswd",
    "/media/data/..%2F..%2F..%2Fetc%2Fpasswd",
    "/media/%2Fetc%2Fpasswd",
    "/media//etc/passwd",
    "/pdf/..%2Fsecret.pdf?page=0",
])
def test_media_outside_the_root_is_refused(client: TestClient, path: str) -> None:
    assert client.get(path).status_code in (403, 404)
    assert "root:" not in client.get(path).text


def test_a_link_out_of_the_root_is_refused(client: TestClient, suite_root: Path,
                                           tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, suite_root / "data" / "link.txt")
    reply = client.get("/media/data/link.txt")
    assert reply.status_code == 403 and "secret" not in reply.text


def test_range_request_returns_206(client: TestClient, suite_root: Path) -> None:
    path = "data/video/Person_1/P1_D1.mp4"
    size = (suite_root / path).stat().st_size
    whole = client.get(f"/media/{path}")
    assert whole.status_code == 200 and len(whole.content) == size
    part = client.get(f"/media/{path}", headers={"Range": "bytes=100-199"})
    assert part.status_code == 206
    assert part.headers["content-range"] == f"bytes 100-199/{size}"
    assert part.content == (suite_root / path).read_bytes()[100:200]


def test_export_loads_with_zero_skips(client: TestClient, suite_root: Path) -> None:
    ids = [i["id"] for i in client.get("/api/items").json()["items"]]
    client.post(f"/api/items/{ids[0]}/decision", json={"verdict": "rejected", "reason": "no"})
    client.post(f"/api/items/{ids[1]}/decision", json={
        "verdict": "accepted", "edit": {"question": "Edited question?", "answer": "D"}})
    for qid in ids[2:-1]:
        client.post(f"/api/items/{qid}/decision", json={"verdict": "accepted"})
    result = client.post("/api/export", json={}).json()
    assert result["exported"] == 28 and result["loaded"] == 28
    assert result["rejected"] == 1 and result["pending"] == 1 and result["skipped"] == []
    out = Path(result["out"])
    assert out == suite_root / REVIEW_DIR / "export"
    loaded = load_supermemory(out)
    assert loaded.skipped == []
    by_id = {q.id: q for q in loaded.questions}
    assert ids[0] not in by_id and ids[-1] not in by_id
    edited = by_id[ids[1]]
    assert edited.text == "Edited question?" and edited.answer == "D"
    # media linked, never copied: the same files as the source's
    video = out / "data/video/Person_1/P1_D1.mp4"
    assert video.stat().st_ino == (suite_root / "data/video/Person_1/P1_D1.mp4").stat().st_ino
    # exporting again replaces the export
    again = client.post("/api/export", json={}).json()
    assert again["exported"] == 28 and again["skipped"] == []


def test_export_refuses_a_folder_it_did_not_write(client: TestClient, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "keep.txt").write_text("mine")
    reply = client.post("/api/export", json={"out": str(other)})
    assert reply.status_code == 422 and "not written over" in reply.json()["detail"]
    assert (other / "keep.txt").read_text() == "mine"


def test_a_decision_on_an_earlier_version_of_an_item_is_pending_again(
        suite_root: Path) -> None:
    # the builder ran again and question 5 is another question now: the reviewer's word on
    # the old one does not carry over, and the list says why it is pending
    DecisionStore(suite_root, "supermemory").record(ReviewDecision(
        item_id="5", item_fingerprint="0123456789abcdef", verdict="accepted", reviewer="ann",
        at=datetime.now(UTC)))
    client = TestClient(open_review(suite_root, "ann"), base_url="http://127.0.0.1")
    listed = {i["id"]: i for i in client.get("/api/items").json()["items"]}
    assert listed["5"]["verdict"] == "pending" and listed["5"]["stale"]
    assert "earlier version" in listed["5"]["reason"]
    assert client.get("/api/items/5").json()["decision"] is None
    client.post("/api/items/6/decision", json={"verdict": "accepted"})
    result = client.post("/api/export", json={}).json()
    assert (result["exported"], result["stale"]) == (1, 1)
    assert client.post("/api/items/5/decision", json={"verdict": "accepted"}).json()[
        "decision"]["item_fingerprint"] != "0123456789abcdef"
