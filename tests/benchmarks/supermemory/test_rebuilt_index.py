"""A damaged stored index is named as what it is after the run: ``m3kit eval`` prints it under
"rebuilt N damaged stored index(es) at memory ingest", never as a skipped attachment, and every
question of the person is still answered (issue 23, item 14)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from m3kit.cli.main import main

pytestmark = pytest.mark.usefixtures("isolated_dirs")


def _eval(release: Path, logs: Path, *extra: str) -> None:
    code = main(["eval", "supermemory", "-T", f"data={release}", "--memory", "videorag",
                 "-T", "memory_fps=0.5", "--model", "m3kit/builtin", "--log-dir", str(logs),
                 "--no-cache", *extra])
    assert code == 0


def _overall(lines: list[str], column: str) -> str:
    header = next(line.split() for line in lines if line.startswith("skill "))
    overall = next(line.split() for line in lines if line.split()[:1] == ["all"])
    return overall[header.index(column)]


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
    # every question of both persons answered
    assert _overall(lines, "n") == "4" and _overall(lines, "failed") == "0"


def test_an_unwritable_store_is_said_once_after_the_run(
        make_release: Callable[..., Path], tmp_path: Path, capsys) -> None:
    """A store that cannot be written (here a path under a regular file): every question is
    answered from indexes kept in memory, and the summary says so once (issue 23, item 9)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    _eval(make_release(), tmp_path / "logs", "-T", f"memory_config={{store: {blocker}/store}}")
    lines = capsys.readouterr().out.splitlines()
    assert _overall(lines, "n") == "4" and _overall(lines, "failed") == "0"
    start = lines.index("the index store cannot be written: indexes kept in memory for this "
                        "run:")
    assert "index not stored, kept in memory for this run" in lines[start + 1]
    assert lines[start + 2].startswith("log: ")  # one note, not one per person
