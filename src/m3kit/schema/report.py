"""The records a report is made of, and their text: tables, sections, the table ``m3kit eval``
prints.

A benchmark's report code (``m3kit.benchmarks.<name>.report``) turns its runs into
``ReportSection``s of ``Table``s; ``m3kit.report`` lays them out as HTML and Markdown. A
benchmark's ``summary_rows`` fill a ``SummaryTable`` with cells formatted here.
"""

from __future__ import annotations

import html
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "NA",
    "PLAIN_NA",
    "DeltaCell",
    "ReportSection",
    "SummaryTable",
    "Table",
    "cell_text",
    "cost_cell",
    "markdown_cell",
    "number_cell",
    "percent_cell",
    "plain_text",
    "split_indent",
]

NA = "—"  # a metric that does not apply to this row (or has no value)
# The same in ``m3kit score <verb>``'s tables: plain ASCII, as they have always printed it.
PLAIN_NA = "-"
# A Markdown code span in a caption or note (a column name in backticks).
CODE_SPAN = re.compile(r"`([^`\n]+)`")


class DeltaCell(BaseModel):
    """A number with its change from a reference, printed as papers do: ``81.25 (-8.33)``."""

    value: float | None
    delta: float | None = None


class Table(BaseModel):
    """A titled table: column names and rows of printable cells.

    ``decimals``: digits after the point for floats (papers print two). ``header_groups``: an
    optional row above the column names of ``(label, span)`` pairs, e.g. ``("No swapping", 3)``;
    the spans cover the columns left to right. ``caption``: a sentence under the title.
    ``details``: ``(label, text)`` pairs shown collapsed under the table, the text verbatim
    (a prompt template): an HTML ``<details>`` block with the text escaped in ``<pre>``.
    """

    title: str
    columns: list[str]
    rows: list[list[Any]]
    decimals: int = 1
    header_groups: list[tuple[str, int]] = Field(default_factory=list)
    caption: str = ""
    details: list[tuple[str, str]] = Field(default_factory=list)

    def details_html(self) -> str:
        """``details`` as ``<details>`` blocks, label and text escaped."""
        return "".join(f"<details><summary>{html.escape(label)}</summary>"
                       f"<pre>{html.escape(text)}</pre></details>"
                       for label, text in self.details)

    def cell(self, value: Any) -> str:
        return cell_text(value, self.decimals)

    def grouped_columns(self) -> list[str]:
        """Column names prefixed by their header group (``No swapping · Order ...``), for
        formats with a single header row."""
        if not self.header_groups:
            return list(self.columns)
        labels: list[str] = []
        for label, span in self.header_groups:
            labels += [label] * span
        labels += [""] * (len(self.columns) - len(labels))
        # header groups spanning more than the columns are cut at the last column
        return [f"{g} · {c}" if g else c for g, c in zip(labels, self.columns, strict=False)]

    def to_markdown(self) -> str:
        columns = self.grouped_columns()
        head = "| " + " | ".join(columns) + " |"
        rule = "|" + "|".join("---" for _ in columns) + "|"
        body = ["| " + " | ".join(markdown_cell(self.cell(c)) for c in row) + " |"
                for row in self.rows]
        caption = [self.caption, ""] if self.caption else []
        details = ["", self.details_html()] if self.details else []
        return "\n".join([f"### {self.title}", "", *caption, head, rule, *body, *details])


def plain_text(text: str) -> str:
    """A caption or note for the terminal: its Markdown code spans without their backticks
    (the Markdown file renders them, a terminal would show them literally)."""
    return CODE_SPAN.sub(r"\1", text)


def split_indent(text: str) -> tuple[int, str]:
    """A cell's indent (its leading spaces: a group's member under the group's row, as the
    terminal shows it) and the rest of its text."""
    stripped = text.lstrip(" ")
    return len(text) - len(stripped), stripped


def markdown_cell(text: str) -> str:
    """A table cell for Markdown: its indent as ``&nbsp;`` (a Markdown table trims leading
    spaces), so a group's members stay indented under the group's row."""
    indent, rest = split_indent(text)
    return "&nbsp;" * indent + rest


class ReportSection(BaseModel):
    """A titled part of the report: tables, then figures (PNG files already written into the
    report folder, named relative to it), then free-text notes."""

    benchmark: str
    title: str
    tables: list[Table] = Field(default_factory=list)
    figures: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class SummaryTable(BaseModel):
    """A printable table: a title, column names, rows of cells (strings), and a line printed
    under it (``caption``: ``m3kit eval``'s reproducibility line); ``intervals``: lines printed
    after it, the headline numbers' confidence intervals; ``failures``: lines printed after
    those, what failed and why (``m3kit.report.failures``)."""

    model_config = ConfigDict(frozen=True)

    title: str
    columns: list[str]
    rows: list[list[str]]
    caption: str | None = None
    intervals: list[str] = Field(default_factory=list)
    failures: list[str] = Field(default_factory=list)


def _number(value: float, decimals: int, signed: bool = False) -> str:
    text = f"{value:+.{decimals}f}" if signed else f"{value:.{decimals}f}"
    # A zero change prints unsigned, as in the paper's tables: "(0.00)", not "(+0.00)".
    return text[1:] if signed and float(text) == 0 else text


def cell_text(value: Any, decimals: int = 1) -> str:
    """A table cell as text: ``—`` for nothing (or NaN), floats to ``decimals`` digits, a
    ``DeltaCell`` as ``value (±delta)``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return NA
    if isinstance(value, DeltaCell):
        if value.value is None:
            return NA
        main = _number(value.value, decimals)
        return main if value.delta is None else f"{main} ({_number(value.delta, decimals, True)})"
    if isinstance(value, float):
        return _number(value, decimals)
    return str(value)


def percent_cell(x: float | None) -> str:
    """A rate on the 0-1 scale as a percentage with one decimal (``—`` for none)."""
    return NA if x is None or math.isnan(x) else f"{100 * x:.1f}"


def number_cell(x: float | None, digits: int = 1, missing: str = NA) -> str:
    """A number with ``digits`` decimals (``missing``, ``—`` by default, for none or NaN): the
    one formatter of a number in a table m3kit prints."""
    return missing if x is None or math.isnan(x) else f"{x:.{digits}f}"


def cost_cell(x: float) -> str:
    """A mean cost (tokens, images) as a whole number (``—`` for NaN)."""
    return NA if math.isnan(x) else f"{x:.0f}"
