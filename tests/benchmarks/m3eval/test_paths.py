"""M3Eval ``video`` fields: ``..``, absolute paths, a video file linking out of the root and
NUL bytes are named skips; the other records load (a NUL byte once ended the whole run)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from m3kit.benchmarks.m3eval.load import load_m3eval
from m3kit.benchmarks.m3eval.predictions import read_predictions


def test_hostile_video_fields_skip_their_record_only(released_root: Path,
                                                    tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(released_root, root)
    secret = tmp_path / "secret.mp4"
    secret.write_bytes(b"not yours")
    (root / "videos" / "interleaved" / "leak.mp4").symlink_to(secret)
    path = root / "qa_root" / "interleaved" / "interleaved_qa.json"
    records = json.loads(path.read_text())
    before = len(load_m3eval(root).questions)
    hostile = ["../../secret.mp4", str(secret), "videos/interleaved/leak.mp4",
               "videos/interleaved/pair3\x00.mp4"]
    for record, video in zip(records, hostile, strict=False):
        record["video"] = video
    path.write_text(json.dumps(records))
    loaded = load_m3eval(root)
    ids = [r["id"] for r in records[:4]]
    skipped = {s.record: s for s in loaded.skipped if s.file == str(path)}
    assert sorted(skipped) == sorted(ids)
    assert all(skipped[i].field == "video" for i in ids)
    assert "leaves the M3Eval root" in skipped[ids[0]].reason
    assert "is absolute" in skipped[ids[1]].reason
    assert "leaves the M3Eval root through a symbolic link" in skipped[ids[2]].reason
    assert "NUL byte" in skipped[ids[3]].reason
    assert len(loaded.questions) == before - 4
    assert not {q.id for q in loaded.questions} & set(ids)


def test_predictions_one_policy(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_bytes(
        b'{"id": "ss-1", "prediction": "A"}\n'
        b'{"id": "ss-1", "prediction": "B"}\n'
        b'{"id": "ss-2", "prediction": "caf\xe9"}\n'
        b'{"id": "ss-3", "prediction": {"letter": "C"}}\n'
        b'{"question_id": "nb-1", "prediction": "Yes"}\n'
        b'{"id": 7, "prediction": "D"}\n'
        b'not json\n'
    )
    preds, skipped = read_predictions(path)
    assert preds == {"ss-1": "A", "nb-1": "Yes", "7": "D"}
    assert [(s.record, s.field) for s in skipped] == [
        ("2 (id ss-1)", "id"), ("3", None), ("4 (id ss-3)", "prediction"), ("7", None)]
    assert skipped[1].reason == "not UTF-8 text (byte 34 of the line)"
    assert all(s.file == str(path) for s in skipped)
