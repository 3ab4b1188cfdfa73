"""``m3kit eval ... --memory NAME`` with a memory another package adds (``m3kit.memories``,
installed by pip, see ``tests/memory/plugins.py``): the run answers through it and its log
records it; one that does not load stops the run with one line naming it and its package."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log

from m3kit.cli.main import main
from m3kit.report.logs import read_run

from ..memory.plugins import BROKEN_PACKAGE, KEYWORD_SOURCE, broken_source, install

pytestmark = pytest.mark.usefixtures("isolated_dirs")


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``m3kit-keyword-memory`` and ``m3kit-broken-memory``, installed."""
    root = tmp_path_factory.mktemp("plugins")
    return install([KEYWORD_SOURCE, broken_source(root / "broken")], root / "site")


def _persona(root: Path) -> Path:
    """An M3Exam persona: one session, two questions, each sharing two words with the round
    that answers it and one with the other."""
    folder = root / "Gus_Pets"
    folder.mkdir(parents=True)
    dialogues = [
        {"round": "D1:1", "user": "My fox Rufus sleeps in the red barn.", "assistant": "Cosy."},
        {"round": "D1:2", "user": "My cat Miso has a sore paw.", "assistant": "Rest it."},
    ]
    (folder / "sessions.json").write_text(json.dumps(
        [{"session_id": "D1", "date": "2024-02-01", "dialogues": dialogues}]))
    (folder / "question.json").write_text(json.dumps([
        {"question": "What is my cat called?", "answer": ["Miso"], "supporting_facts": "D1:2",
         "type": "ss"},
        {"question": "Where does my fox sleep?", "answer": ["the red barn"],
         "supporting_facts": "D1:1", "type": "ss"},
    ]))
    return folder


@pytest.mark.slow
def test_a_run_answers_through_a_plugin_memory(
        plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(plugins))
    logs = tmp_path / "logs"
    code = main(["eval", "m3exam", "-T", f"data={_persona(tmp_path)}", "--memory", "keyword",
                 "-T", "memory_config={k: 1, match: {min_overlap: 2}}",
                 "--model", "m3kit/builtin", "--log-dir", str(logs)])
    out = capsys.readouterr().out
    assert code == 0, out
    overall = next(line for line in out.splitlines() if line.split()[:1] == ["all"])
    assert overall.split()[1] == "2"  # both questions answered
    (log,) = logs.glob("*.eval")
    run = read_run(read_eval_log(str(log)))
    retrieved = {s.id: s.usage.retrieved_ids for s in run.samples}
    assert sorted(retrieved.values()) == [["D1:1"], ["D1:2"]], retrieved


def test_a_plugin_that_does_not_load_stops_the_run_in_one_line(
        plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(plugins))
    logs = tmp_path / "logs"
    code = main(["eval", "m3exam", "-T", f"data={_persona(tmp_path)}", "--memory", "broken",
                 "--model", "m3kit/builtin", "--log-dir", str(logs)])
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2
    assert len(lines) == 1, err
    assert lines[0].startswith("m3kit: error: ") and "Traceback" not in err
    assert (f"memory 'broken' (entry point broken = m3kit_broken_memory:BrokenMemory of "
            f"package {BROKEN_PACKAGE}) does not load: ModuleNotFoundError") in lines[0]
