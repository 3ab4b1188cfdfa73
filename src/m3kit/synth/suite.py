"""The synthetic probe suite: configuration, building (cached) and loading.

``build_suite(out_dir, config)`` generates the source pairs, renders them, composes and renders
every probe of the four paradigms, writes the questions, and finally ``suite.json`` — written
last, so its presence with the current config hash means the folder is complete. Building again
with the same config returns the folder as it is; a changed config reuses every source and probe
file whose inputs did not change (files are named by content hashes).

Layout of a suite folder::

    suite.json          SuiteManifest: config, its hash, sources, probes, question counts
    questions.jsonl     schema.Question records; media paths relative to the folder
    sources/<script>-<hash>.mp4           a rendered source video (pair videos p<i>v1/p<i>v2,
                                          one-beat N-back clips nb-...-c<j>)
    sources/<script>-<hash>.script.json   its VideoScript (the ground truth)
    probes/<probe>-<hash>.mp4             a rendered probe
    probes/<probe>-<hash>.json            its ProbeManifest (per-frame provenance)

``load_suite`` (and ``Suite.questions``) resolve media paths against the folder, so a suite folder
can be moved (the probe manifests keep, as provenance, the absolute source paths they were
composed from).
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from m3kit.errors import SchemaError
from m3kit.files import atomic_write_text
from m3kit.schema.io import read_jsonl, write_jsonl
from m3kit.schema.question import Question
from m3kit.synth.config import PARADIGMS, SUITE_VERSION, SuiteConfig
from m3kit.synth.errors import SynthError
from m3kit.synth.manifest import MANIFEST, read_manifest
from m3kit.synth.plan import nback_trials, probe_specs, source_pairs, suite_questions
from m3kit.synth.probes import ProbeRecord, ProbeSpec, build_probe
from m3kit.synth.render import render_script
from m3kit.synth.script import SourcePair, VideoScript

__all__ = [
    "PARADIGMS",
    "ProgressFn",
    "SourceRecord",
    "Suite",
    "SuiteConfig",
    "SuiteManifest",
    "build_suite",
    "load_suite",
]

ProgressFn = Callable[[str, int, int], None]
"""``progress(stage, done, total)``; stages ``"sources"`` and ``"probes"``."""


SourceRole = Literal["video1", "video2", "nback_clip"]


class SourceRecord(BaseModel):
    """A rendered source video of the suite; paths relative to the suite folder."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    pair: str | None  # None for an N-back clip
    role: SourceRole
    script: str
    video: str
    content_hash: str
    duration: float


