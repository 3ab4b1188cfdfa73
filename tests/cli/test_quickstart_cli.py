"""``m3kit quickstart`` on the command line: ``--out`` (as ``report`` takes it) and its alias."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.cli.main import main


@pytest.mark.slow
def test_quickstart_takes_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "qs"
    code = main(["quickstart", "--out", str(out), "--memories", "none", "--frames", "0",
                 "--limit", "1"])
    assert code == 0
    assert (out / "report.md").is_file() and (out / "report" / "index.html").is_file()
    printed = capsys.readouterr().out
    assert str(out / "report.md") in printed
    # not a terminal: every table, rule and reading fits 80 columns (the paths after are paths)
    body = printed.split("\nreport: ")[0].splitlines()
    assert body and max(len(line) for line in body) <= 80
    assert "Accuracy by evidence" in printed and "acc % [95 % CI]" in printed


@pytest.mark.slow
def test_quickstart_in_a_pipe_says_each_stage(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    # stderr is captured, not a terminal: no live bar, so one line per stage instead
    assert main(["quickstart", "--out", str(tmp_path / "qs"), "--memories", "none",
                 "--frames", "0", "--limit", "1"]) == 0
    stages = [line for line in capsys.readouterr().err.splitlines()
              if line.startswith("quickstart: ")]
    assert len(stages) >= 2 and len(stages) == len(set(stages))


@pytest.mark.parametrize("flag", ["--out", "--out-dir"])
def test_out_and_its_alias_reach_the_same_folder(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a file where the folder should be: one line naming that path, whichever spelling
    taken = tmp_path / "taken"
    taken.write_text("not a folder")
    assert main(["quickstart", flag, str(taken), "--memories", "none", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "not a folder" in err and str(taken) in err and "Traceback" not in err
