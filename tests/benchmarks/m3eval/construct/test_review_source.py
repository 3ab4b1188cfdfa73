"""A built and generated M3Eval root as a review source: its items (probe videos under the root,
option roles, the checker's verdict) and an export that ``load_m3eval`` reads with no skip."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import m3eval_scripted as scripted  # registered by conftest.py
import pytest

from m3kit.benchmarks.m3eval.construct.generate import GenerationConfig, generate_questions
from m3kit.benchmarks.m3eval.construct.pairing import VideoSource
from m3kit.benchmarks.m3eval.construct.plan import BuildConfig, build_probes
from m3kit.benchmarks.m3eval.construct.review import read_review, read_review_items
from m3kit.benchmarks.m3eval.construct.review_source import open_review_source
from m3kit.benchmarks.m3eval.load import load_m3eval
from m3kit.errors import M3kitError, SchemaError
from m3kit.perception import MiniLMEmbedder
from m3kit.schema.review import (
    ItemEdit,
    ReviewDecision,
    ReviewItem,
    ReviewSource,
    ReviewVerdict,
)

TEXTS = ["A chef dices onions in a home kitchen", "A dog runs on the beach after a ball",
         "A cook chops vegetables and fries them in a pan", "A puppy plays fetch by the sea"]
# Small probes: 2 swaps, 2 interleaved segments, two concatenation orders, K = 2 and 3.
BUILD = BuildConfig(fps=8, swaps=2, interleave_segments=2, interference=["retroactive",
                                                                          "proactive"],
                    nback_clip_seconds=1.0, nback_k=[2, 3])
GENERATE = GenerationConfig(caption_batches=2, frames_per_batch=2, nback_frames_per_clip=2,
                            max_side=64)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory, pattern_video_factory: Callable[..., Path],
         embedder: MiniLMEmbedder) -> Path:
    """``m3kit m3eval build`` + ``generate`` on four tiny videos with the scripted model:
    pair01's drafts are good, most of pair02's are rejected by the checker."""
    sources = [VideoSource(id=f"v{i}", text=t, path=str(pattern_video_factory(
                   seconds=3.0, fps=8.0, width=64, height=48, keyint=8, bframes=0, hue=h)))
               for i, (h, t) in enumerate(zip((0.0, 0.25, 0.5, 0.75), TEXTS, strict=True))]
    root = tmp_path_factory.mktemp("m3eval_review") / "bench"
    build_probes(sources, root, config=BUILD, embedder=embedder)
    backend, _ = scripted.scripted_backend()
    generate_questions(root, backend, config=GENERATE)
    return root


def _items(root: Path) -> dict[str, ReviewItem]:
    source = open_review_source(root)
    assert source is not None
    return {item.id: item for item in source.items()}


def _decision(item_id: str, verdict: ReviewVerdict, reason: str = "",
              edit: ItemEdit | None = None) -> ReviewDecision:
    return ReviewDecision(item_id=item_id, verdict=verdict, reason=reason,
                          edit=edit or ItemEdit(), reviewer="tester",
                          at=datetime(2025, 1, 2, 3, 4, tzinfo=UTC))


def test_only_a_generated_root_is_a_source(root: Path, tmp_path: Path) -> None:
    source = open_review_source(root)
    assert isinstance(source, ReviewSource)
    assert source.benchmark == "m3eval" and source.root == root
    assert open_review_source(tmp_path) is None
    assert open_review_source(tmp_path / "missing") is None


def test_every_released_record_is_an_item_with_its_probe_video(root: Path) -> None:
    items = _items(root)
    statuses = read_review(root / "review" / "review.csv")
    # exactly the records the generator wrote: the pending rows of the review file
    assert set(items) == {i for i, s in statuses.items() if s == "pending"}
    for item in items.values():
        (video,) = item.media
        assert video.kind == "video" and not Path(video.path).is_absolute()
        assert (root / video.path).is_file()
        assert video.start == 0.0 and video.end is not None and video.end > 0
        assert item.answer in {o.letter for o in item.options}
        assert [c.name for c in item.checks] == ["design checker"]
        assert item.checks[0].passed is True and item.checks[0].rationale == "ok"
    paradigms = {dict(i.facts)["paradigm"] for i in items.values()}
    assert paradigms == {"split_screen", "memory_interference", "interleaved", "nback"}


def test_options_carry_the_generators_roles(root: Path) -> None:
    items = list(_items(root).values())
    interference = next(i for i in items if dict(i.facts)["paradigm"] == "memory_interference")
    roles = sorted(o.role for o in interference.options)
    assert roles == ["correct", "intrusion", "intrusion", "irrelevant_distractor"]
    gold = next(o for o in interference.options if o.letter == interference.answer)
    assert gold.role == "correct" and gold.text == "Teal with white dots"
    story = next(i for i in items if dict(i.facts)["failure mode"] == "source_confusion")
    assert sorted(o.role for o in story.options) == ["correct"] + ["source_confusion"] * 3
    assert "Video 1 (" in story.evidence[0]  # the pair's sources from the build plan
    nback = next(i for i in items if dict(i.facts)["paradigm"] == "nback")
    assert [o.text for o in nback.options] == ["Yes", "No"]
    assert {o.role for o in nback.options} == {"correct", "incorrect"}
    assert any(line.startswith("clip 1: ") for line in nback.evidence)
    assert nback.group == "nback01"


def test_export_holds_exactly_the_accepted_items_with_their_edits(root: Path,
                                                                  tmp_path: Path) -> None:
    items = _items(root)
    interference = next(i for i in items.values()
                        if dict(i.facts)["paradigm"] == "memory_interference")
    intrusion = next(o.letter for o in interference.options if o.role == "intrusion")
    nback = next(i for i in items.values() if dict(i.facts)["paradigm"] == "nback")
    rejected = next(i for i in items.values() if dict(i.facts)["paradigm"] == "split_screen")
    flipped = next(o.letter for o in nback.options if o.letter != nback.answer)
    decisions = {
        interference.id: _decision(interference.id, "accepted", edit=ItemEdit(
            question="Which apron did the cook wear?", options={intrusion: "A red apron"},
            answer=intrusion)),
        nback.id: _decision(nback.id, "accepted", edit=ItemEdit(answer=flipped)),
        rejected.id: _decision(rejected.id, "rejected", reason="asks about both sides"),
        "pending-id-unknown": _decision("pending-id-unknown", "accepted"),
    }
    source = open_review_source(root)
    assert source is not None
    out = tmp_path / "export"
    result = source.export(decisions, out)
    assert (result.exported, result.rejected, result.pending) == (2, 1, len(items) - 3)
    assert (result.loaded, result.skipped) == (2, [])
    loaded = {q.id: q for q in load_m3eval(out).questions}
    assert sorted(loaded) == sorted([interference.id, nback.id])
    edited = loaded[interference.id]
    assert edited.text == "Which apron did the cook wear?"
    assert edited.answer == intrusion
    assert next(c for c in edited.choices if c.letter == intrusion).text == "A red apron"
    # the new gold is the correct option of the role map, the old gold took its role
    assert str(next(c for c in edited.choices if c.letter == intrusion).role) == "correct"
    assert str(next(c for c in edited.choices if c.letter == interference.answer).role) \
        == "intrusion"
    assert edited.metadata["released"]["intrusion_option_letter"] != intrusion
    assert loaded[nback.id].answer == flipped
    # the videos are under the export (the loader refuses links out of it); the root is intact
    video = out / edited.media[0].path
    assert video.is_file() and not video.is_symlink()
    rows = {row.id: row for row in read_review_items(out / "review" / "review.csv")}
    assert {i: r.status for i, r in rows.items()} == {
        interference.id: "accepted", nback.id: "accepted", rejected.id: "rejected"}
    assert "asks about both sides" in rows[rejected.id].note
    assert "tester" in rows[interference.id].note
    assert _items(root)[interference.id] == interference  # the generated files are untouched


def test_export_refuses_a_folder_with_data_and_a_gold_that_is_no_option(
    root: Path, tmp_path: Path
) -> None:
    source = open_review_source(root)
    assert source is not None
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    with pytest.raises(M3kitError, match="holds other data"):
        source.export({}, busy)
    item = next(iter(_items(root).values()))
    with pytest.raises(SchemaError, match="not one of the options"):
        source.export({item.id: _decision(item.id, "accepted", edit=ItemEdit(answer="Z"))},
                      tmp_path / "bad")
    assert not (tmp_path / "bad").exists()  # nothing half-written is left behind
    assert [p.name for p in tmp_path.iterdir()] == ["busy"]


def test_an_export_with_nothing_accepted_says_so(root: Path, tmp_path: Path) -> None:
    source = open_review_source(root)
    assert source is not None
    result = source.export({}, tmp_path / "none")
    assert result.exported == 0 and result.loaded == 0
    assert len(result.skipped) == 1 and "no qa_root" in result.skipped[0].reason
    assert json.loads(json.dumps(result.model_dump())) == result.model_dump()


def test_an_edit_the_layout_refuses_is_named_when_saved(root: Path) -> None:
    source = open_review_source(root)
    assert source is not None
    items = _items(root)
    nback = next(i for i in items.values() if dict(i.facts)["paradigm"] == "nback")
    choice = next(i for i in items.values() if dict(i.facts)["paradigm"] != "nback")
    assert "Yes and No" in (source.check_edit(nback.id, ItemEdit(options={"A": "Maybe"})) or "")
    assert "not one of the options" in (source.check_edit(choice.id, ItemEdit(answer="Z"))
                                        or "")
    assert source.check_edit(choice.id, ItemEdit(question="Which video showed it?")) is None
    assert source.check_edit("no-such-item", ItemEdit()) == "no item 'no-such-item'"
