"""Building, caching and loading suites; knobs reach the probe manifests; the frames a harness
samples show every scripted beat."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from m3kit.media.sampling import uniform_indices
from m3kit.schema.io import read_jsonl
from m3kit.schema.probe import ProbeManifest
from m3kit.schema.question import Question
from m3kit.synth import Suite, SuiteConfig, SynthError, build_suite, load_suite
from m3kit.synth.suite import _run_all


def _mtimes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def test_suite_folder_layout(tiny_suite: Suite, tiny_dir: Path):
    tiny = tiny_suite.config
    manifest = json.loads((tiny_dir / "suite.json").read_text())
    assert manifest["config_hash"] == tiny.config_hash()
    assert manifest["question_count"] == len(tiny_suite.questions)
    assert sum(manifest["counts"].values()) == len(tiny_suite.questions)
    stored = read_jsonl(tiny_dir / "questions.jsonl", Question)
    assert [q.id for q in stored] == [q.id for q in tiny_suite.questions]
    for q in stored:  # relative on disk, absolute when loaded
        assert all(not Path(m.path).is_absolute() and (tiny_dir / m.path).exists()
                   for m in q.media)
    for q in tiny_suite.questions:
        assert all(Path(m.path).is_absolute() for m in q.media)
    clips = sum(len(p.spec.inputs) for p in tiny_suite.probes if p.spec.paradigm == "nback")
    assert len(list((tiny_dir / "sources").glob("*.mp4"))) == 2 + clips
    assert len(list((tiny_dir / "sources").glob("*.script.json"))) == 2 + clips
    assert Counter(s.role for s in tiny_suite.manifest.sources) == \
        {"video1": 1, "video2": 1, "nback_clip": clips}
    assert len(list((tiny_dir / "probes").glob("*.mp4"))) == len(tiny_suite.probes)


def test_building_again_reuses_everything(tiny_suite: Suite, tiny_dir: Path):
    tiny = tiny_suite.config
    before = _mtimes(tiny_dir)
    again = build_suite(tiny_dir, tiny)
    assert again.cached
    assert _mtimes(tiny_dir) == before
    assert [q.model_dump() for q in again.questions] == \
        [q.model_dump() for q in tiny_suite.questions]
    loaded = load_suite(tiny_dir)
    assert loaded.manifest == tiny_suite.manifest


def test_changed_knob_reuses_unchanged_files(tiny_suite: Suite, tiny_dir: Path, tmp_path: Path):
    tiny = tiny_suite.config
    copy = tmp_path / "suite"
    shutil.copytree(tiny_dir, copy)
    before = _mtimes(copy)
    changed = tiny.model_copy(update={"swaps": [0, 5]})
    calls: list[tuple[str, int, int]] = []
    suite = build_suite(copy, changed, progress=lambda *a: calls.append(a))
    assert not suite.cached
    assert calls[0] == ("sources", 0, len(suite.manifest.sources))
    assert calls[-1] == ("probes", len(suite.probes), len(suite.probes))
    after = _mtimes(copy)
    sources = [k for k in before if k.startswith("sources/")]
    assert sources and all(after[k] == before[k] for k in sources)
    untouched = [p.video for p in suite.probes if not p.id.endswith("swap5")]
    assert all(after[v] == before[v] for v in untouched)
    swapped = suite.probe("da-p0-swap5")
    assert swapped.video not in before
    assert ProbeManifest.load(suite.path(swapped.manifest)).recipe.swaps == 5


def test_knobs_appear_in_the_probe_manifests(tiny_suite: Suite):
    tiny = tiny_suite.config
    kinds = Counter()
    for record in tiny_suite.probes:
        spec = record.spec
        recipe = ProbeManifest.load(tiny_suite.path(record.manifest)).recipe
        kinds[spec.paradigm] += 1
        if spec.paradigm == "divided_attention":
            assert recipe.kind == "split_screen"
            assert recipe.swaps == spec.swaps and len(recipe.swap_times) == spec.swaps
            assert recipe.width == 2 * tiny.size[0]
        elif spec.paradigm == "interference":
            assert recipe.kind == "concat" and recipe.order == spec.order
        elif spec.paradigm == "interleaved":
            assert recipe.kind == "interleave" and recipe.segments_per_source == 4
        else:
            assert recipe.kind == "sequence" and len(recipe.order) == len(spec.inputs)
            assert recipe.params["gap"] == tiny.nback_gap
    assert kinds == {"divided_attention": 2, "interference": 4, "interleaved": 1, "nback": 8}
    swaps = {q.metadata["condition"]: q.metadata["swaps"]
             for q in tiny_suite.select(paradigm="divided_attention")}
    assert swaps == {"swap0": 0, "swap3": 3}


def test_uniform_sampling_shows_every_beat(tiny_suite: Suite):
    """M3Eval shows 96 uniform frames per probe (8 per clip for N-back): every beat of every
    source in the probe must be on several of them."""
    tiny = tiny_suite.config
    beat = tiny.beat_seconds
    for record in tiny_suite.probes:
        manifest = ProbeManifest.load(tiny_suite.path(record.manifest))
        if record.spec.paradigm == "nback":
            for _, start, end in record.spans:
                frames = [f for f in manifest.frames if start <= f.time < end]
                assert len(frames) == round((end - start) * tiny.fps)
                picked = [frames[i] for i in uniform_indices(len(frames), 8)]
                assert len({t.source for f in picked for t in f.tiles}) == 1  # one clip only
            continue
        seen = Counter()
        for i in uniform_indices(manifest.frame_count, 96):
            for tile in manifest.frames[i].tiles:
                seen[(tile.source, int(tile.source_time // beat))] += 1
        sources = set(manifest.recipe.order)
        for source in sources:
            for b in range(tiny.beats):
                assert seen[(source, b)] >= 4, (record.id, source, b)


def test_load_suite_names_what_is_missing(tmp_path: Path, tiny_suite: Suite, tiny_dir: Path):
    with pytest.raises(SynthError, match="suite.json"):
        load_suite(tmp_path)
    copy = tmp_path / "broken"
    shutil.copytree(tiny_dir, copy)
    next((copy / "probes").glob("*.mp4")).unlink()
    with pytest.raises(SynthError, match="missing"):
        load_suite(copy)
    # a broken folder is rebuilt, not trusted
    assert not build_suite(copy, tiny_suite.config).cached
    assert load_suite(copy).manifest.question_count > 0


def test_bad_config_is_refused():
    with pytest.raises(ValueError, match="beats >= 8"):
        SuiteConfig(beats=6)
    with pytest.raises(ValueError, match="n < k"):
        SuiteConfig(nback_n=[3], nback_k=[3])
    SuiteConfig(beats=6, paradigms=["interference", "nback"])  # no storylines: fine


# The quickstart suite: 6 pairs × (2 split screens × 16 + 2 concatenations × 4 + 1
# interleaving × 20 questions) and 16 N-back trials × 2 attributes.
QUICKSTART_COUNTS = {"divided_attention": 192, "interference": 48, "interleaved": 120,
                     "nback": 32}
QUICKSTART_PROBES = 6 * 5 + 16


@pytest.mark.slow
def test_small_preset_has_every_paradigm_in_both_variants(tmp_path: Path):
    suite = build_suite(tmp_path / "small")  # no config: the quickstart preset
    assert suite.config == SuiteConfig.small()
    counts = Counter((q.metadata["paradigm"], q.metadata["evidence"]) for q in suite.questions)
    for paradigm in ("divided_attention", "interference", "interleaved", "nback"):
        assert counts[(paradigm, "text")] == counts[(paradigm, "visual")] > 0
    assert suite.manifest.counts == QUICKSTART_COUNTS
    assert len(suite.probes) == QUICKSTART_PROBES
    assert_balanced(suite)


def assert_balanced(suite: Suite) -> None:
    """Gold letters uniform per paradigm, question type and evidence variant (every letter
    equally often); N-back "Yes" exactly half of each (evidence, N, K, attribute) cell."""
    kinds: dict[tuple, Counter] = {}
    for q in suite.questions:
        key = (q.metadata["paradigm"], q.question_type, q.metadata["evidence"])
        kinds.setdefault(key, Counter())[q.answer] += 1
        kinds.setdefault(key + ("options",), Counter())[len(q.choices)] += 1
    for key, letters in kinds.items():
        if key[-1] == "options":
            continue
        (n_options,) = kinds[key + ("options",)]
        assert sorted(letters) == list("ABCD"[:n_options]), key
        assert len(set(letters.values())) == 1, (key, letters)
    cells: dict[tuple, Counter] = {}
    for q in suite.select(paradigm="nback"):
        m = q.metadata
        cells.setdefault((m["evidence"], m["n"], m["k"], m["attribute"]), Counter())[
            q.choice(q.answer).text] += 1
    assert cells and all(c["Yes"] == c["No"] > 0 for c in cells.values()), cells


def test_parallel_runner_keeps_order_and_reports_progress():
    calls: list[tuple[str, int, int]] = []
    out = _run_all(pow, [(2, 3), (3, 2), (5, 1)], 2, "probes", lambda *a: calls.append(a))
    assert out == [8, 9, 5]
    assert calls == [("probes", 0, 3), ("probes", 1, 3), ("probes", 2, 3), ("probes", 3, 3)]
