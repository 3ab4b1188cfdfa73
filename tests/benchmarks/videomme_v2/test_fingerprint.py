"""Video-MME-v2's data fingerprint covers each group's video and subtitle file, not the table
alone: the same questions over another video or subtitles are another data set."""

from __future__ import annotations

from pathlib import Path

from m3kit.benchmarks.videomme_v2.load import load_videomme_v2, media_files
from m3kit.benchmarks.videomme_v2.task import videomme_v2
from m3kit.schema.card import TASK_CARD_KEY

from .conftest import write_release


def _fingerprint(data: Path) -> str:
    return videomme_v2(data=str(data)).metadata[TASK_CARD_KEY]["data_fingerprint"]


def test_each_groups_video_and_subtitles_count(tmp_path: Path, release_video: Path,
                                               pattern_video_factory) -> None:
    data = write_release(tmp_path / "rel", release_video)
    loaded = load_videomme_v2(data)
    assert media_files(loaded) == [data / sub / f"{group.id}{ext}" for group in loaded.groups
                                   for sub, ext in (("videos", ".mp4"),
                                                    ("subtitles", ".jsonl"))]
    before = _fingerprint(data)
    subtitle = data / "subtitles" / f"{loaded.groups[0].id}.jsonl"
    with subtitle.open("a", encoding="utf-8") as handle:  # one more (blank) line
        handle.write("\n")
    edited = _fingerprint(data)
    assert edited != before
    other = pattern_video_factory(seconds=2.0)
    (data / "videos" / f"{loaded.groups[-1].id}.mp4").write_bytes(other.read_bytes())
    assert _fingerprint(data) not in (before, edited)
