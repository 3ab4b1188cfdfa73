"""``m3kit list``: every declared benchmark and task with the ``-T`` options its ``@task``
function takes (defaults from the signature), every memory with its settings (and those its
name fixes; a pydantic record's fields nested: ``retrieval.mode``), the memories other packages
add (installed for real, see ``tests/memory/plugins.py``) with their package, m3kit's providers
with their ``-M`` options; lines fit 80 columns."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from m3kit.benchmarks import BENCHMARKS
from m3kit.benchmarks.catalog import catalog, options_of
from m3kit.cli.main import main
from m3kit.memory.registry import BUILTIN_PACKAGE, memory_names

from ..memory.plugins import (
    BROKEN_PACKAGE,
    KEYWORD_PACKAGE,
    KEYWORD_SOURCE,
    broken_source,
    install,
)


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
    assert set(memories) == set(memory_names()) - {"none"}
    assert {m.package for m in memories.values()} == {BUILTIN_PACKAGE}
    assert memories["rag-mm"].fixed == {"send_images": "True"}
    assert "send_images" not in {o.name for o in memories["rag-mm"].options}
    rag = {o.name: o.default for o in memories["rag"].options}
    assert rag["k"] == "8" and rag["retrieval.mode"] == "'hybrid'"  # the record's fields
    assert "retrieval" not in rag
    # the embedder is a setting by name (minilm, e5-small) as well as an object
    assert rag["embedder"] == "None" and rag["retrieval.feedback"] == "False"
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
    from m3kit.memory.retrieval.rerankers import MODEL_RERANKER, reranker_kinds

    listing = catalog()
    assert [r.name for r in listing.rerankers] == list(reranker_kinds()) == [
        "maxsim", MODEL_RERANKER]
    memories = {m.name: {o.name for o in m.options} for m in listing.memories}
    taking = [name for name, options in memories.items() if "retrieval.reranker" in options]
    assert taking == ["rag", "rag-text", "rag-mm", "hierarchical", "hierarchical-mm",
                      "proctor", "videorag", "egorag", "videoagent"]
    assert all(r.memories == taking for r in listing.rerankers)
    assert "retrieval.rerank_depth" in memories["rag"]
    assert not any(o.startswith("retrieval.") for o in memories["context"])
    assert "late-interaction MaxSim" in listing.rerankers[0].summary

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    block = out[out.index("Rerankers: "):out.index("Models: ")]
    assert "memory_config='{reranker: NAME}'" in block
    assert "  maxsim: " in block and f"  {MODEL_RERANKER}: Listwise reranking" in block


@pytest.fixture(scope="module")
def keyword_plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``m3kit-keyword-memory``, installed by pip."""
    return install([KEYWORD_SOURCE], tmp_path_factory.mktemp("keyword") / "site")


def test_plugin_memories_are_listed_with_their_package_and_settings(
        keyword_plugin: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A memory another package declares is listed after the built-ins, with its package and
    its constructor's settings (its pydantic record's fields nested, their defaults the
    preset's); a function that returns a memory with its own parameters."""
    monkeypatch.syspath_prepend(str(keyword_plugin))
    listing = catalog()
    memories = {m.name: m for m in listing.memories}
    keyword, strict = memories["keyword"], memories["keyword-strict"]
    assert [m.name for m in listing.memories][-2:] == ["keyword", "keyword-strict"]
    assert keyword.package == strict.package == KEYWORD_PACKAGE
    assert memories["rag"].package == BUILTIN_PACKAGE
    assert keyword.summary.startswith("Keyword overlap: the items that share the most words")
    assert [(o.name, o.default, o.type) for o in keyword.options] == [
        ("k", "3", "int"), ("match.case_sensitive", "False", "bool"),
        ("match.min_overlap", "1", "int")]  # the preset ANY_WORD's, not the record's own 2
    assert [(o.name, o.default) for o in strict.options] == [("k", "3")]
    assert strict.summary == "Keyword overlap with case kept and at least two shared words."

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    block = out[out.index("Memories from other packages"):out.index("Rerankers: ")]
    assert block.startswith("Memories from other packages (entry point group "
                            "m3kit.memories):\n")
    assert f"  keyword (from {KEYWORD_PACKAGE}): Keyword overlap" in block
    assert "      k=3  match.case_sensitive=False  match.min_overlap=1" in block
    assert f"  keyword-strict (from {KEYWORD_PACKAGE}): " in block
    assert "keyword" not in out[:out.index("Memories from other packages")].split(
        "Memories: ")[1]  # not among the built-ins

    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {m["name"]: m["package"] for m in data["memories"]}["keyword"] == KEYWORD_PACKAGE


def test_a_plugin_that_does_not_load_is_listed_with_why(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        capsys) -> None:
    """No traceback, and the rest is still listed: the broken memory's line names the entry
    point, its package and why it does not load."""
    root = tmp_path_factory.mktemp("broken")
    monkeypatch.syspath_prepend(str(install([broken_source(root / "broken")], root / "site")))
    assert catalog().refused_memories == {
        "broken": (
            f"memory 'broken' (entry point broken = m3kit_broken_memory:BrokenMemory of "
            f"package {BROKEN_PACKAGE}) does not load: ModuleNotFoundError: No module named "
            "'m3kit_missing_dependency'"),
        "not-a-memory": (
            f"memory 'not-a-memory' (entry point not-a-memory = json:JSONDecoder of package "
            f"{BROKEN_PACKAGE}) is the class JSONDecoder, not a Memory subclass or a function "
            "that returns a Memory")}
    assert main(["list"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "  refused: broken: memory 'broken' (entry point broken =" in captured.out
    assert "rag" in {m.name for m in catalog().memories}
