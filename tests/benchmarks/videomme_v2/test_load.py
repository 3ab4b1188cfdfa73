"""Loading the released layout: parquet / JSONL / TSV, groups by id, bad input reported."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from m3kit.benchmarks.videomme_v2.load import VideoMMEv2Error, load_videomme_v2
from m3kit.benchmarks.videomme_v2.predictions import PredictionError, read_predictions
from m3kit.metrics.groups import GroupStructure, GroupType

from .conftest import rows, write_table
from .harness_outputs import (
    lmms_eval_samples,
    vlmevalkit_json,
    vlmevalkit_tsv,
    vlmevalkit_xlsx,
)


@pytest.mark.parametrize("table", ["test.parquet", "test.jsonl", "test.tsv"])
def test_loads_every_format_the_same(tmp_path: Path, table: str) -> None:
    write_table(tmp_path / table, rows())
    data = load_videomme_v2(tmp_path)
    assert data.skipped == []
    assert [g.id for g in data.groups] == ["001", "002", "003", "004"]
    assert [g.type for g in data.groups] == [GroupType.RELEVANCE, *[GroupType.LOGIC] * 3]
    assert [g.structure for g in data.groups] == [
        None, GroupStructure.CHAIN, GroupStructure.PARALLEL_MIDDLE, GroupStructure.PARALLEL_FIRST,
    ]
    # level and heads were only on the last question; the group has them, and so do all four
    g3 = data.groups[2]
    assert (g3.level, g3.second_head, g3.third_head) == (
        3, "Physical World Reasoning", "Spatial Understanding")
    q = data.questions[8]  # 003-1
    assert q.id == "003-1" and q.metadata["level"] == 3
    assert q.group is not None and (q.group.id, q.group.position) == ("003", 1)
    assert [c.letter for c in q.choices] == list("ABCDEFGH")
    assert q.choices[4].text == "The umbrella is purple."
    assert q.answer == "C"
    assert q.media[0].path == "videos/003.mp4"
    assert q.metadata["options_text"].splitlines()[0] == "A. The umbrella is red."


def test_shuffled_rows_make_the_same_groups(tmp_path: Path) -> None:
    shuffled = rows()
    random.Random(7).shuffle(shuffled)
    write_table(tmp_path / "test.parquet", shuffled)
    data = load_videomme_v2(tmp_path)
    assert [g.question_ids for g in data.groups] == [
        tuple(f"{v}-{n}" for n in range(1, 5)) for v in ("001", "002", "003", "004")
    ]
    assert [q.id for q in data.questions][:4] == ["001-1", "001-2", "001-3", "001-4"]


def test_labels_on_any_one_question_are_taken(tmp_path: Path) -> None:
    records = rows()
    # move group 002's level and heads from Q4 to Q2
    for key in ("level", "second_head", "third_head"):
        records[5][key], records[7][key] = records[7][key], None
    write_table(tmp_path / "test.jsonl", records)
    g2 = load_videomme_v2(tmp_path).groups[1]
    assert (g2.level, g2.second_head) == (2, "Order")


def _skipped_groups(tmp_path: Path, records: list[dict]) -> tuple[list[str], list[str]]:
    write_table(tmp_path / "test.jsonl", records)
    data = load_videomme_v2(tmp_path)
    return [g.id for g in data.groups], [str(e) for e in data.skipped]


def test_short_group_is_skipped_and_reported(tmp_path: Path) -> None:
    records = [r for r in rows() if r["question_id"] != "002-3"]
    kept, skipped = _skipped_groups(tmp_path, records)
    assert kept == ["001", "003", "004"]
    assert len(skipped) == 1 and "group 002" in skipped[0] and "has 3" in skipped[0]


def test_fifth_question_is_skipped_and_reported(tmp_path: Path) -> None:
    records = rows()
    extra = dict(records[0], question_id="001-5")
    kept, skipped = _skipped_groups(tmp_path, [*records, extra])
    assert kept == ["002", "003", "004"]
    assert "001-5" in skipped[0] and "outside 1-4" in skipped[0]
    # the message names what was lost: the whole group, all five of its questions
    assert "group 001 skipped: 5 question(s) (001-1…001-5)" in skipped[0]
    assert len(skipped) == 1


def test_duplicate_id_is_skipped_and_reported(tmp_path: Path) -> None:
    records = rows()
    kept, skipped = _skipped_groups(tmp_path, [*records, dict(records[9])])
    assert kept == ["001", "002", "004"]
    assert "003-2 appears twice" in skipped[0]


def test_unknown_structure_is_skipped_and_reported(tmp_path: Path) -> None:
    records = rows()
    for r in records[12:16]:
        r["group_structure"] = "[1, 2, [3, 4]]"
    kept, skipped = _skipped_groups(tmp_path, records)
    assert kept == ["001", "002", "003"]
    assert "group 004" in skipped[0] and "'group_structure'" in skipped[0]


def test_conflicting_labels_are_reported(tmp_path: Path) -> None:
    records = rows()
    records[0]["level"] = 3  # 001's Q1 says level 3, Q4 says level 1
    kept, skipped = _skipped_groups(tmp_path, records)
    assert kept == ["002", "003", "004"]
    assert "disagree on level" in skipped[0]


def test_bad_row_skips_its_whole_group(tmp_path: Path) -> None:
    records = rows()
    records[6]["answer"] = "Z"  # 002-3
    kept, skipped = _skipped_groups(tmp_path, records)
    assert kept == ["001", "003", "004"]
    assert "record 002-3" in skipped[0] and "'answer'" in skipped[0]
    assert "group 002 skipped: 4 question(s) (002-1…002-4)" in skipped[1]
    assert "002-3 malformed" in skipped[1]


def test_missing_table_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(VideoMMEv2Error, match="no test.parquet"):
        load_videomme_v2(tmp_path)


def test_predictions_jsonl_tsv_and_lmms_eval(tmp_path: Path) -> None:
    jsonl = tmp_path / "p.jsonl"
    jsonl.write_text('{"question_id": "001-1", "prediction": "B"}\n'
                     '{"question_id": "001-2", "prediction": null}\n', encoding="utf-8")
    assert _replies(jsonl) == {"001-1": "B", "001-2": ""}
    tsv = tmp_path / "p.tsv"
    tsv.write_text("index\tquestion_id\tprediction\n0\t001-1\tFinal Answer: C\n1\t001-2\t\n",
                   encoding="utf-8")
    assert _replies(tsv) == {"001-1": "Final Answer: C", "001-2": ""}
    # a log that keeps the dataset row (lm-eval-harness style)
    kept_doc = tmp_path / "samples_kept_doc.jsonl"
    kept_doc.write_text('{"doc_id": 0, "doc": {"question_id": "001-1"}, "resps": [["D"]], '
                        '"filtered_resps": ["D"]}\n', encoding="utf-8")
    assert _replies(kept_doc) == {"001-1": "D"}


def test_predictions_from_lmms_eval_log_samples(tmp_path: Path) -> None:
    table = rows()
    path = lmms_eval_samples(tmp_path, table, {"001-1": "E", "001-2": "Final Answer: B"},
                             raw={"001-2": "<think>green?</think> Final Answer: B"})
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert "doc" not in first and "question_id" not in first  # the id is in the metric entry
    # the reply after lmms-eval's filters is what its own scorer saw
    assert _replies(path) == {"001-1": "E", "001-2": "Final Answer: B"}


def test_predictions_from_vlmevalkit_tsv_and_json(tmp_path: Path) -> None:
    replies = {"001-1": "E", "001-2": "The answer is A.\nThe\tbicycle is red.", "001-3": None}
    expected = {r["question_id"]: replies.get(r["question_id"]) or "" for r in rows()}
    assert _replies(vlmevalkit_tsv(tmp_path, rows(), replies)) == expected
    assert _replies(vlmevalkit_json(tmp_path, rows(), replies)) == expected
    # VLMEvalKit's default: the .xlsx sheet, read as it is
    assert _replies(vlmevalkit_xlsx(tmp_path, rows(), replies)) == expected
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"PK\x03\x04")
    with pytest.raises(PredictionError, match="not a readable .xlsx"):
        read_predictions(broken)


def test_non_utf8_prediction_rows_are_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "preds.tsv"
    # Latin-1 "é" (0xE9) is not UTF-8: that row is skipped, the next one is read
    path.write_bytes(b"question_id\tprediction\n001-1\tr\xe9ponse A\n001-2\tB\n")
    replies, skipped = read_predictions(path)
    assert replies == {"001-2": "B"}
    assert [(s.file, s.record, s.reason) for s in skipped] == [
        (str(path), "2", "not UTF-8 text")]
    jsonl = tmp_path / "preds.jsonl"
    jsonl.write_bytes(b'{"question_id": "001-1", "prediction": "r\xe9ponse"}\n'
                      b'{"question_id": "001-2", "prediction": "C"}\n')
    replies, skipped = read_predictions(jsonl)
    assert replies == {"001-2": "C"}
    assert [(s.record, s.reason) for s in skipped] == [
        ("1", "not UTF-8 text (byte 42 of the line)")]
    header = tmp_path / "bad_header.tsv"
    header.write_bytes(b"question_id\tpr\xe9diction\n001-1\tA\n")
    with pytest.raises(PredictionError, match="header row is not UTF-8") as info:
        read_predictions(header)
    assert len(str(info.value).splitlines()) == 1


def test_duplicate_and_malformed_predictions_are_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text('{"question_id": "001-1", "prediction": "B"}\n'
                    '{"question_id": "001-1", "prediction": "C"}\n'
                    'not json\n'
                    '{"question_id": "001-3", "prediction": {"answer": "D"}}\n'
                    '{"prediction": "E"}\n'
                    '{"question_id": "001-4", "prediction": "A"}\n', encoding="utf-8")
    replies, skipped = read_predictions(path)
    assert replies == {"001-1": "B", "001-4": "A"}  # the first of the repeated id is kept
    assert [(s.record, s.field) for s in skipped] == [
        ("2 (id 001-1)", "id"), ("3", None), ("4 (id 001-3)", "prediction"), ("5", "id")]
    assert "given again" in skipped[0].reason and "invalid JSON" in skipped[1].reason
    assert "no question_id" in skipped[3].reason


def test_a_bad_jsonl_line_costs_its_group_only(tmp_path: Path) -> None:
    write_table(tmp_path / "test.jsonl", rows())
    table = tmp_path / "test.jsonl"
    lines = table.read_text(encoding="utf-8").splitlines()
    lines[5] = lines[5][:-5]  # 002-2 cut short: not JSON any more
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data = load_videomme_v2(tmp_path)
    assert [g.id for g in data.groups] == ["001", "003", "004"]
    first, second = (str(e) for e in data.skipped)
    assert first.startswith(f"{table}: record 6: row skipped: invalid JSON")
    assert "group 002 skipped: 3 question(s) (002-1…002-4)" in second


@pytest.mark.parametrize("video_id", ["../outside", "/etc/x", "a/b", "nul\x00byte"])
def test_video_ids_that_are_no_plain_name_skip_their_group(tmp_path: Path, video_id: str
                                                          ) -> None:
    records = rows()
    for r in records[:4]:
        r["video_id"] = video_id
        r["question_id"] = f"{video_id}-{r['question_id'][-1]}"
    data = _loaded(tmp_path, records)
    assert [g.id for g in data.groups] == ["002", "003", "004"]
    (error,) = data.skipped
    assert error.field == "video_id" and "group" in error.reason


def test_a_video_linking_out_of_the_folder_skips_its_group(tmp_path: Path) -> None:
    secret = tmp_path / "secret.mp4"
    secret.write_bytes(b"not yours")
    root = tmp_path / "release"
    (root / "videos").mkdir(parents=True)
    (root / "videos" / "002.mp4").symlink_to(secret)
    data = _loaded(root, rows())
    assert [g.id for g in data.groups] == ["001", "003", "004"]
    (error,) = data.skipped
    assert (error.record, error.field) == ("group 002", "video_id")
    assert "symbolic link" in error.reason


def test_a_media_folder_linking_out_of_the_root_skips_every_group(tmp_path: Path) -> None:
    """The root must hold its media: ``subtitles/`` linked to another disk takes every subtitle
    path out of the root, so every group is refused by name; a folder link that stays inside the
    root is followed."""
    root = tmp_path / "release"
    (root / "media" / "videos").mkdir(parents=True)
    (root / "videos").symlink_to(root / "media" / "videos", target_is_directory=True)
    elsewhere = tmp_path / "big_disk"
    elsewhere.mkdir()
    (root / "subtitles").symlink_to(elsewhere, target_is_directory=True)
    data = _loaded(root, rows())
    assert data.groups == []
    assert [(e.record, e.field) for e in data.skipped] == [
        (f"group {g}", "video_id") for g in ("001", "002", "003", "004")]
    assert all("leaves the data root through a symbolic link" in e.reason for e in data.skipped)
    (root / "subtitles").unlink()
    assert [g.id for g in _loaded(root, rows()).groups] == ["001", "002", "003", "004"]


def _loaded(root: Path, records: list[dict]):
    write_table(root / "test.jsonl", records)
    return load_videomme_v2(root)


def _replies(path: Path) -> dict[str, str]:
    replies, skipped = read_predictions(path)
    assert skipped == []
    return replies
