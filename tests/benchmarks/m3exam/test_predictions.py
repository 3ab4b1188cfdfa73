"""``m3kit score m3exam``'s predictions reader follows the one policy of every score verb:
bad lines, repeated ids and values that would need guessing are skipped and named."""

from __future__ import annotations

from pathlib import Path

from m3kit.benchmarks.m3exam.predictions import read_predictions


def test_guessed_values_repeats_and_bad_bytes_are_named_skips(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_bytes(
        b'{"id": "p/0", "prediction": "x", "judge": 1}\n'
        b'{"id": "p/1", "prediction": "y", "judge": true}\n'
        b'{"id": "p/2", "prediction": {"text": "z"}}\n'
        b'{"id": "p/3", "prediction": "r\xe9ponse"}\n'
        b'{"id": "p/0", "prediction": "again"}\n'
        b'{"id": "p/4", "prediction": "w", "judge": "0.5"}\n'
        b'{"id": "p/5", "prediction": 2023, "judge": 0.25}\n'
    )
    records, skipped = read_predictions(path)
    assert [(r.id, r.prediction, r.judge) for r in records] == [
        ("p/0", "x", 1.0), ("p/5", "2023", 0.25)]
    assert [(s.record, s.field) for s in skipped] == [
        ("2 (id p/1)", "judge"), ("3 (id p/2)", "prediction"), ("4", None),
        ("5 (id p/0)", "id"), ("6 (id p/4)", "judge")]
    assert skipped[0].reason == "judge must be a number from 0 to 1, got True"
    assert skipped[2].reason == "not UTF-8 text (byte 31 of the line)"
    assert skipped[3].reason == "id 'p/0' given again: the first prediction is kept"
    assert all(s.file == str(path) for s in skipped)
