"""The released layout loads; every bad record is skipped and named; review files are honoured."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from m3kit.benchmarks.m3eval.load import (
    load_m3eval,
    measure_of,
    normalize_condition,
)
from m3kit.errors import SchemaError
from m3kit.schema import ChoiceRole


def test_questions_and_metadata(released_root: Path) -> None:
    loaded = load_m3eval(released_root)
    by_id = {q.id: q for q in loaded.questions}
    # 11 split-screen + 6 interference + 3 repetition-file + 6 interleaved + 6 N-Back
    assert len(loaded.questions) == 32
    counts = {p: len(loaded.select(p)) for p in
              ("divided_attention", "interference", "interleaved", "nback")}
    assert counts == {"divided_attention": 11, "interference": 9, "interleaved": 6, "nback": 6}

    ss1 = by_id["ss-1"]
    assert ss1.text == "Question ss-1?" and ss1.answer == "A"
    assert [c.text for c in ss1.choices][:1] == ["the cook stirs the pot"]
    assert ss1.media[0].path == "videos/split_screen/pair1_swap0.mp4"
    meta = ss1.metadata
    assert (meta["paradigm"], meta["question_type"], meta["error_type"], meta["condition"],
            meta["source_dimension"], meta["measure"]) == (
        "divided_attention", "storyline_reconstruction", "source_confusion", "swap0",
        "spatial", "source_identification")
    assert meta["memory_key"] == ss1.media[0].path
    assert meta["released"]["paper_v4_metric_group"] == "swap0"

    assert by_id["ss-7"].metadata["measure"] == "source_memory"
    assert by_id["il-4"].metadata["measure"] == "false_memory_discrimination"
    assert by_id["il-4"].metadata["condition"] is None

    nb5 = by_id["nb-5"]
    assert (nb5.metadata["attribute"], nb5.metadata["n"], nb5.metadata["k"]) == ("scene", 3, 4)
    assert [c.text for c in nb5.choices] == ["Yes", "No"] and nb5.answer == "A"
    assert by_id["nb-2"].answer == "B"  # gold "No"


def test_roles_and_intrusion_fallback(released_root: Path) -> None:
    by_id = {q.id: q for q in load_m3eval(released_root).questions}
    mi1 = by_id["mi-1"]
    assert [c.role for c in mi1.choices] == [ChoiceRole.CORRECT, ChoiceRole.INTRUSION,
                                             ChoiceRole.IRRELEVANT_DISTRACTOR,
                                             ChoiceRole.INTRUSION]
    assert mi1.metadata["condition"] == "proactive"
    # no role map: intrusion_option_letter C becomes the intrusion role
    assert [c.role for c in by_id["mi-3"].choices] == [None, None, ChoiceRole.INTRUSION, None]
    assert by_id["mi-4"].metadata["condition"] == "retroactive"  # interference_direction
    assert all(c.role is None for c in by_id["mi-5"].choices)
    assert by_id["mt-1"].metadata["condition"] == "repeat_target"  # m3kit's builder label
    assert by_id["mt-2"].metadata["condition"] == "repeat_interferer"  # "V1,V2,V2"
    # in repeat_interferer_qa.json, but the record names no condition: none is guessed
    assert by_id["mt-3"].metadata["condition"] is None


def test_bad_records_are_skipped_and_named(released_root: Path) -> None:
    skipped = {(s.record, s.field): s for s in load_m3eval(released_root).skipped}
    assert set(skipped) == {
        ("bad-escape", "video"), ("bad-absolute", "video"), ("bad-option", "options.2"),
        ("14", "id"), ("bad-answer", "answer"), ("bad-role", "answer"),
        ("8", None), ("9 (id bad-n)", "n_value"),
    }
    assert skipped[("bad-escape", "video")].file.endswith("split_screen_qa.json")
    assert "leaves the M3Eval root" in skipped[("bad-escape", "video")].reason
    assert "invalid JSON" in skipped[("8", None)].reason
    assert "nback_questions.jsonl" in str(skipped[("8", None)])


def test_a_folder_linked_from_outside_the_root_is_refused(released_root: Path,
                                                          tmp_path: Path) -> None:
    """The root must hold its videos. ``videos/interleaved`` as a symbolic link to a folder on
    "another disk" takes every record under it out of the root: each is skipped and named (the
    link would otherwise let a crafted archive expose any folder). The same link pointing at a
    folder inside the root is followed, and its records load and decode through it."""
    import av

    root = tmp_path / "release"
    shutil.copytree(released_root, root)
    path = root / "qa_root" / "interleaved" / "interleaved_qa.json"
    records = json.loads(path.read_text())
    ids = [r["id"] for r in records]
    records[1]["video"] = "videos/./interleaved/../interleaved/pair3.mp4"  # normalised, inside
    records[2]["video"] = "videos/interleaved/../../../other_disk/interleaved/pair3.mp4"
    path.write_text(json.dumps(records))

    outside = tmp_path / "other_disk" / "interleaved"
    shutil.move(root / "videos" / "interleaved", outside)
    os.symlink(outside, root / "videos" / "interleaved", target_is_directory=True)
    loaded = load_m3eval(root)
    skipped = {s.record: s for s in loaded.skipped if s.file.endswith("interleaved_qa.json")}
    assert not any(q.id in ids for q in loaded.questions)
    assert sorted(skipped) == sorted(ids)
    assert all(s.field == "video" for s in skipped.values())
    assert "leaves the M3Eval root through a symbolic link" in skipped[ids[0]].reason
    assert "leaves the M3Eval root" in skipped[ids[2]].reason  # ``..`` climbing out

    (root / "videos" / "interleaved").unlink()
    inside = root / "media" / "interleaved"
    shutil.move(outside, inside)
    os.symlink(inside, root / "videos" / "interleaved", target_is_directory=True)
    loaded = load_m3eval(root)
    by_id = {q.id: q for q in loaded.questions}
    skipped = {s.record: s for s in loaded.skipped if s.file.endswith("interleaved_qa.json")}
    assert list(skipped) == [ids[2]]
    assert by_id[ids[0]].media[0].path == "videos/interleaved/pair3.mp4"
    # the form that gets opened
    assert by_id[ids[1]].media[0].path == "videos/interleaved/pair3.mp4"
    with av.open(str(root / by_id[ids[0]].media[0].path)) as container:
        assert next(container.decode(video=0)).width > 0


def test_unusable_files(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="not a folder"):
        load_m3eval(tmp_path / "missing")
    with pytest.raises(SchemaError, match="qa_root"):
        load_m3eval(tmp_path)
    bad = tmp_path / "qa_root" / "interleaved"
    bad.mkdir(parents=True)
    (bad / "interleaved_qa.json").write_text("{not json")
    (bad / "other_qa.json").write_text('{"a": 1}')
    loaded = load_m3eval(tmp_path)
    assert loaded.questions == []
    reasons = sorted(s.reason for s in loaded.skipped)
    assert reasons[0].startswith("expected a JSON list") and reasons[1].startswith("invalid JSON")


def test_review_keeps_only_accepted(released_root: Path, tmp_path: Path) -> None:
    review = tmp_path / "review.csv"
    review.write_text("id,status\nss-1,accepted\nss-2,rejected\nnb-1,accepted\n",
                      encoding="utf-8")
    loaded = load_m3eval(released_root, review=review)
    assert [q.id for q in loaded.questions] == ["ss-1", "nb-1"]
    statuses = {s.record: s.reason for s in loaded.skipped if s.field == "status"}
    assert statuses["ss-2"] == "review status rejected, not accepted"
    assert statuses["ss-3"] == "review status pending, not accepted"  # not in the file
    with pytest.raises(SchemaError, match="review file not found"):
        load_m3eval(released_root, review=tmp_path / "none.csv")


def test_review_file_in_the_root_is_used(released_root: Path, tmp_path: Path) -> None:
    root = tmp_path / "release"
    shutil.copytree(released_root, root)
    (root / "review").mkdir()
    (root / "review" / "review.csv").write_text("id,status\nmi-2,accepted\n", encoding="utf-8")
    assert [q.id for q in load_m3eval(root).questions] == ["mi-2"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [("swap0", "swap0"), ("No swap", "swap0"), ("swap10", "swap10"), ("swap2", "swap2"),
     ("[V1, V1, V2]", "repeat_target"), ("v1_v2_v2", "repeat_interferer"),
     ("repeat_target", "repeat_target"), ("repeat_interferer", "repeat_interferer"),
     ("proactive", "proactive"), ("retroactive", "retroactive"), ("", None), (None, None)],
)
def test_condition_names(value: str | None, expected: str | None) -> None:
    assert normalize_condition(value) == expected


def test_measures_from_either_vocabulary() -> None:
    assert measure_of({"question_type": "storyline_reconstruction",
                       "error_type": "order_disruption"}) == "order_understanding"
    assert measure_of({"question_type": "false_source_attribution"}) == \
        "false_memory_discrimination"
    assert measure_of({}, "content_retention") == "content_retention"  # synthetic suite
    assert measure_of({"question_type": "unknown"}) is None
