"""``StageProgress`` in a pipe: a line when a stage starts, lines while a long unit runs (no unit
finished: a model call can take minutes), and one when it ends; nothing but messages when quiet."""

from __future__ import annotations

import io
import time

import pytest
from rich.console import Console

from m3kit.cli import progress
from m3kit.cli.progress import StageProgress


def _pipe() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def _wait_for_lines(out: io.StringIO, n: int) -> list[str]:
    for _ in range(500):  # up to 5 s: the ticker wakes every interval / 3
        lines = out.getvalue().splitlines()
        if len(lines) >= n:
            return lines
        time.sleep(0.01)
    return out.getvalue().splitlines()


def test_a_pipe_gets_lines_while_nothing_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "STAGE_LINE_INTERVAL_S", 0.05)
    console, out = _pipe()
    with StageProgress(console, {"pairs": "QA pairs worked on"}) as bars:
        bars.stage("pairs", 2)
        lines = _wait_for_lines(out, 3)  # the start line, then two while nothing finished
        assert len(lines) >= 3
        assert all(line.startswith("QA pairs worked on: 0 of 2 (0 reused), 0:00 elapsed")
                   for line in lines)
        bars.advance("pairs", reused=True)
        bars.advance("pairs")
    assert out.getvalue().splitlines()[-1].startswith("QA pairs worked on: 2 of 2 (1 reused)")
    settled = out.getvalue()
    time.sleep(0.2)  # the ticker stopped with the block: nothing more is written
    assert out.getvalue() == settled


def test_quiet_prints_messages_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "STAGE_LINE_INTERVAL_S", 0.05)
    console, out = _pipe()
    with StageProgress(console, {}, quiet=True) as bars:
        bars.stage("pairs", 1)
        bars.message("model x: retrying in 2 s")
        bars.advance("pairs")
    assert out.getvalue() == "model x: retrying in 2 s\n"
