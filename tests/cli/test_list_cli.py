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


def test_options_written_as_text_with_a_plain_form_are_command_line() -> None:
    """``Reranker | str | None`` (``from __future__ import annotations``, the protocol imported
    for type checking only) takes a name on a command line; ``Embedder | None`` does not."""
    def memory_like(reranker: Reranker | str | None = None,  # noqa: F821
                    embedder: Embedder | None = None) -> None: ...  # noqa: F821

    options = {o.name: o.command_line for o in options_of(memory_like)}
    assert options == {"reranker": True, "embedder": False}


def test_rerankers_are_listed(capsys) -> None:
    from m3kit.memory.retrieval.rerank import MODEL_RERANKER, reranker_kinds

    listing = catalog()
    assert [r.name for r in listing.rerankers] == list(reranker_kinds()) == [
        "maxsim", MODEL_RERANKER]
    memories = {m.name: {o.name for o in m.options} for m in listing.memories}
    taking = [name for name, options in memories.items() if "reranker" in options]
    assert taking == ["rag", "rag-text", "rag-mm", "hierarchical", "hierarchical-mm",
                      "proctor"]
    assert all(r.memories == taking for r in listing.rerankers)
    assert "rerank_depth" in memories["rag"] and "reranker" not in memories["context"]
    assert "late-interaction MaxSim" in listing.rerankers[0].summary

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    block = out[out.index("Rerankers: "):out.index("Models: ")]
    assert "memory_config='{reranker: NAME}'" in block
    assert "  maxsim: " in block and f"  {MODEL_RERANKER}: Listwise reranking" in block