class SuiteManifest(BaseModel):
    """``suite.json``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[2] = SUITE_VERSION
    config: SuiteConfig
    config_hash: str
    sources: list[SourceRecord]
    probes: list[ProbeRecord]
    questions: str = "questions.jsonl"
    question_count: int
    counts: dict[str, int] = Field(description="questions per paradigm")
    build_seconds: float


@dataclass(frozen=True)
class Suite:
    """A built suite: its folder, manifest and questions (media paths absolute)."""

    root: Path
    manifest: SuiteManifest
    questions: list[Question]
    cached: bool = False

    @property
    def config(self) -> SuiteConfig:
        return self.manifest.config

    @property
    def probes(self) -> list[ProbeRecord]:
        return self.manifest.probes

    def probe(self, probe_id: str) -> ProbeRecord:
        for p in self.manifest.probes:
            if p.id == probe_id:
                return p
        raise KeyError(probe_id)

    def path(self, relative: str) -> Path:
        return self.root / relative

    def script(self, script_id: str) -> VideoScript:
        """The ground-truth script of a source."""
        for s in self.manifest.sources:
            if s.id == script_id:
                return VideoScript.model_validate_json(self.path(s.script).read_text("utf-8"))
        raise KeyError(script_id)

    def pair(self, pair_id: str) -> SourcePair:
        return SourcePair(id=pair_id, video1=self.script(f"{pair_id}v1"),
                          video2=self.script(f"{pair_id}v2"))

    def select(self, *, paradigm: str | None = None, evidence: str | None = None,
               question_type: str | None = None) -> list[Question]:
        """Questions filtered by their metadata."""
        return [q for q in self.questions
                if (paradigm is None or q.metadata.get("paradigm") == paradigm)
                and (evidence is None or q.metadata.get("evidence") == evidence)
                and (question_type is None or q.question_type == question_type)]

    def counts(self, key: str = "paradigm") -> dict[str, int]:
        """Questions per value of a metadata key."""
        return dict(Counter(str(q.metadata.get(key)) for q in self.questions))


# -- building ---------------------------------------------------------------------------------


def build_suite(
    out_dir: str | Path,
    config: SuiteConfig | None = None,
    *,
    progress: ProgressFn | None = None,
    workers: int = 1,
) -> Suite:
    """Build (or reuse) the suite of ``config`` in ``out_dir``; without a config, the quickstart
    suite ``SuiteConfig.small()`` (``SuiteConfig()`` is the larger, paper-like one).

    ``workers`` > 1 renders sources and probes in that many processes.
    """
    config = config if config is not None else SuiteConfig.small()
    root = Path(out_dir)
    current = _current(root, config)
    if current is not None:
        return current
    began = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    # A suite.json of another config must not describe the files being replaced.
    (root / MANIFEST).unlink(missing_ok=True)
    pairs = source_pairs(config)
    trials = nback_trials(config)
    scripts = [s for p in pairs for s in (p.video1, p.video2)] + \
        [c.script for t in trials for c in t.clips]
    videos = _render_sources(scripts, root / "sources", workers, progress)
    specs = probe_specs(pairs, trials, config)
    records = _render_probes(specs, videos, root, config.fps, workers, progress)
    questions = suite_questions(pairs, trials, records, config)
    write_jsonl(root / "questions.jsonl", questions)
    roles: list[tuple[VideoScript, str | None, SourceRole]] = []
    for p in pairs:
        roles += [(p.video1, p.id, "video1"), (p.video2, p.id, "video2")]
    roles += [(c.script, None, "nback_clip") for t in trials for c in t.clips]
    sources = [
        SourceRecord(id=s.id, pair=pair_id, role=role, script=os.path.relpath(
            videos[s.id].with_suffix(".script.json"), root),
            video=os.path.relpath(videos[s.id], root), content_hash=s.content_hash(),
            duration=s.duration)
        for s, pair_id, role in roles
    ]
    manifest = SuiteManifest(
        config=config, config_hash=config.config_hash(), sources=sources,
        probes=list(records.values()), question_count=len(questions),
        counts=dict(Counter(q.metadata["paradigm"] for q in questions)),
        build_seconds=round(time.perf_counter() - began, 3),
    )
    atomic_write_text(root / MANIFEST, manifest.model_dump_json(indent=2))
    return Suite(root=root, manifest=manifest, questions=_absolute(questions, root))


def load_suite(out_dir: str | Path) -> Suite:
    """Open a built suite folder; ``SynthError`` names what is missing or malformed."""
    root = Path(out_dir)
    manifest = read_manifest(root, SuiteManifest, _files)
    try:
        questions = read_jsonl(root / manifest.questions, Question)
    except SchemaError as exc:
        raise SynthError(exc.reason, path=exc.path, record=exc.record, field=exc.field) from None
    return Suite(root=root, manifest=manifest, questions=_absolute(questions, root), cached=True)


def _current(root: Path, config: SuiteConfig) -> Suite | None:
    """The suite in ``root`` if it is complete and built from ``config``."""
    try:
        suite = load_suite(root)
    except SynthError:
        return None
    if suite.manifest.config_hash != config.config_hash():
        return None
    return suite


def _files(manifest: SuiteManifest) -> list[str]:
    files = [manifest.questions]
    for s in manifest.sources:
        files += [s.script, s.video]
    for p in manifest.probes:
        files += [p.video, p.manifest]
    return files


def _render_sources(scripts: list[VideoScript], out: Path, workers: int,
                    progress: ProgressFn | None) -> dict[str, Path]:
    paths = _run_all(render_script, [(s, out) for s in scripts], workers, "sources", progress)
    return {s.id: p for s, p in zip(scripts, paths, strict=True)}  # one path per script


def _render_probes(specs: list[ProbeSpec], videos: dict[str, Path], root: Path, fps: float,
                   workers: int, progress: ProgressFn | None) -> dict[str, ProbeRecord]:
    args = [(spec, videos, root / "probes", fps, root) for spec in specs]
    records = _run_all(_build_probe, args, workers, "probes", progress)
    return {r.id: r for r in records}


def _build_probe(spec: ProbeSpec, videos: dict[str, Path], out: Path, fps: float,
                 root: Path) -> ProbeRecord:
    return build_probe(spec, videos, out, fps=fps, root=root)


def _run_all(fn, args: list[tuple], workers: int, stage: str, progress: ProgressFn | None) -> list:
    """``fn(*a)`` for each ``a`` in order, in ``workers`` processes when > 1."""
    total = len(args)
    if progress is not None:
        progress(stage, 0, total)
    results = []
    if workers <= 1 or total <= 1:
        for done, a in enumerate(args, start=1):
            results.append(fn(*a))
            if progress is not None:
                progress(stage, done, total)
        return results
    # spawned, not forked: the caller may hold threads (a progress listener, a model's pool)
    # whose locks a forked child would inherit taken
    with ProcessPoolExecutor(max_workers=workers,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = [pool.submit(fn, *a) for a in args]
        for done, fut in enumerate(futures, start=1):
            results.append(fut.result())
            if progress is not None:
                progress(stage, done, total)
    return results


def _absolute(questions: list[Question], root: Path) -> list[Question]:
    """Media paths resolved against the suite folder."""
    base = root.resolve()
    out = []
    for q in questions:
        media = [m.model_copy(update={"path": str(base / m.path)}) for m in q.media]
        out.append(q.model_copy(update={"media": media}))
    return out
