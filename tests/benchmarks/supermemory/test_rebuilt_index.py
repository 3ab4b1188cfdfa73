"""A damaged stored index is named as what it is after the run: ``m3kit eval`` prints it under
"rebuilt N damaged stored index(es) at memory ingest", never as a skipped attachment, and every
question of the person is still answered (issue 23, item 14)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from m3kit.cli.main import main

pytestmark = pytest.mark.usefixtures("isolated_dirs")


def _eval(release: Path, logs: Path) -> None:
    code = main(["eval", "supermemory", "-T", f"data={release}", "--memory", "videorag",
                 "-T", "memory_fps=0.5", "--model", "m3kit/builtin", "--log-dir", str(logs),
                 "--no-cache"])
    assert code == 0


def test_a_damaged_index_is_reported_as_rebuilt_not_as_an_attachment(
        make_release: Callable[..., Path], isolated_dirs: Path, tmp_path: Path, capsys) -> None:
    release = make_release()
    _eval(release, tmp_path / "first")
    capsys.readouterr()
    heads = sorted((isolated_dirs / "m3kit").rglob("HEAD"))
    assert heads, "the videorag memory stored no index"
    heads[0].write_bytes(b"\xff\xfe not a version name")
    _eval(release, tmp_path / "second")
    lines = capsys.readouterr().out.splitlines()
    start = lines.index("rebuilt 1 damaged stored index(es) at memory ingest:")
    assert lines[start + 1].startswith(f"  {heads[0]}: record ")
    assert "damaged stored index, rebuilt: HEAD is not UTF-8 text" in lines[start + 1]
    assert not any("attachment(s)" in line for line in lines)
    assert not any("samples failed" in line for line in lines)
    header = next(line.split() for line in lines if line.startswith("skill "))
    overall = next(line.split() for line in lines if line.split()[:1] == ["all"])
    assert overall[header.index("n")] == "4"  # every question of both persons answered
    assert overall[header.index("failed")] == "0"
