"""``m3kit eval``'s progress display: bars by default on a terminal, nothing by default in a
pipe (the reader wants the table), ``--progress`` forces it (one line per step where no
terminal draws bars), ``--quiet`` turns it off."""

from __future__ import annotations

import pytest

from m3kit.cli.eval import eval_display


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
