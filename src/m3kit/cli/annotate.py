"""``m3kit supermemory annotate``: SuperMemory-VQA's two-stage annotation pipeline on your own
recordings (seed 003 §3.4). Thin: options and progress here, the pipeline in
``m3kit.benchmarks.supermemory.construct``.

    m3kit supermemory annotate captions VIDEOS... --out ROOT [--model M]
        stage 1: dense sequential captions of each session, a person registry
    m3kit supermemory annotate questions ROOT --model M
        stage 2: the Super Ledger, planned, verified and enhanced QA pairs, data/json/all_qa.json
"""

from __future__ import annotations

import typer

app = typer.Typer(help="Turn recordings into a SuperMemory-VQA benchmark: captions, then "
                       "questions.", no_args_is_help=True)
