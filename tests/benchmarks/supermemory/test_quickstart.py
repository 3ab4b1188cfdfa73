"""SuperMemory-VQA's quickstart part: the synthetic suite answered directly, blind and through
rag by the offline baseline, in one section with n, intervals and readings."""

from __future__ import annotations

from pathlib import Path

import pytest

from m3kit.benchmarks.supermemory.quickstart import quickstart_section, section_from_runs
from m3kit.benchmarks.supermemory.score import items_from_log
from m3kit.report.logs import read_run
from m3kit.synth.ego import EgoSuiteConfig, build_ego_suite

pytestmark = pytest.mark.slow  # an end-to-end run: out of the quick subset

# 2 persons × 2 days of 8 scenes at 1 fps; 8 questions each.
SMALL = EgoSuiteConfig(seed=2, persons=2, sessions=2, segments=8, fps=1.0,
                       answerable_per_skill=1, unanswerable=2)


@pytest.fixture(scope="module")
def part(tmp_path_factory: pytest.TempPathFactory):
    cache = tmp_path_factory.mktemp("cache")
    out = tmp_path_factory.mktemp("quickstart")
    mp = pytest.MonkeyPatch()
    mp.setenv("M3KIT_CACHE_DIR", str(cache))
    try:
        section, logs = quickstart_section(out, model="m3kit/builtin", limit=None,
                                           progress=lambda *_: None, read_run=read_run,
                                           config=SMALL)
        suite = build_ego_suite(config=SMALL)
    finally:
        mp.undo()
    return section, logs, suite


def test_section_has_every_way_with_n_and_intervals(part) -> None:
    section, logs, suite = part
    assert len(logs) == 3 and all(Path(log).is_file() for log in logs)
    (table,) = section.tables
    assert [row[0] for row in table.rows] == ["direct", "blind", "rag"]
    n = len(suite.questions)
    assert all(row[-1] == n for row in table.rows)
    assert "95 % intervals over 2 persons" in table.caption
    assert all("[" in cell for row in table.rows for cell in row[1:4] if cell != "-")


def test_blind_baseline_abstains_everywhere_and_the_reading_says_so(part) -> None:
    section, logs, suite = part
    blind = items_from_log(read_run_of(logs, "blind").samples)
    assert all(i.answer_type == "abstain" for i in blind)
    share = 100 * sum(not q.is_answerable for q in suite.questions) / len(suite.questions)
    assert any(f"{share:.1f} % of the questions are unanswerable" in note
               for note in section.notes)
    assert any(note.startswith("rag minus direct") for note in section.notes)


def test_leak_count_matches_the_items(part) -> None:
    section, logs, suite = part
    leaks = {str(t.question_id): t.leak_option_index for t in suite.manifest.truth
             if t.leak_option_index is not None}
    assert leaks
    runs = {label: read_run_of(logs, label) for label in ("direct", "blind", "rag")}
    assert section_from_runs(runs, suite) == section  # the section is a function of the logs
    (note,) = [n for n in section.notes if n.startswith("Causal cut")]
    for label, run in runs.items():
        asked = [i for i in items_from_log(run.samples) if i.id in leaks]
        picked = sum(i.answer == leaks[i.id] for i in asked)
        assert f"{label} {picked} of {len(asked)}" in note
    assert "blind 0 of" in note  # no evidence, no leak


def read_run_of(logs: list[str], label: str):
    from inspect_ai.log import read_eval_log

    index = ("direct", "blind", "rag").index(label)
    return read_run(read_eval_log(logs[index]))


def test_the_page_shows_each_interval_once(part, tmp_path: Path) -> None:
    """The section on the report's page beside the report's own tables: each way's Acc has
    one interval string there, the one the report's table of headline numbers shows."""
    import re

    from m3kit.report.build import build_report

    section, logs, _ = part
    build_report(logs, tmp_path, lead=[section])
    markdown = (tmp_path / "tables.md").read_text(encoding="utf-8")
    (table,) = section.tables
    accuracy = table.columns.index("Acc")
    row = re.search(r"^\| qa_acc \| (.+) \|$", markdown, re.MULTILINE)
    assert row is not None
    report = [cell.split(" (")[0] for cell in row.group(1).split(" | ")]
    assert sorted(r[accuracy] for r in table.rows) == sorted(report)
    assert all("[" in cell for cell in report)
