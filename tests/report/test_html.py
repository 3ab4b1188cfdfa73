"""The HTML page and the Markdown file show tables as the terminal does: group members indented
under their group's row, a caption's code spans as code, not as backticks."""

from __future__ import annotations

from pathlib import Path

from m3kit.report.html import write_report
from m3kit.schema.report import ReportSection, Table


def test_group_rows_stay_indented_and_code_spans_render(tmp_path: Path) -> None:
    from m3kit.benchmarks.m3eval.answer_tables import INDENT, evidence_table

    caption = evidence_table([]).caption  # the quickstart's, naming the `units` column
    assert "`units`" in caption
    table = Table(title="Memory interference", caption=caption,
                  columns=["system / condition", "n", "acc"],
                  rows=[["m3kit/builtin", "", ""], [f"{INDENT}proactive", 4, "75.0 [25.0, 100.0]"],
                        [f"{INDENT}retroactive", 4, "50.0 [0.0, 100.0]"]])
    section = ReportSection(benchmark="m3eval", title="Breakdowns", tables=[table],
                            notes=["Eval logs open with `inspect view` & <nothing> else."])
    page = write_report([section], tmp_path).read_text(encoding="utf-8")
    # the group's row flush left, its members indented as the terminal indents them
    assert "<tr><td>m3kit/builtin</td>" in page
    assert "<td>&nbsp;&nbsp;proactive</td><td>4</td>" in page
    assert "<td>&nbsp;&nbsp;retroactive</td>" in page
    assert "resting on <code>units</code> source pairs" in page and "`" not in page
    assert "open with <code>inspect view</code> &amp; &lt;nothing&gt; else." in page
    markdown = (tmp_path / "tables.md").read_text(encoding="utf-8")
    assert "| m3kit/builtin |  |  |" in markdown
    assert "| &nbsp;&nbsp;proactive | 4 | 75.0 [25.0, 100.0] |" in markdown
    assert "resting on `units` source pairs" in markdown  # Markdown renders it itself


def test_the_terminal_shows_code_spans_without_backticks() -> None:
    from rich.console import Console

    from m3kit.benchmarks.m3eval.answer_tables import evidence_table
    from m3kit.cli.quickstart import _rich_table
    from m3kit.schema.report import plain_text

    assert plain_text("on `units` pairs, `n` questions") == "on units pairs, n questions"
    console = Console(width=200, record=True)
    console.print(_rich_table(evidence_table([])))
    shown = console.export_text()
    assert "resting on units source pairs" in shown and "`" not in shown
