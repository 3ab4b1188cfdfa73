"""``m3kit score <benchmark> --data ... --predictions FILE``: score another harness's raw outputs
with m3kit's metrics. One verb per declared benchmark (``Benchmark.score_verb``), each the
command its declaration names."""

from __future__ import annotations

import typer

from m3kit.benchmarks import BENCHMARKS

app = typer.Typer(help="Score predictions from any harness.", no_args_is_help=True)
for _benchmark in BENCHMARKS:
    app.command(_benchmark.score_verb)(_benchmark.score_command.load())
