"""``m3kit m3eval build / generate / review`` on tiny real videos."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.media.generate import write_pattern_video


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    videos = tmp_path_factory.mktemp("videos")
    for name, hue, text in (("cook", 0.0, "A chef chops onions"),
                            ("chef", 0.5, "A cook slices carrots")):
        write_pattern_video(videos / f"{name}.mp4", seconds=2, fps=8, width=64, height=48,
                            hue=hue)
        (videos / f"{name}.txt").write_text(text)
    root = tmp_path_factory.mktemp("bench")
    code = main(["m3eval", "build", str(videos), "--out", str(root), "--swaps", "2",
                 "--segments", "2", "--nback-instances", "0"])
    assert code == 0
    return root


def test_build_writes_probes_and_plan(built: Path, capsys) -> None:
    plan = json.loads((built / "build" / "plan.json").read_text())
    (pair,) = plan["pairs"]
    assert {pair["pair"]["video1"]["id"], pair["pair"]["video2"]["id"]} == {"chef", "cook"}
    assert sorted(pair["probes"]) == sorted(["swap0", "swap2", "retroactive", "proactive",
                                             "repeat_target", "repeat_interferer",
                                             "interleaved"])
    assert all((built / rel).is_file() for rel in pair["probes"].values())


def test_generate_with_a_model_that_never_answers_in_json(built: Path, capsys) -> None:
    # m3kit's offline builtin model is a text-surrogate baseline, not a captioner: it replies
    # in prose, so every caption is retried, then rejected, and the pair gets no questions;
    # the run still finishes and says why.
    code = main(["m3eval", "generate", str(built), "--model", "m3kit/builtin", "--batches",
                 "1", "--frames-per-batch", "1", "--attempts", "2"])
    captured = capsys.readouterr()
    out = captured.out
    # nothing usable: a one-line hint naming the cause, exit 2, the review file still written
    assert code == 2
    (err,) = captured.err.strip().splitlines()[-1:]
    assert "did not produce the caption schema" in err and "2 caption batches" in err
    assert "Traceback" not in captured.err
    # drafts, pairs and caption batches each counted under their own name
    assert "0 drafts passed the checker, 0 drafts rejected" in out
    assert "1 video pairs skipped (no usable captions)" in out
    assert "skipped pair01: no usable captions" in out
    assert "0 caption batches parsed, 2 caption batches rejected" in out
    # What the summary counts is what the review file lists, reasons included:
    # the pair (1) and each video's one caption batch (2) are rejected rows.
    from m3kit.benchmarks.m3eval.construct.review import read_review_items

    rows = {i.id: i for i in read_review_items(built / "review" / "review.csv")}
    assert {k: v.status for k, v in rows.items()} == {
        "pair01": "rejected", "chef_caption_batch0": "rejected",
        "cook_caption_batch0": "rejected"}
    assert "no usable captions" in rows["pair01"].checker
    assert "after 2 replies" in rows["cook_caption_batch0"].checker
    assert rows["cook_caption_batch0"].note.startswith("last reply: ")
    assert main(["m3eval", "review", str(built)]) == 0
    assert "0 accepted, 3 rejected, 0 pending" in capsys.readouterr().out
    # Run again: both videos' captions (rejections included) come from the first run.
    assert main(["m3eval", "generate", str(built), "--model", "m3kit/builtin", "--batches",
                 "1", "--frames-per-batch", "1", "--attempts", "2", "--max-connections",
                 "2"]) == 2
    assert "2 finished units reused" in capsys.readouterr().out
    assert main(["m3eval", "review", str(built)]) == 0  # the rerun did not duplicate rows
    assert "0 accepted, 3 rejected, 0 pending" in capsys.readouterr().out


def test_review_sets_statuses(built: Path, capsys, tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / "review").mkdir(parents=True)
    (root / "review" / "review.csv").write_text("id,status\nq1,pending\nq2,pending\n")
    assert main(["m3eval", "review", str(root), "--reject", "q2", "--accept-pending"]) == 0
    out = capsys.readouterr().out
    assert "2 statuses changed" in out and "1 accepted, 1 rejected, 0 pending" in out
    assert main(["m3eval", "review", str(root), "--accept", "nope"]) == 2
    assert "no such item(s): nope" in capsys.readouterr().err


def test_errors_are_one_line(tmp_path: Path, capsys) -> None:
    assert main(["m3eval", "build", str(tmp_path / "missing"), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "sources file or folder not found" in err and "Traceback" not in err
    assert main(["m3eval", "generate", str(tmp_path), "--model", "m3kit/builtin"]) == 2
    assert "run the build first" in capsys.readouterr().err


def test_generate_against_a_failing_server_stops_with_a_summary(built: Path, capsys, scripted,
                                                                serve) -> None:
    # the first call's two attempts answered HTTP 500: it is retried (one line), then the run
    # stops with one line naming the stage and the item, and the calls' summary. Any later
    # request gets no reply until the server stops: the summary counts what came before the
    # stop and nothing that a busy machine lets through after it (issue 36)
    server = scripted(key_of=lambda prompt: "all",
                      faults={"all": ["server_error"] * 2 + ["hang"] * 100})
    model = serve("broken", server)
    code = main(["m3eval", "generate", str(built), "--model", model, "--batches", "1",
                 "--frames-per-batch", "1", "--call-attempts", "2", "--max-connections", "1",
                 "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "InternalServerError on captions" in err and "(attempt 1 of 2), retrying in 2 s" in err
    assert "model calls: 0 answered, 1 retried, 1 failed (failed attempts: 2× " \
        "InternalServerError)" in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("m3kit: error: record ") and "field 'captions'" in last
    assert "(after 2 attempts)" in last and "Traceback" not in err
    # the failing call's two attempts (one request each), then the stop: at most the next
    # call's first request, already sent, is cut short
    assert 2 <= len(server.records) <= 3
