"""Pairing by semantic similarity of captions/titles with the real offline MiniLM embedder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval.construct.pairing import VideoSource, load_sources, pair_by_similarity
from m3kit.errors import SchemaError
from m3kit.perception import MiniLMEmbedder


def _src(i: str, text: str) -> VideoSource:
    return VideoSource(id=i, path=f"/videos/{i}.mp4", text=text)


def test_similar_topics_are_paired(embedder: MiniLMEmbedder) -> None:
    sources = [
        _src("pasta", "A chef cooks pasta with tomato sauce in a home kitchen"),
        _src("dog", "A dog runs along the beach chasing a ball"),
        _src("spaghetti", "Cooking spaghetti and stirring a pot of marinara on the stove"),
        _src("puppy", "A puppy plays fetch by the sea waves"),
        _src("chess", "Two grandmasters play a game of chess in a tournament hall"),
    ]
    pairs, unpaired = pair_by_similarity(sources, embedder)
    assert {frozenset((p.video1.id, p.video2.id)) for p in pairs} == {
        frozenset(("pasta", "spaghetti")), frozenset(("dog", "puppy"))}
    assert [s.id for s in unpaired] == ["chess"]  # the odd one out is not forced into a pair
    assert [p.id for p in pairs] == ["pair01", "pair02"]
    assert all(0.3 < p.similarity <= 1.0 for p in pairs)
    assert pairs[0].similarity >= pairs[1].similarity  # most similar first
    # video1 is the one listed first in the sources.
    assert all(sources.index(p.video1) < sources.index(p.video2) for p in pairs)


def test_fewer_than_two_sources_make_no_pair(embedder: MiniLMEmbedder) -> None:
    assert pair_by_similarity([_src("a", "x")], embedder) == ([], [_src("a", "x")])


def test_load_sources_from_a_folder(tmp_path: Path) -> None:
    (tmp_path / "cooking_pasta.mp4").write_bytes(b"")
    (tmp_path / "dog walk.mp4").write_bytes(b"")
    (tmp_path / "dog walk.txt").write_text("A dog walks in the park\n")
    (tmp_path / "notes.md").write_text("not a video")
    sources = load_sources(tmp_path)
    assert [(s.id, s.text) for s in sources] == [("cooking_pasta", "cooking pasta"),
                                                 ("dog_walk", "A dog walks in the park")]
    assert all(Path(s.path).is_absolute() for s in sources)


def test_load_sources_from_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "sources.jsonl"
    path.write_text(json.dumps({"video": "clips/a.mp4", "text": "first"}) + "\n\n"
                    + json.dumps({"id": "b", "video": "/abs/b.mp4", "text": "second"}) + "\n")
    sources = load_sources(path)
    assert [(s.id, s.path, s.text) for s in sources] == [
        ("a", str((tmp_path / "clips/a.mp4").resolve()), "first"), ("b", "/abs/b.mp4", "second")]


@pytest.mark.parametrize(("lines", "record", "field"), [
    (['{"text": "no video"}'], "1", "video"),
    (['{"video": "a.mp4"}', "{not json"], "2", None),
    (['{"video": "a.mp4"}', '{"video": "x/a.mp4"}'], "a", "id"),  # duplicate id
])
def test_load_sources_errors_name_record_and_field(tmp_path: Path, lines, record, field) -> None:
    path = tmp_path / "sources.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(SchemaError) as info:
        load_sources(path)
    assert info.value.record == record and info.value.field == field
    assert info.value.path == str(path)
