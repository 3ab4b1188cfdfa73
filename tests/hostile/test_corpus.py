"""Every loader, scorer and memory over the hostile corpus (conftest.py), through the CLI where
a verb exists and through the library for ingest: no traceback, the documented exit code (0:
scored with skips; 2: nothing usable), each bad item named (file, record, field) and counted,
the good items still scored, with values computed by hand."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.memory.retrieval.config import RetrievalConfig
from m3kit.schema import SkippedRecord

from .conftest import PERSONA, HostileCorpus


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


def skipped_lines(err: str) -> list[str]:
    """The skips a score verb names on stderr: every verb prefixes them ``m3kit: skipped: ``."""
    lines = [line for line in err.splitlines() if "skipped: " in line]
    assert all(line.startswith("m3kit: skipped: ") for line in lines), lines
    return [line.removeprefix("m3kit: skipped: ") for line in lines]


def test_m3exam_persona_and_predictions(hostile: HostileCorpus, capsys) -> None:
    """Four refused image paths (``..``, absolute, a link out, a NUL byte): the round is kept
    without them; a non-UTF-8 predictions line and a repeated id: the first good one counts."""
    code, out, err = run_cli(["score", "m3exam", "--data", str(hostile.persona),
                              "--predictions", str(hostile.m3exam_predictions), "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    # Eve_Crafted/0 "Miso" (the later "Tom" ignored) and /1 "fox" (after its non-UTF-8 line):
    # both exact, so EM = F1 = BLEU-1 = 2/2.
    assert result["total"]["count"] == 2 and result["n_missing"] == 0
    assert (result["total"]["em"], result["total"]["f1"], result["total"]["bleu1"]) == (1, 1, 1)
    skipped = [str(SkippedRecord.model_validate(r)) for r in result["skipped"]]
    assert len(skipped) == 6 == result["n_skipped_records"]
    predictions, sessions = str(hostile.m3exam_predictions), str(hostile.persona / "sessions.json")
    where = f"{sessions}: record D1:1: field 'img_file': image refused: "
    # the data's skips first, then the predictions file's
    assert skipped[:4] == [
        f"{where}path '../../x.png' leaves the persona's images/ folder; round kept without it",
        (f"{where}path '/abs/x.png' is absolute: paths are relative to the persona's images/ "
        "folder; round kept without it"),
        (f"{where}path 'out.png' leaves the persona's images/ folder through a symbolic link; "
        "round kept without it"),
        f"{where}the path holds a NUL byte; round kept without it",
    ]
    assert skipped[4] == f"{predictions}: record 2: not UTF-8 text (byte 40 of the line)"
    assert skipped[5] == (f"{predictions}: record 4 (id {PERSONA}/0): field 'id': id "
                          f"'{PERSONA}/0' given again: the first prediction is kept")
    # stderr shows the first five and counts the rest
    assert skipped_lines(err) == skipped[:5]
    assert 'm3kit: ... and 1 more skipped (all are listed under "skipped" in --json)' in err


def test_m3exam_bomb_and_torn_images_cost_their_attachment_at_ingest(
    hostile: HostileCorpus, embedder, reader, caplog: pytest.LogCaptureFixture
) -> None:
    """The loader accepts ``bomb.png`` and ``torn.png`` (their paths are fine); ``rag`` (OCR at
    ingest) and ``proctor`` (header check, no OCR) each skip both by name and keep the rest."""
    from m3kit.benchmarks.m3exam.load import load_m3exam_persona
    from m3kit.memory import ProctorMemory, RagMemory, conversation_events
    from m3kit.memory.proctor import chunk_raw

    conversation, questions, _ = load_m3exam_persona(hostile.persona)
    assert [q.id for q in questions] == [f"{PERSONA}/0", f"{PERSONA}/1"]
    events = conversation_events(conversation)
    images = [e for e in events if e.kind == "image"]
    assert [Path(e.media.path).name for e in images] == ["img_1.png", "bomb.png", "torn.png"]
    bad = {e.id: Path(e.media.path) for e in images[1:]}
    expected = [f"{path}: record {event_id}: " for event_id, path in bad.items()]

    rag = RagMemory(embedder=embedder, reader=reader, k=2)
    with caplog.at_level(logging.WARNING, logger="m3kit.memory.events"):
        asyncio.run(rag.ingest(PERSONA, events))
    assert [i.id for i in rag.items(PERSONA)] == [e.id for e in events if e.id not in bad]
    ocr = next(i for i in rag.items(PERSONA) if i.id == images[0].id).metadata["ocr"]
    assert "red fox" in ocr.lower()
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2
    for warning, prefix in zip(warnings, expected, strict=True):
        assert warning.startswith(f"memory {PERSONA}: attachment skipped: {prefix}")

    caplog.clear()
    proctor = ProctorMemory(embedder=embedder, ocr=False, bias="lexical",
                            retrieval=RetrievalConfig(index="numpy"))
    with caplog.at_level(logging.WARNING, logger="m3kit.memory.proctor.surrogates"):
        asyncio.run(proctor.ingest(PERSONA, events))
    skipped = [str(s) for s in proctor.skipped(PERSONA)]
    assert len(skipped) == 2
    assert skipped[0].startswith(f"{expected[0]}image over the bound of 89478485")
    assert skipped[1].startswith(f"{expected[1]}cannot read the image")
    # rag records the same two files and events (its decoder words the torn file its own way)
    assert [(s.file, s.record) for s in rag.skipped(PERSONA)] == [
        (str(path), event_id) for event_id, path in bad.items()]
    rounds = {c.id: c for c in proctor.items(PERSONA)}
    assert [name for _, _, name in chunk_raw(rounds["D1:1"])] == [images[0].id.split("/")[-1]]
    assert "a barn" in rounds["D1:1"].text and "a square of noise" in rounds["D1:1"].text
    assert len(caplog.records) == 2


def test_m3eval_nul_byte_video_and_predictions(hostile: HostileCorpus, capsys) -> None:
    code, out, err = run_cli(["score", "m3eval", "--data", str(hostile.m3eval),
                              "--predictions", str(hostile.m3eval_predictions), "--json"], capsys)
    assert code == 0
    result = json.loads(out)
    # ss-1 "A" (its later "C" ignored) and ss-2 "B" (after its non-UTF-8 line): 2 of 2 right
    assert result["divided_attention"]["no_swap"]["source_identification"] == 100.0
    assert (result["n_scored"], result["n_skipped_records"], result["n_missing"]) == (2, 3, 0)
    table = hostile.m3eval / "qa_root" / "split_screen" / "split_screen_qa.json"
    predictions = str(hostile.m3eval_predictions)
    expected = [
        f"{table}: record ss-nul: field 'video': the path holds a NUL byte",
        f"{predictions}: record 2: not UTF-8 text (byte 51 of the line)",
        (f"{predictions}: record 4 (id ss-1): field 'id': id 'ss-1' given again: the first "
        "prediction is kept"),
    ]
    assert skipped_lines(err) == expected
    assert [str(SkippedRecord.model_validate(r)) for r in result["skipped"]] == expected


def test_videomme_non_json_line_skips_its_group_only(hostile: HostileCorpus, capsys) -> None:
    code, out, err = run_cli(["score", "videomme-v2", "--data", str(hostile.videomme),
                              "--predictions", str(hostile.videomme_predictions), "--json"],
                             capsys)
    assert code == 0
    result = json.loads(out)
    # groups 001, 003, 004 all answered right (001-1 by its first good line): 100 everywhere;
    # group 002 (the only level-2 group) is gone, so level 2 has no score
    assert (result["total"], result["avg_acc"], result["level_2"]) == (100.0, 100.0, None)
    assert result["n_failed_extraction"] == 0
    table, predictions = hostile.videomme / "test.jsonl", str(hostile.videomme_predictions)
    lines = skipped_lines(err)
    assert len(lines) == 4
    assert lines[0].startswith(f"{table}: record 6: row skipped: invalid JSON: ")
    assert lines[1].startswith(f"{table}: record group 002: field 'question_id': group 002 "
                               "skipped: 3 question(s)")
    assert lines[2] == f"{predictions}: record 1: not UTF-8 text (byte 55 of the line)"
    assert lines[3].startswith(f"{predictions}: record 17 (id 001-1): field ")
    assert lines[3].endswith("given again: the first prediction is kept")
    # --json lists the same skips, data first, and counts them
    assert [str(SkippedRecord.model_validate(r)) for r in result["skipped"]] == lines
    assert (result["n_skipped_records"], result["n_unmatched_predictions"]) == (4, 0)


def test_report_skips_a_damaged_eval_beside_a_good_score_file(
    hostile: HostileCorpus, tmp_path: Path, capsys, caplog: pytest.LogCaptureFixture
) -> None:
    from m3kit.report.inputs import read_inputs

    logs = tmp_path / "logs"
    logs.mkdir()
    damaged = logs / hostile.damaged_log.name
    damaged.write_bytes(hostile.damaged_log.read_bytes())
    # alone, a damaged log leaves nothing to report: one line, exit 2
    code, out, err = run_cli(["report", str(logs), "--out", str(tmp_path / "none")], capsys)
    assert code == 2 and "\n" not in err.strip()
    assert err.startswith(f"m3kit: error: {damaged}: not a readable eval log")

    code, out, _ = run_cli(["score", "m3eval", "--data", str(hostile.m3eval),
                            "--predictions", str(hostile.m3eval_predictions), "--json"], capsys)
    assert code == 0
    (logs / "m3kit-builtin.json").write_text(out, encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="m3kit.report.inputs"):
        code, out, _ = run_cli(["report", str(logs), "--out", str(tmp_path / "out")], capsys)
    assert code == 0 and out.strip() == f"report: {tmp_path / 'out' / 'index.html'}"
    assert [r.getMessage() for r in caplog.records] == [
        f"skipped {damaged}: not a readable eval log: EOCD not found"]
    assert "m3kit-builtin" in (tmp_path / "out" / "tables.md").read_text()
    inputs = read_inputs([logs])
    assert [e.path for e in inputs.skipped] == [str(damaged)]
    assert list(inputs.cards["m3eval"]) == ["m3kit-builtin"]
