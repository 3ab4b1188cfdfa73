"""``m3kit eval --resume`` of a run that already finished prints the same log line as the run
that wrote it: a plain path, not inspect's ``file://`` URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.cli.main import main
from m3kit.schema import write_jsonl

pytestmark = pytest.mark.usefixtures("isolated_dirs")


def _log_line(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("log: "))


def test_resuming_a_finished_run_prints_the_log_path(tmp_path: Path, probe_video, make_q,
                                                     scripted, serve, capsys) -> None:
    suite = tmp_path / "suite"
    write_jsonl(suite / "questions.jsonl", [make_q(i, probe_video) for i in range(2)])
    model = serve("resumecli", scripted())
    args = ["eval", "synth_interference", "--model", model, "-T", f"suite={suite}",
            "-T", "frames=1", "--log-dir", str(tmp_path / "logs"), "--resume"]
    assert main(args) == 0
    first = _log_line(capsys.readouterr().out)
    assert main(args) == 0  # finished: nothing to resume, the same log
    again = _log_line(capsys.readouterr().out)
    (written,) = (tmp_path / "logs").glob("*.eval")
    assert first == again == f"log: {written}"
