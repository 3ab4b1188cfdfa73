"""``m3kit list [--json]``: benchmarks and their tasks with their ``-T`` options and defaults,
memories with their settings (those other packages add after the built-ins, each with its
package), the rerankers those memories take, model providers with their ``-M`` options.

Thin: the listing is ``m3kit.benchmarks.catalog.catalog()``, read from the declarations and the
signatures; here it is printed, wrapped at 80 columns.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

import typer

from m3kit.cli.options import AsJsonOption

if TYPE_CHECKING:
    from m3kit.benchmarks.catalog import Catalog, ListedMemory, ListedOption

__all__ = ["catalog_lines", "list_command"]

WIDTH = 80


def _options(options: Sequence[ListedOption]) -> str:
    return "  ".join(o.name if o.required else f"{o.name}={o.default}" for o in options)


def _wrapped(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]


def _memory_lines(memory: ListedMemory, package: str | None) -> list[str]:
    """``name (fixed settings) (from package): summary`` and its settings below."""
    fixed = ", ".join(f"{k}={v}" for k, v in memory.fixed.items())
    head = (f"{memory.name}{f' ({fixed})' if fixed else ''}"
            f"{f' (from {package})' if package else ''}: {memory.summary}")
    lines = _wrapped(head, "  ")
    if memory.options:
        lines += _wrapped(_options(memory.options), "      ")
    return lines


def catalog_lines(listing: Catalog) -> list[str]:
    """The catalog as ``m3kit list`` prints it, every line at most 80 columns (a single word
    longer than that aside)."""
    from m3kit.memory.registry import BUILTIN_PACKAGE, ENTRY_POINT_GROUP

    lines = _wrapped("Benchmarks: m3kit eval TASK -T option=value ... (defaults shown; "
                     "None: the task's own default)", "")
    for bench in listing.benchmarks:
        lines.append("")
        lines += _wrapped(f"{bench.name}: {bench.title} (m3kit score {bench.score_verb}; "
                          f"intervals over {bench.ci_unit})", "")
        for task in bench.tasks:
            lines += _wrapped(f"{task.name}: {task.summary}", "  ")
            if task.options:
                lines += _wrapped(f"-T {_options(task.options)}", "      ")
    lines += ["", "Memories: m3kit eval ... --memory NAME -T memory_config='{key: value}'"]
    for memory in listing.memories:
        if memory.package == BUILTIN_PACKAGE:
            lines += _memory_lines(memory, None)
    plugins = [m for m in listing.memories if m.package != BUILTIN_PACKAGE]
    if plugins:
        lines.append("")
        lines += _wrapped(f"Memories from other packages (entry point group {ENTRY_POINT_GROUP}):",
                          "")
        for memory in plugins:
            lines += _memory_lines(memory, memory.package)
    for name, why in listing.refused_memories.items():
        lines += _wrapped(f"refused: {name}: {why}", "  ")
    if listing.rerankers:
        lines.append("")
        lines += _wrapped("Rerankers: m3kit eval ... --memory MEMORY -T "
                          "memory_config='{reranker: NAME}', for the memories "
                          f"{', '.join(listing.rerankers[0].memories)}", "")
        for reranker in listing.rerankers:
            lines += _wrapped(f"{reranker.name}: {reranker.summary}", "  ")
    lines += ["", "Models: m3kit eval ... --model PROVIDER/MODEL -M option=value"]
    for provider in listing.providers:
        lines += _wrapped(f"{provider.name}: {provider.summary}", "  ")
        if provider.options:
            lines += _wrapped(f"-M {_options(provider.options)}", "      ")
    for line in listing.other_providers:
        lines += _wrapped(line, "  ")
    return lines


def list_command(as_json: AsJsonOption = False) -> None:
    """List benchmarks, tasks and their -T options, memories and their settings, rerankers,
    providers."""
    from m3kit.benchmarks.catalog import catalog

    listing = catalog()
    if as_json:
        typer.echo(json.dumps(listing.model_dump(mode="json"), indent=2))
        return
    for line in catalog_lines(listing):
        typer.echo(line)
