"""Bad numbers for ``m3kit eval`` (and ``m3kit quickstart``, which shares ``--limit``) are refused
while the command line is read: one line naming the option, exit 2, nothing run, no log.
(``--max-connections 0`` waited forever, ``--limit -3`` ran 13 of 16 samples, ``--limit 0``
ran none and reported success.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from m3kit.cli.main import main

pytestmark = pytest.mark.usefixtures("isolated_dirs")


@pytest.fixture
def persona(tmp_path: Path) -> Path:
    """A valid one-question persona: without the refusal, the run would go ahead."""
    folder = tmp_path / "Ann_Numbers"
    folder.mkdir()
    (folder / "sessions.json").write_text(json.dumps([{"session_id": "D1", "dialogues": [
        {"round": "D1:1", "user": "My cat is Miso.", "assistant": "Nice."}]}]))
    (folder / "question.json").write_text(json.dumps([
        {"question": "What is the cat called?", "answer": ["Miso"], "supporting_facts": "D1:1",
         "type": "ss"}]))
    return folder


def _refused(capsys: pytest.CaptureFixture[str], code: int, option: str, says: str) -> None:
    out, err = capsys.readouterr()
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2, err
    assert len(lines) == 1, err
    assert lines[0].startswith(f"m3kit: error: field '{option}': "), lines[0]
    assert says in lines[0]
    assert out == "" and "Traceback" not in err


@pytest.mark.parametrize(("args", "option", "says"), [
    (["--max-connections", "0"], "--max-connections", "must be at least 1, got 0"),
    (["--max-connections", "-1"], "--max-connections", "must be at least 1, got -1"),
    (["--attempt-timeout", "-5"], "--attempt-timeout", "must be at least 1, got -5"),
    (["--attempt-timeout", "0"], "--attempt-timeout", "must be at least 1, got 0"),
    (["--limit", "-3"], "--limit", "must be at least 1, got -3"),
    (["--limit", "0"], "--limit", "must be at least 1, got 0"),
    (["--limit", "0", "--resume"], "--limit", "must be at least 1, got 0"),
    (["--limit", "-2", "--stratify"], "--limit", "must be at least 1, got -2"),
    (["--max-retries", "0"], "--max-retries", "must be at least 1, got 0"),
    (["--max-failed", "-1"], "--max-failed", "must be at least 0, got -1"),
    (["--max-tokens", "0"], "--max-tokens", "must be at least 1, got 0"),
])
def test_a_bad_run_number_is_one_line_before_any_work(
    persona: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
    option: str, says: str,
) -> None:
    logs = tmp_path / "logs"
    code = main(["eval", "m3exam", "-T", f"data={persona}", "-T", "regime=text", "--model",
                 "m3kit/builtin", "--log-dir", str(logs), *args])
    _refused(capsys, code, option, says)
    assert not logs.exists()


@pytest.mark.parametrize(("args", "option", "says"), [
    (["--limit", "0"], "--limit", "must be at least 1, got 0"),
    (["--frames", "-1"], "--frames", "must be at least 0, got -1"),
])
def test_quickstart_refuses_the_same_numbers_before_building(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], option: str,
    says: str,
) -> None:
    out = tmp_path / "qs"
    _refused(capsys, main(["quickstart", "--out", str(out), *args]), option, says)
    assert not out.exists()


@pytest.mark.parametrize("value", ["inf", "nan", "0.5"])
def test_a_call_timeout_must_be_a_finite_number_of_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    # the construction pipelines' shared option: a float reads "inf" and "nan"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps({"name": "Ann", "persona": "a vet", "core_event": "a clinic",
                                "start_date": "2024-01-01"}))
    code = main(["m3exam", "synthesize", "--spec", str(spec), "--out", str(tmp_path / "built"),
                 "--model", "m3kit/builtin", "--call-timeout", value])
    says = "must be at least 1" if value == "0.5" else f"must be a finite number, got {value}"
    _refused(capsys, code, "--call-timeout", says)
    assert not (tmp_path / "built").exists()


def test_max_tokens_reaches_every_call_and_the_runs_card(persona: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log

    logs = tmp_path / "logs"
    code = main(["eval", "m3exam", "-T", f"data={persona}", "-T", "regime=text", "--model",
                 "m3kit/builtin", "--log-dir", str(logs), "--max-tokens", "64", "--quiet"])
    assert code == 0
    (log_file,) = logs.glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.plan.config.max_tokens == 64
    assert log.eval.metadata["m3kit_card"]["generate_config"]["max_tokens"] == 64
