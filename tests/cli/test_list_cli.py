"""``m3kit list``: every declared benchmark and task with the ``-T`` options its ``@task``
function takes (defaults from the signature), every memory with its settings (and those its
name fixes), m3kit's providers with their ``-M`` options; lines fit 80 columns."""

from __future__ import annotations

import inspect
import json

from m3kit.benchmarks import BENCHMARKS
from m3kit.benchmarks.catalog import catalog, options_of
from m3kit.cli.main import main
from m3kit.memory.registry import MEMORIES


def test_options_come_from_the_signature() -> None:
    def task_like(data: str | None = None, frames: int = 8, *, blind: bool = False,
                  embedder: object = None, **rest: object) -> None: ...

    options = options_of(task_like)
    assert [(o.name, o.default) for o in options] == [
        ("data", "None"), ("frames", "8"), ("blind", "False"), ("embedder", "None")]
    assert [o.command_line for o in options] == [True, True, True, False]


def test_every_task_memory_and_provider_is_listed(capsys) -> None:
    listing = catalog()
    assert {b.name for b in listing.benchmarks} == {b.name for b in BENCHMARKS}
    for declared, listed in zip(BENCHMARKS, listing.benchmarks, strict=True):
        assert [t.name for t in listed.tasks] == list(declared.tasks)
        for task, function in zip(listed.tasks, declared.task_functions(), strict=True):
            wanted = inspect.signature(inspect.unwrap(function)).parameters
            assert [o.name for o in task.options] == list(wanted)
    m3exam = next(b for b in listing.benchmarks if b.name == "m3exam")
    options = {o.name: o.default for o in m3exam.tasks[0].options}
    assert options["token_budget"] == "32000" and options["regime"] == "None"
    memories = {m.name: m for m in listing.memories}
    assert set(memories) == set(MEMORIES) - {"none"}
    assert memories["rag-mm"].fixed == {"send_images": "True"}
    assert "send_images" not in {o.name for o in memories["rag-mm"].options}
    assert {"k", "retrieval"} <= {o.name for o in memories["rag"].options}
    assert "embedder" not in {o.name for o in memories["rag"].options}  # an object
    builtin = next(p for p in listing.providers if p.name == "m3kit/builtin")
    assert {o.name: o.default for o in builtin.options}["abstain_threshold"] == "0.58"

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    for text in ("m3eval_nback", "videomme_v2", "locomo", "context-text", "rag-mm",
                 "memory_config", "m3kit/hf", "openai-api/<service>/<model>"):
        assert text in out, text

    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(listing.model_dump_json())
