"""``StageProgress`` in a pipe: a line when a stage starts, lines while a long unit runs (no unit
finished: a model call can take minutes), and one when it ends; nothing but messages when quiet."""

from __future__ import annotations

import io
import re
import time

import pytest
from rich.console import Console

from m3kit.cli import progress
from m3kit.cli.progress import StageProgress


def _pipe() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=200), out


def _wait_for_lines(out: io.StringIO, n: int) -> list[str]:
    """The lines once there are ``n`` (the ticker wakes every interval / 3); the bound, 60 s,
    is for a ticker that never writes, not a measure of how fast it does."""
    deadline = time.monotonic() + 60
    while len(lines := out.getvalue().splitlines()) < n and time.monotonic() < deadline:
        time.sleep(0.01)
    return lines


def test_a_pipe_gets_lines_while_nothing_finishes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "STAGE_LINE_INTERVAL_S", 0.05)
    console, out = _pipe()
    with StageProgress(console, {"pairs": "QA pairs worked on"}) as bars:
        bars.stage("pairs", 2)
        lines = _wait_for_lines(out, 3)  # the start line, then two while nothing finished
        assert len(lines) >= 3
        # however busy the machine (seconds may pass): only the elapsed time may differ
        assert all(re.fullmatch(r"QA pairs worked on: 0 of 2 \(0 reused\), \d+:\d\d elapsed.*",
                                line) for line in lines), lines
        bars.advance("pairs", reused=True)
        bars.advance("pairs")
    assert out.getvalue().splitlines()[-1].startswith("QA pairs worked on: 2 of 2 (1 reused)")
    # the ticker ended with the block (joined): nothing more can be written
    assert bars.ticker is not None and not bars.ticker.is_alive()


def test_quiet_prints_messages_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "STAGE_LINE_INTERVAL_S", 0.05)
    console, out = _pipe()
    with StageProgress(console, {}, quiet=True) as bars:
        bars.stage("pairs", 1)
        bars.message("model x: retrying in 2 s")
        bars.advance("pairs")
    assert out.getvalue() == "model x: retrying in 2 s\n"
