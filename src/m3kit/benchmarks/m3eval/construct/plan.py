"""Build the probe videos of an M3Eval-style benchmark from a researcher's own videos.

Paper §3.1 and Appendix B: videos are paired by semantic similarity, and each pair becomes

- divided attention: a split-screen with V1 left / V2 right, with 0 and with 10 side swaps at
  uniformly spaced instants (``swap0``, ``swap10``);
- memory interference: the concatenation in both orders, ``[V1, V2]`` (asking about V1 tests
  retroactive interference) and ``[V2, V1]`` (proactive), and the repetition probes
  ``[V1, V1, V2]`` (``repeat_target``) and ``[V1, V2, V2]`` (``repeat_interferer``);
- interleaved events: each video cut into 10 segments played ``A1 B1 … A10 B10``.

N-back (§3.1.4, Appendices A and C.2): each video is cut uniformly into clips; an instance takes
3 clips from each of 4 videos (the paper's "four groups ... three clips sampled from each"),
shuffled (seeded) into a 12-clip instance, and the trial of sequence length K shows the
instance's first K clips. ``valid_nback_combinations`` lists the (K, N) pairs; the default
grid, K = 2…9 with every N = 1…4 below K, is 1 + 2 + 3 + 4·5 = 26 pairs, the paper's "26 valid
K×N combinations" per 12-clip instance (the paper gives the count, not the grid: this grid is
the one that yields it and matches its example N = 2, K = 9). Trials with the same K share one
video; the question (which N, which attribute) differs.

Videos are written under ``<root>/videos/`` and the plan (pairs, probe paths relative to the
root, N-back clips) to ``<root>/build/plan.json``; ``generate.py`` writes the questions.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from m3kit.benchmarks.m3eval.construct.pairing import (
    VideoPair,
    VideoSource,
    pair_by_similarity,
)
from m3kit.errors import CompositionError, SchemaError

if TYPE_CHECKING:
    from m3kit.perception.base import TextEmbedder

__all__ = [
    "INTERFERENCE_ORDERS",
    "BuildConfig",
    "BuildPlan",
    "NBackClip",
    "NBackInstance",
    "PairPlan",
    "build_probes",
    "load_plan",
    "valid_nback_combinations",
]

PLAN_FILE = Path("build") / "plan.json"
# Concatenation orders by condition; the target of every interference question is video1.
INTERFERENCE_ORDERS: dict[str, tuple[str, ...]] = {
    "retroactive": ("video1", "video2"),
    "proactive": ("video2", "video1"),
    "repeat_target": ("video1", "video1", "video2"),
    "repeat_interferer": ("video1", "video2", "video2"),
}

ProgressFn = Callable[[str], None]
StepFn = Callable[[int, int], None]  # (units done, units in all)


class BuildConfig(BaseModel):
    """Knobs of the build; defaults follow the paper."""

    swaps: int = Field(default=10, ge=1)  # the swapping condition (the other one has 0)
    interleave_segments: int = Field(default=10, ge=1)
    interference: list[str] = Field(default_factory=lambda: list(INTERFERENCE_ORDERS))
    fps: float | None = Field(default=None, gt=0)  # output rate; default: the highest source
    nback_instances: int = Field(default=1, ge=0)
    nback_groups: int = Field(default=4, ge=2)
    nback_clips_per_group: int = Field(default=3, ge=1)
    nback_clip_seconds: float = Field(default=3.0, gt=0)
    nback_k: list[int] = Field(default_factory=lambda: list(range(2, 10)))
    nback_n: list[int] = Field(default_factory=lambda: [1, 2, 3, 4])
    seed: int = 0


class PairPlan(BaseModel):
    """A pair and its probe videos: condition -> video path relative to the root."""

    pair: VideoPair
    probes: dict[str, str] = Field(default_factory=dict)


class NBackClip(BaseModel):
    source: str  # the VideoSource id
    path: str
    start: float
    end: float


class NBackInstance(BaseModel):
    """A 12-clip instance (by default), its attribute and the sequence video of each K."""

    id: str
    attribute: str  # "action" or "scene"
    clips: list[NBackClip]
    videos: dict[int, str] = Field(default_factory=dict)  # K -> path relative to the root
    combinations: list[tuple[int, int]] = Field(default_factory=list)  # (K, N)


class BuildPlan(BaseModel):
    config: BuildConfig
    pairs: list[PairPlan] = Field(default_factory=list)
    unpaired: list[VideoSource] = Field(default_factory=list)
    nback: list[NBackInstance] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # what could not be built, and why

    def save(self, root: str | Path) -> Path:
        path = Path(root) / PLAN_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2), encoding="utf-8")
        return path


def load_plan(root: str | Path) -> BuildPlan:
    path = Path(root) / PLAN_FILE
    if not path.is_file():
        raise SchemaError("no build plan: run the build first", path=path)
    try:
        return BuildPlan.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (json.JSONDecodeError, ValueError) as exc:
        raise SchemaError(f"unreadable build plan: {exc}", path=path) from None


def valid_nback_combinations(
    k_values: Sequence[int], n_values: Sequence[int], clip_count: int = 12
) -> list[tuple[int, int]]:
    """(K, N) pairs a ``clip_count``-clip instance supports: 2 <= K <= clip_count, 1 <= N < K."""
    return sorted((k, n) for k in set(k_values) for n in set(n_values)
                  if 2 <= k <= clip_count and 1 <= n < k)


def build_probes(
    sources: Sequence[VideoSource],
    root: str | Path,
    *,
    config: BuildConfig | None = None,
    embedder: TextEmbedder | None = None,
    progress: ProgressFn | None = None,
    step: StepFn | None = None,
) -> BuildPlan:
    """Pair the sources, render every probe video under ``root`` and save the plan.

    A pair or instance whose composition fails (a source too short for 10 swaps, say) is left
    out and named in ``plan.skipped``; the rest is built. ``progress`` receives a line per
    pair and instance, ``step(done, total)`` is called as each pair and N-back instance is
    finished (``total``: the pairs found and the instances asked for).
    """
    config = config or BuildConfig()
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    say = progress or (lambda _msg: None)
    pairs, unpaired = pair_by_similarity(sources, embedder)
    plan = BuildPlan(config=config, unpaired=unpaired)
    total = len(pairs) + config.nback_instances
    done = 0
    for pair in pairs:
        say(f"{pair.id}: {pair.video1.id} + {pair.video2.id} (similarity {pair.similarity:.2f})")
        try:
            plan.pairs.append(PairPlan(pair=pair, probes=_pair_probes(pair, root, config)))
        except CompositionError as exc:
            plan.skipped.append(f"{pair.id}: {exc}")
        done += 1
        if step is not None:
            step(done, total)
    for i in range(config.nback_instances):
        try:
            instance = _nback_instance(i, sources, root, config)
        except CompositionError as exc:
            plan.skipped.append(f"nback{i + 1:02d}: {exc}")
            instance = None
        done += 1
        if step is not None:
            step(done, total)
        if instance is None:
            continue
        say(f"{instance.id}: {len(instance.clips)} clips, {len(instance.videos)} sequences")
        plan.nback.append(instance)
    plan.save(root)
    return plan


# -- pairs -------------------------------------------------------------------------------------


def _pair_probes(pair: VideoPair, root: Path, config: BuildConfig) -> dict[str, str]:
    from m3kit.media import compose

    paths = {"video1": pair.video1.path, "video2": pair.video2.path}
    out: dict[str, str] = {}
    for swaps, cond in ((0, "swap0"), (config.swaps, f"swap{config.swaps}")):
        manifest = compose.split_screen(paths["video1"], paths["video2"], swaps=swaps,
                                        fps=config.fps)
        out[cond] = _render(manifest, root, f"videos/split_screen/{pair.id}_{cond}.mp4")
    for cond in config.interference:
        order = INTERFERENCE_ORDERS.get(cond)
        if order is None:
            raise CompositionError(f"unknown interference condition {cond!r}",
                                   field="interference")
        manifest = compose.concatenate([paths[v] for v in order], fps=config.fps)
        out[cond] = _render(manifest, root, f"videos/memory_interference/{pair.id}_{cond}.mp4")
    manifest = compose.interleave(paths["video1"], paths["video2"],
                                  segments=config.interleave_segments, fps=config.fps)
    out["interleaved"] = _render(manifest, root, f"videos/interleaved/{pair.id}.mp4")
    return out


def _render(manifest, root: Path, rel: str) -> str:
    from m3kit.media.render import render_probe

    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    render_probe(manifest, target)
    return rel


# -- N-back ------------------------------------------------------------------------------------


def _nback_instance(
    i: int, sources: Sequence[VideoSource], root: Path, config: BuildConfig
) -> NBackInstance:
    from m3kit.media import compose
    from m3kit.media.info import video_info
    from m3kit.schema.probe import ProbeSource

    rng = random.Random(f"{config.seed}:nback:{i}")
    per = config.nback_clips_per_group
    # Every clip each source can give: consecutive clip_seconds windows.
    pools: dict[str, list[NBackClip]] = {}
    for src in sources:
        duration = video_info(src.path).duration
        count = int(duration // config.nback_clip_seconds)
        if count >= per:
            pools[src.id] = [NBackClip(source=src.id, path=src.path,
                                       start=round(c * config.nback_clip_seconds, 6),
                                       end=round((c + 1) * config.nback_clip_seconds, 6))
                             for c in range(count)]
    if len(pools) < config.nback_groups:
        raise CompositionError(
            f"an N-back instance needs {config.nback_groups} videos with at least {per} clips "
            f"of {config.nback_clip_seconds:g} s; {len(pools)} qualify", field="sources")
    groups = rng.sample(sorted(pools), config.nback_groups)
    clips = [clip for g in groups for clip in rng.sample(pools[g], per)]
    rng.shuffle(clips)
    combos = valid_nback_combinations(config.nback_k, config.nback_n, len(clips))
    instance = NBackInstance(id=f"nback{i + 1:02d}", attribute=("action", "scene")[i % 2],
                             clips=clips, combinations=combos)
    for k in sorted({k for k, _ in combos}):
        manifest = compose.sequence(
            [ProbeSource(id=f"c{j + 1}", path=c.path, start=c.start, end=c.end)
             for j, c in enumerate(clips[:k])],
            fps=config.fps,
        )
        instance.videos[k] = _render(manifest, root, f"videos/nback/{instance.id}_k{k}.mp4")
    return instance
