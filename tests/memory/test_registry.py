"""Memories by name: the built-ins, and those other packages add with an entry point in
``m3kit.memories`` (installed for real by pip into a temporary folder, see ``plugins``)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from m3kit.errors import M3kitError
from m3kit.harness.sample_state import resolve_memory
from m3kit.memory import ContextMemory, Memory, MemoryEvent, RagMemory, make_memory, memory_names
from m3kit.memory.registry import (
    MemoryPluginError,
    memory_factory,
    memory_sources,
    refused_memories,
)

from .conftest import REPLY, Recorder
from .plugins import (
    BROKEN_PACKAGE,
    KEYWORD_ENTRY_POINT,
    KEYWORD_PACKAGE,
    KEYWORD_SOURCE,
    broken_source,
    install,
    plugin_source,
)

BUILTINS = ("context", "rag", "context-text", "context-mm", "rag-text", "rag-mm",
            "hierarchical", "hierarchical-mm", "proctor", "videorag", "egorag")


def test_names_build_their_memories() -> None:
    assert memory_names()[:len(BUILTINS) + 1] == ("none", *BUILTINS)
    assert make_memory("none") is None
    context = make_memory("context", token_budget=2000, image_tokens=85)
    assert isinstance(context, ContextMemory)
    assert context.config()["token_budget"] == 2000
    rag = make_memory("rag", k=3, index="numpy")
    assert isinstance(rag, RagMemory) and rag.config()["k"] == 3


def test_each_call_is_a_fresh_memory() -> None:
    assert make_memory("context") is not make_memory("context")


def test_configs_differ_when_answers_would() -> None:
    assert make_memory("context").config() != make_memory("context", image_tokens=85).config()
    assert make_memory("rag").config() != make_memory("rag", k=4).config()
    assert make_memory("rag").config() != make_memory("context").config()


def test_bad_names_and_settings_are_named() -> None:
    with pytest.raises(ValueError, match="unknown memory 'vector'; known: none, context, rag, "
                       "context-text"):
        make_memory("vector")
    with pytest.raises(ValueError, match="'none' takes no settings"):
        make_memory("none", k=3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'budget'"):
        make_memory("context", budget=3)


@pytest.mark.parametrize(("name", "config", "says"), [
    ("context", {"tokens_per_char": float("inf")}, "'tokens_per_char' must be a finite number"),
    ("context", {"token_budget": float("nan")}, "'token_budget' must be a finite number"),
    ("proctor", {"alphas": {"image": float("-inf")}}, "'alphas.image' must be a finite"),
])
def test_a_setting_that_is_not_finite_is_refused(name, config, says) -> None:
    """YAML reads ``.inf`` and ``.nan`` as floats: refused by name before the memory is built
    (a NaN passes every range check a constructor makes)."""
    with pytest.raises(ValueError, match=says):
        make_memory(name, **config)


def test_text_only_and_multimodal_variants() -> None:
    """"-text" sends images' surrogates, "-mm" the images; a setting still overrides."""
    assert make_memory("context-text").send_images is False
    assert make_memory("context-mm").send_images is True
    assert make_memory("context").send_images is True  # plain context stays multimodal
    assert make_memory("rag-text").send_images is False
    assert make_memory("rag-mm").send_images is True
    assert make_memory("rag").send_images is False  # plain rag stays text-only
    assert make_memory("rag-mm", k=4).config()["k"] == 4
    assert make_memory("context-text").config() != make_memory("context-mm").config()


# -- memories from other packages ---------------------------------------------------------------

TEXTS = [(1.0, "the red fox jumps over the fence"), (2.0, "a blue whale swims in the ocean"),
         (4.0, "the red fox sleeps in its den")]
QUESTION = "where does the red fox sleep"


