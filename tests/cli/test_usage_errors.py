"""Usage errors (a missing argument, an unknown option, a value of the wrong type) are one line
naming the option and exit 2, never a traceback or a usage block, whichever click typer
ships."""

from __future__ import annotations

import pytest

from m3kit.cli.main import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["eval"], "Missing argument 'task'"),
        (["video", "info"], "Missing argument 'path'"),
        (["eval", "synth_nback", "--model", "m3kit/builtin", "--bogus"], "No such option"),
        (["score", "m3eval", "--predictions", "p.jsonl"], "Missing option '--data'"),
        (["eval", "synth_nback", "--model", "m3kit/builtin", "--attempt-timeout", "inf"],
         "Invalid value for '--attempt-timeout'"),
        (["eval", "synth_nback", "--limit", "abc"], "Invalid value for '--limit'"),
    ],
)
def test_usage_error_is_one_message_and_exit_2(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("m3kit: error: "), err
    assert message in lines[0] and "--help)" in lines[0]
    assert "Traceback" not in err
