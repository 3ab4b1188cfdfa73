"""The report every benchmark writes into: sections of tables and figures, one HTML page.

A benchmark's report code (``m3kit.benchmarks.<name>.report``) turns runs (or scores of
external predictions) into ``ReportSection``s (``m3kit.schema.report``); ``write_report`` lays
them out as ``index.html`` beside the figures' PNG files and one Markdown file of all tables.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

from m3kit.schema.report import CODE_SPAN, ReportSection, Table, split_indent

__all__ = ["ReportSection", "cell_html", "inline_html", "write_report"]


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5rem 0 1.5rem}
th,td{border:1px solid #ccc;padding:.25rem .6rem;text-align:right}
th{background:#f3f3f3;text-align:center}td:first-child,th:first-child{text-align:left}
img{max-width:100%;margin:.5rem 0 1.5rem}h2{border-bottom:1px solid #ddd}
.note{color:#555;font-size:.9rem}
code{font-size:.85em;background:#f3f3f3;padding:0 .2em}
"""




def inline_html(text: str) -> str:
    """A caption or note as HTML: escaped, its Markdown code spans (a column name in
    backticks) as ``<code>``, as the Markdown file renders them."""
    return CODE_SPAN.sub(r"<code>\1</code>", html.escape(text))


def cell_html(text: str) -> str:
    """A table cell as HTML: escaped, its indent kept (``&nbsp;``): the members of a group
    row are indented under it, as in the terminal and the Markdown file."""
    indent, rest = split_indent(text)
    return "&nbsp;" * indent + html.escape(rest)


def _table_html(table: Table) -> str:
    groups = ""
    if table.header_groups:
        covered = sum(span for _, span in table.header_groups)
        cells = [f"<th colspan='{span}'>{html.escape(label)}</th>"
                 for label, span in table.header_groups]
        rest = len(table.columns) - covered
        groups = "<tr>" + "".join(cells) + ("<th></th>" * rest) + "</tr>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{cell_html(table.cell(c))}</td>" for c in row) + "</tr>"
        for row in table.rows
    )
    caption = f"<p class='note'>{inline_html(table.caption)}</p>" if table.caption else ""
    return (f"<h3>{html.escape(table.title)}</h3>{caption}"
            f"<table>{groups}<tr>{head}</tr>{body}</table>{table.details_html()}")


def write_report(sections: Sequence[ReportSection], out_dir: str | Path,
                 title: str = "m3kit report") -> Path:
    """Write ``index.html`` and ``tables.md`` for ``sections`` into ``out_dir``; return the
    HTML path. Figures must already be inside ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>",
             f"<style>{_STYLE}</style><h1>{html.escape(title)}</h1>"]
    markdown = [f"# {title}"]
    for section in sections:
        parts.append(f"<h2>{html.escape(section.title)}</h2>")
        markdown.append(f"\n## {section.title}\n")
        for table in section.tables:
            parts.append(_table_html(table))
            markdown.append(table.to_markdown() + "\n")
        for figure in section.figures:
            parts.append(f"<img src='{html.escape(figure)}' alt='{html.escape(figure)}'>")
            markdown.append(f"![{figure}]({figure})\n")
        for note in section.notes:
            parts.append(f"<p class='note'>{inline_html(note)}</p>")
            markdown.append(f"> {note}\n")
    index = out / "index.html"
    index.write_text("\n".join(parts), encoding="utf-8")
    (out / "tables.md").write_text("\n".join(markdown), encoding="utf-8")
    return index
