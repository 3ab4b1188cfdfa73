"""The data fingerprint covers the media a data set's samples read, not its question file alone:
the same questions over other videos or transcripts are another data set."""

from __future__ import annotations

import os
from pathlib import Path

from m3kit.harness.card import data_fingerprint
from m3kit.media.identity import BLOCK, IdentityCache, file_identity
from m3kit.schema.card import files_fingerprint


def _data(root: Path, video: bytes = b"video-1", transcript: bytes = b'{"t": 1}') -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "questions.json").write_bytes(b'[{"id": "q1"}]')
    (root / "v.mp4").write_bytes(video)
    (root / "t.json").write_bytes(transcript)
    return root


def _fingerprint(root: Path, **options: object) -> str | None:
    return data_fingerprint([root / "questions.json"], [root / "v.mp4", root / "t.json"],
                            **options)  # type: ignore[arg-type]


def test_other_media_under_the_same_questions_are_another_data_set(tmp_path: Path) -> None:
    base = _fingerprint(_data(tmp_path / "a"))
    assert base == _fingerprint(_data(tmp_path / "copy"))  # the same bytes elsewhere
    assert _fingerprint(_data(tmp_path / "video", video=b"video-2")) != base
    assert _fingerprint(_data(tmp_path / "said", transcript=b'{"t": 2}')) != base
    # a question file's fingerprint alone would not tell them apart
    assert files_fingerprint([tmp_path / "a" / "questions.json"]) == files_fingerprint(
        [tmp_path / "video" / "questions.json"])


def test_a_question_file_only_data_set_keeps_its_old_fingerprint(tmp_path: Path) -> None:
    root = _data(tmp_path / "a")
    # no media (LoCoMo's text, an M3Exam persona without attachments): as before media entered
    assert data_fingerprint([root / "questions.json"]) == files_fingerprint(
        [root / "questions.json"])
    assert data_fingerprint([]) is None  # questions built in code: no data set to name


def test_a_missing_media_file_counts_and_its_arrival_changes_it(tmp_path: Path) -> None:
    root = _data(tmp_path / "a")
    with_video = _fingerprint(root)
    (root / "v.mp4").unlink()
    without = _fingerprint(root)
    (root / "v.mp4").mkdir()  # not a file either: absent, never an error
    assert _fingerprint(root) == without != with_video
    assert without != data_fingerprint([root / "questions.json"], [root / "t.json"])


def test_each_file_once_and_in_order(tmp_path: Path) -> None:
    root = _data(tmp_path / "a")
    video, said = root / "v.mp4", root / "t.json"
    questions = [root / "questions.json"]
    once = data_fingerprint(questions, [video, said])
    # a video named by many questions (or a PDF by its pages) counts once
    assert data_fingerprint(questions, [video, said, video, said]) == once
    # which file comes first is part of the data set (files are swapped between sessions)
    assert data_fingerprint(questions, [said, video]) != once


def test_media_are_hashed_by_a_bounded_sample_once_per_cache(tmp_path: Path) -> None:
    root = _data(tmp_path / "a")
    big = root / "v.mp4"
    with big.open("wb") as handle:  # 8 MiB: only its first, middle and last MiB are read
        handle.write(os.urandom(8 * BLOCK))
    cache = IdentityCache()
    first = _fingerprint(root, identities=cache)
    assert len(cache) == 2 and cache.identity(big) == file_identity(big)
    # a byte outside the sampled blocks is not seen; the size, or a sampled byte, is
    with big.open("r+b") as handle:
        handle.seek(2 * BLOCK)
        handle.write(b"x")
    assert _fingerprint(root, identities=cache) == first
    with big.open("ab") as handle:
        handle.write(b"more")
    assert _fingerprint(root, identities=cache) != first
