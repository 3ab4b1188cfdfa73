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
complete; building again with the same config returns it as it is. A folder given with
``out_dir`` that holds anything else (an earlier suite of another config, other files) is
refused, not written over: files the new suite does not list (a stale ``P1_D3`` of a suite with
more days) would join its persons' timelines. An empty folder, a missing one, or one holding
this config's suite (complete, damaged, or cut short while building, which a marker file
``BUILDING`` names) is built in. The SuperMemory-VQA loader names the files of a suite folder
that its ``suite.json`` does not list (``suite_files``) and leaves them out.
"""

from __future__ import annotations

import json
import os
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
from m3kit.synth.ego.world import PersonWorld, SessionScript, generate_person
from m3kit.synth.errors import SynthError
from m3kit.synth.manifest import MANIFEST, read_manifest

__all__ = [
    "BUILDING",
    "EGO_MANIFEST",
    "EgoSuite",
    "EgoSuiteManifest",
    "build_ego_suite",
    "default_ego_suite_dir",
    "load_ego_suite",
    "suite_files",
]

EGO_MANIFEST = MANIFEST
# Written first (the config's hash) and removed once ``suite.json`` is: a folder holding it is a
# build of that config cut short, which the same config may finish.
BUILDING = ".building"


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
    in ``out_dir`` (default: the m3kit cache, ``default_ego_suite_dir``). ``SynthError`` when
    ``out_dir`` is a file, holds something that is not this config's suite (see the module
    doc), or cannot be written."""
    config = config if config is not None else EgoSuiteConfig()
    root = Path(out_dir) if out_dir is not None else default_ego_suite_dir(config)
    if root.exists() and not root.is_dir():
        raise SynthError("is not a folder: give a folder to write the suite into", path=root)
    try:
        current = load_ego_suite(root)
    except SynthError:
        current = None
    if current is not None and current.manifest.config_hash == config.config_hash():
        return current
    # the cache folder is named by the config's hash: nothing of another suite is in it
    if out_dir is not None:
        _refuse_other_content(root, config)
    try:
        return _build(root, config)
    except OSError as exc:
        raise SynthError(f"cannot be written: {exc.strerror or exc}",
                         path=exc.filename or root) from None


def _refuse_other_content(root: Path, config: EgoSuiteConfig) -> None:
    """``SynthError`` when ``root`` holds anything and is not (part of) ``config``'s suite."""
    try:
        entries = os.listdir(root)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise SynthError(f"cannot be read: {exc.strerror or exc}", path=root) from None
    if not entries or config.config_hash() in (_built_hash(root), _building_hash(root)):
        return
    raise SynthError(
        f"is not empty and does not hold this suite (config hash {config.config_hash()[:16]}): "
        "files of an earlier suite or others would join it (a stale day on a person's "
        "timeline); give an empty or new folder, or delete this one first", path=root)


def _built_hash(root: Path) -> str | None:
    try:
        return EgoSuiteManifest.model_validate_json(
            (root / EGO_MANIFEST).read_text("utf-8")).config_hash
    except (OSError, ValueError):
        return None


def _building_hash(root: Path) -> str | None:
    try:
        return (root / BUILDING).read_text("utf-8").strip() or None
    except (OSError, ValueError):
        return None


def _build(root: Path, config: EgoSuiteConfig) -> EgoSuite:
    began = time.perf_counter()
    root.mkdir(parents=True, exist_ok=True)
    (root / EGO_MANIFEST).unlink(missing_ok=True)
    atomic_write_text(root / BUILDING, config.config_hash())
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
    (root / BUILDING).unlink(missing_ok=True)
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


def suite_files(out_dir: str | Path) -> list[str] | None:
    """The files the suite manifest in ``out_dir`` lists (paths relative to it, ``suite.json``
    itself included), whether they are all there or not; ``None`` when ``out_dir`` holds no
    ``suite.json``. ``SynthError`` names a ``suite.json`` that is not an egocentric suite's."""
    path = Path(out_dir) / EGO_MANIFEST
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise SynthError(f"cannot be read: {exc}", path=path) from None
    try:
        manifest = EgoSuiteManifest.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise SynthError(f"not an egocentric suite's manifest: {err['msg']}", path=path,
                         field=".".join(str(x) for x in err["loc"]) or None) from None
    return [EGO_MANIFEST, *_files(manifest)]


def _files(manifest: EgoSuiteManifest) -> list[str]:
    files = [ALL_QA_PATH]
    for person in manifest.persons:
        for s in person.sessions:
            files += [aligned_transcript_path(s.subject, s.video_id),
                      whisper_transcript_path(s.subject, s.video_id)]
            if s.has_video:
                files.append(video_path(s.subject, s.video_id))
    return files


def _write_session(root: Path, session: SessionScript, config: EgoSuiteConfig,
                   subject: int) -> None:
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


def _whisper(session: SessionScript) -> WhisperTranscript:
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
