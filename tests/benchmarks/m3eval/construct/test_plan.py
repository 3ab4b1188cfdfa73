"""The builder on tiny real videos: probes rendered, plan saved, and (with the scripted
generator) a released layout that the M3Eval loader reads back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path

import m3eval_scripted as scripted  # registered by conftest.py
import pytest

from m3kit.benchmarks.m3eval.construct.generate import GenerationConfig, generate_questions
from m3kit.benchmarks.m3eval.construct.pairing import VideoSource
from m3kit.benchmarks.m3eval.construct.plan import (
    BuildConfig,
    build_probes,
    load_plan,
    valid_nback_combinations,
)
from m3kit.benchmarks.m3eval.construct.review import read_review, set_status
from m3kit.errors import SchemaError
from m3kit.media import video_info
from m3kit.perception import MiniLMEmbedder
from m3kit.schema.probe import ProbeManifest

TEXTS = ["A chef dices onions in a home kitchen", "A dog runs on the beach after a ball",
         "A cook chops vegetables and fries them in a pan", "A puppy plays fetch by the sea"]


# Sequence lengths built for N-back: the shortest, a middle one and the longest of the paper's
# grid (every other K is the same code path; test_valid_nback_combinations covers the grid).
NBACK_K = [2, 5, 9]


@pytest.fixture(scope="module")
def sources(pattern_video_factory: Callable[..., Path]) -> list[VideoSource]:
    # 3 s at 8 fps, 64x48: enough frames for 10 swaps and 10 + 10 segments, small to render.
    return [VideoSource(id=f"v{i}", text=t, path=str(pattern_video_factory(
                seconds=3.0, fps=8.0, width=64, height=48, keyint=8, bframes=0, hue=h)))
            for i, (h, t) in enumerate(zip((0.0, 0.25, 0.5, 0.75), TEXTS, strict=True))]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, sources: list[VideoSource],
          embedder: MiniLMEmbedder):
    root = tmp_path_factory.mktemp("built")
    config = BuildConfig(fps=8, nback_clip_seconds=1.0, nback_k=NBACK_K)
    plan = build_probes(sources, root, config=config, embedder=embedder)
    return root, plan


def _manifest(root: Path, rel: str) -> ProbeManifest:
    return ProbeManifest.model_validate_json((root / rel).with_suffix(".json").read_text())


def _order(root: Path, rel: str) -> list[str]:
    recipe = _manifest(root, rel).recipe
    return [recipe.source(i).path for i in recipe.order]


def test_pairs_follow_the_captions(built, sources: list[VideoSource]) -> None:
    _, plan = built
    assert [(p.pair.video1.id, p.pair.video2.id) for p in plan.pairs] in (
        [("v0", "v2"), ("v1", "v3")], [("v1", "v3"), ("v0", "v2")])
    assert plan.unpaired == [] and plan.skipped == []
    assert load_plan(built[0]) == plan


def test_pair_probes(built) -> None:
    root, plan = built
    pair = plan.pairs[0]
    v1, v2 = pair.pair.video1.path, pair.pair.video2.path
    assert sorted(pair.probes) == sorted(["swap0", "swap10", "retroactive", "proactive",
                                          "repeat_target", "repeat_interferer", "interleaved"])
    for rel in pair.probes.values():
        assert not Path(rel).is_absolute() and (root / rel).is_file()
    assert _manifest(root, pair.probes["swap0"]).recipe.swaps == 0
    swap10 = _manifest(root, pair.probes["swap10"]).recipe
    assert swap10.swaps == 10 and len(swap10.swap_times) == 10
    assert _order(root, pair.probes["swap0"]) == [v1, v2]  # V1 on the left
    assert _order(root, pair.probes["retroactive"]) == [v1, v2]
    assert _order(root, pair.probes["proactive"]) == [v2, v1]
    assert _order(root, pair.probes["repeat_target"]) == [v1, v1, v2]
    assert _order(root, pair.probes["repeat_interferer"]) == [v1, v2, v2]
    inter = _manifest(root, pair.probes["interleaved"])
    assert inter.recipe.segments_per_source == 10 and len(inter.segments) == 20
    # 3 s sources at 8 fps: the concatenation of three is 3 × 24 = 72 frames = 9 s.
    assert video_info(root / pair.probes["repeat_target"]).frame_count == 72


def test_nback_instance(built) -> None:
    root, plan = built
    (instance,) = plan.nback
    assert instance.attribute == "action"
    assert len(instance.clips) == 12
    assert sorted(Counter(c.source for c in instance.clips).values()) == [3, 3, 3, 3]
    assert all(c.end - c.start == 1.0 for c in instance.clips)
    # K in (2, 5, 9) with every N = 1..4 below K: 1 + 4 + 4 = 9 combinations.
    assert len(instance.combinations) == 9
    assert sorted(instance.videos) == NBACK_K
    for k, rel in instance.videos.items():
        manifest = _manifest(root, rel)
        assert len(manifest.recipe.order) == k
        assert [s.start for s in manifest.recipe.sources] == [c.start for c in
                                                               instance.clips[:k]]
        assert video_info(root / rel).frame_count == 8 * k  # k one-second clips at 8 fps


def test_valid_nback_combinations() -> None:
    combos = valid_nback_combinations(range(2, 10), [1, 2, 3, 4])
    assert len(combos) == 26
    assert (2, 1) in combos and (9, 4) in combos and (4, 4) not in combos
    assert valid_nback_combinations([3, 20], [1, 2, 3], clip_count=12) == [(3, 1), (3, 2)]


def test_nback_needs_enough_videos(tmp_path: Path, sources: list[VideoSource],
                                  embedder: MiniLMEmbedder) -> None:
    config = BuildConfig(fps=8, nback_clip_seconds=2.0, interference=["retroactive"],
                         swaps=2, interleave_segments=2)
    # 3 s videos give 1 clip of 2 s each: no video has the 3 clips a group needs.
    plan = build_probes(sources[:2], tmp_path, config=config, embedder=embedder)
    assert plan.nback == [] and "nback01" in plan.skipped[0]
    assert "0 qualify" in plan.skipped[0]
    assert sorted(plan.pairs[0].probes) == ["interleaved", "retroactive", "swap0", "swap2"]


def test_missing_plan_is_a_named_error(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="run the build first"):
        load_plan(tmp_path)


def test_round_trip_through_the_loader(built) -> None:
    load = pytest.importorskip("m3kit.benchmarks.m3eval.load")
    root, _ = built
    backend, _ = scripted.scripted_backend()
    report = generate_questions(root, backend, config=GenerationConfig(
        caption_batches=2, frames_per_batch=2, nback_frames_per_clip=2, max_side=64))
    assert report.nback_written == 9 and len(report.rejected) == 8
    statuses = read_review(root / "review" / "review.csv")
    set_status(root, {i: "accepted" for i, s in statuses.items() if s == "pending"})
    loaded = load.load_m3eval(root)
    assert loaded.skipped == []  # the checker's rejects never reached the question files
    assert len(loaded.questions) == 21 + 9
    for q in loaded.questions:
        video = root / q.media[0].path
        assert video.is_file(), q.id
    assert video_info(root / loaded.questions[0].media[0].path).frame_count > 0
    paradigms = Counter(q.metadata["paradigm"] for q in loaded.questions)
    assert paradigms == {"divided_attention": 7, "interference": 8, "interleaved": 6,
                         "nback": 9}