@pytest.fixture(scope="module")
def plugins(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``m3kit-keyword-memory`` and ``m3kit-broken-memory``, installed."""
    root = tmp_path_factory.mktemp("plugins")
    return install([KEYWORD_SOURCE, broken_source(root / "broken")], root / "site")


def _events() -> list[MemoryEvent]:
    return [MemoryEvent(id=f"r{i}", kind="text", time=time, text=text)
            for i, (time, text) in enumerate(TEXTS, 1)]


def test_a_plugin_memory_is_found_by_name_and_answers(
        plugins: Path, monkeypatch: pytest.MonkeyPatch, recorder: Recorder) -> None:
    """A ``Memory`` subclass from an installed package: named, built with its settings,
    ingests, ranks (under the causal cut ``Memory`` keeps) and answers through a model."""
    monkeypatch.syspath_prepend(str(plugins))
    names = memory_names()
    assert names[:len(BUILTINS) + 1] == ("none", *BUILTINS)  # the built-ins first, unchanged
    assert {"keyword", "keyword-strict"} <= set(names)
    source = next(s for s in memory_sources() if s.name == "keyword")
    assert (source.package, source.builtin) == (KEYWORD_PACKAGE, False)
    assert source.entry_point is not None and source.entry_point.value == KEYWORD_ENTRY_POINT

    memory = make_memory("keyword", k=2)
    assert isinstance(memory, Memory) and type(memory).__name__ == "KeywordMemory"
    assert memory.config() == {"name": "keyword", "k": 2,
                               "match": {"case_sensitive": False, "min_overlap": 1}}
    asyncio.run(memory.ingest("k", _events()))
    ranked = asyncio.run(memory.retrieve("k", QUESTION))
    assert [item.id for item in ranked] == ["r3", "r1"]  # three shared words each, newer first
    assert [item.id for item in asyncio.run(memory.retrieve("k", QUESTION, time=2.0))] == [
        "r1", "r2"]  # r3 is after the question
    answer = asyncio.run(memory.answer("k", "Where does the red fox sleep? One word.",
                                       recorder.model, query=QUESTION, time=4.0))
    assert answer.output == REPLY and answer.usage.retrieved_ids == ["r3", "r1"]
    (message,) = recorder.calls[-1]
    assert "r3: the red fox sleeps in its den" in message.text

    # a pydantic record as a setting, given as a command line gives it (a mapping)
    strict = make_memory("keyword", match={"min_overlap": 2})
    assert strict is not None and strict.config()["match"]["min_overlap"] == 2
    asyncio.run(strict.ingest("k", _events()))
    assert [item.id for item in asyncio.run(strict.retrieve("k", QUESTION))] == ["r3", "r1"]
    # a function that returns a Memory
    made = make_memory("keyword-strict", k=1)
    assert made is not None and made.config()["match"] == {"case_sensitive": True,
                                                          "min_overlap": 2}


def test_a_plugin_memory_is_what_a_task_answers_through(
        plugins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tasks' path (``resolve_memory``): a plugin's name, with a bad setting named."""
    monkeypatch.syspath_prepend(str(plugins))
    memory = resolve_memory("keyword", {"k": 4}, none_hint="-")
    assert type(memory).__name__ == "KeywordMemory" and memory.config()["k"] == 4
    with pytest.raises(M3kitError, match="field 'memory': k must be positive, got 0"):
        resolve_memory("keyword", {"k": 0}, none_hint="-")


def test_plugins_load_on_first_lookup_only(plugins: Path) -> None:
    """``import m3kit`` and listing names import no plugin; a built-in's lookup neither; a
    plugin's lookup imports its own module, no other plugin's (a fresh interpreter: this
    one may have imported them already)."""
    script = (
        "import sys\n"
        "import m3kit, m3kit.memory\n"
        "from m3kit.memory import make_memory, memory_names\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('m3kit_'))\n"
        "assert 'keyword' in memory_names() and 'broken' in memory_names()\n"
        "assert loaded() == [], loaded()\n"
        "make_memory('context')\n"
        "assert loaded() == [], loaded()\n"
        "make_memory('keyword')\n"
        "assert loaded() == ['m3kit_keyword_memory'], loaded()\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(plugins), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_a_plugin_that_does_not_load_is_named(
        plugins: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A typed error naming the entry point and the package, on its own name only: every
    other memory is still there."""
    monkeypatch.syspath_prepend(str(plugins))
    with pytest.raises(MemoryPluginError) as info:
        make_memory("broken")
    assert str(info.value) == (
        f"memory 'broken' (entry point broken = m3kit_broken_memory:BrokenMemory of package "
        f"{BROKEN_PACKAGE}) does not load: ModuleNotFoundError: No module named "
        "'m3kit_missing_dependency'")
    assert isinstance(info.value.__cause__, ModuleNotFoundError)
    with pytest.raises(MemoryPluginError, match=r"memory 'not-a-memory' \(entry point "
                       r"not-a-memory = json:JSONDecoder of package m3kit-broken-memory\) is "
                       "the class JSONDecoder, not a Memory subclass or a function"):
        memory_factory("not-a-memory")
    with pytest.raises(MemoryPluginError, match=r"memory 'makes-a-string' \(entry point "
                       r"makes-a-string = os:getcwd of package m3kit-broken-memory\) made a "
                       "str, not a Memory"):
        make_memory("makes-a-string")
    assert isinstance(make_memory("rag"), RagMemory)
    assert make_memory("keyword") is not None
    with pytest.raises(M3kitError, match="field 'memory': memory 'broken' .* does not load"):
        resolve_memory("broken", None, none_hint="-")


@pytest.fixture(scope="module")
def clashes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``m3kit-rag-clone``, which declares ``rag`` (a built-in's name), and
    ``m3kit-keyword-twin``, which declares ``keyword`` as ``m3kit-keyword-memory`` does."""
    root = tmp_path_factory.mktemp("clashes")
    module = """\
        from m3kit.memory.rag import RagMemory


        class RagClone(RagMemory):
            \"\"\"A memory that takes a name it should not.\"\"\"
        """
    clone = plugin_source(root / "clone", "m3kit-rag-clone", {"rag": "m3kit_rag_clone:RagClone"},
                          module)
    twin = plugin_source(root / "twin", "m3kit-keyword-twin",
                         {"keyword": "m3kit_keyword_twin:RagClone"},
                         module)
    return install([clone, twin], root / "site")


def test_a_plugin_that_takes_a_builtins_name_is_refused(
        clashes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which memory a name means never depends on what is installed: the clashing name is
    refused at lookup, naming the package, before any plugin is imported; the other names
    still work (``keyword`` of ``m3kit-keyword-twin`` is no clash while
    ``m3kit-keyword-memory`` is not there)."""
    monkeypatch.syspath_prepend(str(clashes))
    says = (r"memory 'rag' \(entry point rag = m3kit_rag_clone:RagClone of package "
            r"m3kit-rag-clone\) takes the name of a built-in m3kit memory: rename the entry "
            r"point in group m3kit.memories, or uninstall m3kit-rag-clone")
    with pytest.raises(MemoryPluginError, match=says):
        make_memory("rag")
    assert refused_memories().keys() == {"rag"}
    assert "rag" not in memory_names() and "keyword" in memory_names()
    assert isinstance(make_memory("context"), Memory)
    assert not {"m3kit_rag_clone", "m3kit_keyword_twin"} & set(sys.modules)


def test_two_packages_with_one_name_are_refused(
        plugins: Path, clashes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(plugins))
    monkeypatch.syspath_prepend(str(clashes))
    with pytest.raises(MemoryPluginError) as info:
        make_memory("keyword")
    assert "memory 'keyword' (entry point keyword = " in str(info.value)
    assert "takes the name of memory 'keyword'" in str(info.value)
    assert KEYWORD_PACKAGE in str(info.value) and "m3kit-keyword-twin" in str(info.value)
