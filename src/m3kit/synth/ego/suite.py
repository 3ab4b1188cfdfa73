"""The synthetic egocentric suite in SuperMemory-VQA's released layout: building (cached) and
loading.

``build_ego_suite(out_dir, config)`` writes, under ``out_dir`` (by default a folder of m3kit's
cache named by the config's hash)::

    data/json/all_qa.json                           the questions (``schema.supermemory.QARecord``)
    data/video/Person_<n>/P<n>_D<d>.mp4             one session a day (none for a
                                                    transcript-only session)
    data/transcripts/person_<n>/p<n>_d<d>_gemini_aligned_transcript.json
    data/transcripts/person_<n>/p<n>_d<d>_whisper_transcript.json
    suite.json                                      ``EgoSuiteManifest``: config, its hash, the
                                                    persons' worlds, each question's truth

``suite.json`` is written last, so its presence with the config's hash means the folder is
complete; building again with the same config returns it as it is.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from m3kit.files import atomic_write_text
from m3kit.paths import cache_dir
from m3kit.schema.supermemory import (
    ALL_QA_PATH,
    AlignedTranscript,
    QARecord,
    WhisperSegment,
    WhisperTranscript,
    aligned_transcript_path,
    video_path,
    whisper_transcript_path,
)
from m3kit.synth.ego.config import EGO_SUITE_VERSION, EgoSuiteConfig
from m3kit.synth.ego.questions import QuestionTruth, suite_questions
from m3kit.synth.ego.render import render_session
from m3kit.synth.ego.world import PersonWorld, Session, generate_person
from m3kit.synth.errors import SynthError
from m3kit.synth.manifest import MANIFEST, read_manifest

__all__ = [
    "EGO_MANIFEST",
    "EgoSuite",
    "EgoSuiteManifest",
    "build_ego_suite",
    "default_ego_suite_dir",
    "load_ego_suite",
]

EGO_MANIFEST = MANIFEST


class EgoSuiteManifest(BaseModel):
    """``suite.json``: everything the released files do not say."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1] = EGO_SUITE_VERSION
    config: EgoSuiteConfig
    config_hash: str
    persons: list[PersonWorld]
    truth: list[QuestionTruth]
    counts: dict[str, int]  # questions per skill
    build_seconds: float


@dataclass(frozen=True)
class EgoSuite:
    """A built suite: its root (the dataset root a SuperMemory-VQA loader reads), manifest
    and questions."""

    root: Path
    manifest: EgoSuiteManifest
    questions: list[QARecord]
    cached: bool = False

    @property
    def all_qa(self) -> Path:
        return self.root / ALL_QA_PATH

    def truth(self, question_id: int) -> QuestionTruth:
        for t in self.manifest.truth:
            if t.question_id == question_id:
                return t
        raise KeyError(question_id)

    def person(self, subject: int) -> PersonWorld:
        for p in self.manifest.persons:
            if p.subject == subject:
                return p
        raise KeyError(subject)


def default_ego_suite_dir(config: EgoSuiteConfig) -> Path:
    """Where a config's suite is cached: ``<m3kit cache>/synth/ego/<config hash[:16]>``."""
    return cache_dir() / "synth" / "ego" / config.config_hash()[:16]


def build_ego_suite(out_dir: str | Path | None = None,
                    config: EgoSuiteConfig | None = None) -> EgoSuite:
    """Build (or reuse) the suite of ``config`` (default ``EgoSuiteConfig()``, the small one)
    in ``out_dir`` (default: the m3kit cache, ``default_ego_suite_dir``)."""
    config = config if config is not None else EgoSuiteConfig()
    root = Path(out_dir) if out_dir is not None else default_ego_suite_dir(config)
    try:
        current = load_ego_suite(root)
    except SynthError:
        current = None
    if current is not None and current.manifest.config_hash == config.config_hash():
        return current
    began = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    (root / EGO_MANIFEST).unlink(missing_ok=True)
    worlds = [generate_person(config, n) for n in range(1, config.persons + 1)]
    for world in worlds:
        for session in world.sessions:
            _write_session(root, session, config, world.subject)
    records, truth = suite_questions(worlds, config)
    atomic_write_text(root / ALL_QA_PATH, "[\n" + ",\n".join(
        r.model_dump_json() for r in records) + "\n]\n")
    manifest = EgoSuiteManifest(
        config=config, config_hash=config.config_hash(), persons=worlds, truth=truth,
        counts=dict(Counter(r.metadata.skill for r in records)),
        build_seconds=round(time.perf_counter() - began, 3))
    atomic_write_text(root / EGO_MANIFEST, manifest.model_dump_json(indent=1))
    return EgoSuite(root=root, manifest=manifest, questions=records)


def load_ego_suite(out_dir: str | Path) -> EgoSuite:
    """Open a built suite folder; ``SynthError`` names what is missing or malformed."""
    root = Path(out_dir)
    manifest = read_manifest(root, EgoSuiteManifest, _files)
    qa = root / ALL_QA_PATH
    try:
        questions = [QARecord.model_validate(r) for r in json.loads(qa.read_text("utf-8"))]
    except (ValueError, ValidationError) as exc:
        raise SynthError(f"unreadable: {exc}", path=qa) from None
    return EgoSuite(root=root, manifest=manifest, questions=questions, cached=True)


def _files(manifest: EgoSuiteManifest) -> list[str]:
    files = [ALL_QA_PATH]
    for person in manifest.persons:
        for s in person.sessions:
            files += [aligned_transcript_path(s.subject, s.video_id),
                      whisper_transcript_path(s.subject, s.video_id)]
            if s.has_video:
                files.append(video_path(s.subject, s.video_id))
    return files


def _write_session(root: Path, session: Session, config: EgoSuiteConfig, subject: int) -> None:
    if session.has_video:
        render_session(session, root / video_path(subject, session.video_id),
                       size=config.size, fps=config.fps)
    aligned = AlignedTranscript(
        metadata={"video_id": session.video_id, "subject": subject,
                  "start_time_unix": session.start_unix, "duration": session.duration,
                  "source": "m3kit synthetic egocentric suite"},
        transcript=session.transcript)
    atomic_write_text(root / aligned_transcript_path(subject, session.video_id),
                      aligned.model_dump_json(indent=1))
    atomic_write_text(root / whisper_transcript_path(subject, session.video_id),
                      _whisper(session).model_dump_json(indent=1))


def _whisper(session: Session) -> WhisperTranscript:
    """The speech lines under diarisation labels (``SPEAKER_00``...) in order of first voice:
    not the questions' person labels, as in the release; sounds are not transcribed."""
    speakers: dict[str | None, str] = {}
    segments = []
    for line in session.transcript:
        if line.kind != "speech":
            continue
        label = speakers.setdefault(line.person, f"SPEAKER_{len(speakers):02d}")
        segments.append(WhisperSegment(start=line.start, end=line.end, text=line.text,
                                       speaker=label))
    return WhisperTranscript(segments=segments)
