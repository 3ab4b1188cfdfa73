"""``m3kit eval``'s progress display: bars by default on a terminal, inspect's display off by
default in a pipe (the reader wants the table on stdout) where m3kit writes its own progress
lines to stderr, ``--progress`` forces inspect's (one line per step where no terminal draws
bars), ``--quiet`` turns both off."""

from __future__ import annotations

import pytest

from m3kit.cli.eval import eval_display, progress_lines


@pytest.mark.parametrize(("progress", "terminal", "display"), [
    (None, True, "rich"),
    (None, False, "none"),
    (True, True, "rich"),
    (True, False, "plain"),
    (False, True, "none"),
    (False, False, "none"),
])
def test_display(progress: bool | None, terminal: bool, display: str) -> None:
    assert eval_display(progress, terminal) == display


@pytest.mark.parametrize(("progress", "terminal", "lines"), [
    (None, True, False),  # inspect's bars
    (None, False, True),  # a pipe: m3kit's own lines on stderr, the table alone on stdout
    (True, True, False),
    (True, False, True),
    (False, True, False),  # --quiet
    (False, False, False),
])
def test_progress_lines(progress: bool | None, terminal: bool, lines: bool) -> None:
    assert progress_lines(progress, terminal) is lines
