"""The import graph follows ARCHITECTURE.md's layer table.

Layers, lowest first: the floor (``m3kit`` itself, ``m3kit.errors``, ``m3kit.paths``,
``m3kit.files``, ``m3kit.forks``) < ``schema`` < ``metrics`` < ``media`` < ``perception`` <
``memory`` < ``models`` < ``synth`` < ``harness`` < ``benchmarks`` < ``report`` < ``review`` <
``cli`` (``m3kit.registry``, ``m3kit.quickstart`` and ``m3kit.__main__`` sit at the cli
level). A module may import modules of its own layer or of a lower one, except where the
table's "knows nothing of" column names a lower layer (``synth`` knows nothing of ``models``;
``report`` nothing of ``harness`` and ``memory``, how results were produced; ``review`` nothing
of ``models``, ``harness`` and ``memory``, how items were generated). Besides, no benchmark
package imports another one (``m3kit.benchmarks.m3eval`` never imports
``m3kit.benchmarks.m3exam``); the package
``m3kit.benchmarks`` itself, the list of declarations, may import all of them.

Every ``.py`` file under ``src/m3kit`` is parsed with ``ast`` and every import in it counts:
top-level ones, deferred ones inside functions, those under ``if TYPE_CHECKING:`` (an
annotation that names a higher layer is a dependency on it too), and
``importlib.import_module("m3kit....")`` with a literal name. A benchmark declaration's
pointers count as imports of the declaring module too: the target of a ``Ref("module:attr")``
(a literal, or an f-string over module-level string constants such as
``Ref(f"{_HERE}.score:score_text")``) and a ``task_module=`` name, so a declaration that points
up a layer (at a cli command) fails like an import would. Relative imports are resolved against
the importing module's package.

``schema``, ``metrics`` and ``media`` must also import without inspect-ai, torch or a model
package: checked in a fresh interpreter.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE_DIR = SRC / "m3kit"

# ARCHITECTURE.md's table, lowest layer first: (layer name, modules it holds).
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("floor", ("m3kit", "m3kit.errors", "m3kit.paths", "m3kit.files", "m3kit.forks")),
    ("schema", ("m3kit.schema",)),
    ("metrics", ("m3kit.metrics",)),
    ("media", ("m3kit.media",)),
    ("perception", ("m3kit.perception",)),
    ("memory", ("m3kit.memory",)),
    ("models", ("m3kit.models",)),
    ("synth", ("m3kit.synth",)),
    ("harness", ("m3kit.harness",)),
    ("benchmarks", ("m3kit.benchmarks",)),
    ("report", ("m3kit.report",)),
    ("review", ("m3kit.review",)),
    ("cli", ("m3kit.cli", "m3kit.registry", "m3kit.quickstart", "m3kit.__main__")),
)
# The table's "knows nothing of" column where it forbids a layer below: synthetic suites are
# built without models, and a report reads logs without knowing how they were produced.
UNKNOWN_BELOW: dict[str, frozenset[str]] = {
    "synth": frozenset({"models"}),
    "report": frozenset({"harness", "memory"}),
    "review": frozenset({"models", "harness", "memory"}),
}
BENCHMARKS = "m3kit.benchmarks"
ROOT = "m3kit"
# ``memory``'s two floors: the retrieval parts under the memories that compose them.
MEMORY = "m3kit.memory"
RETRIEVAL = "m3kit.memory.retrieval"
# Third-party packages the three lowest layers must import without.
HEAVY = ("inspect_ai", "torch", "transformers")


def layer_of(module: str) -> tuple[int, str] | None:
    """The rank and name of the layer ``module`` belongs to (the longest matching entry of the
    table: ``m3kit.schema.io`` is in ``schema``; ``m3kit`` itself, and nothing under it, in the
    floor), or ``None``."""
    best: tuple[int, int, str] | None = None
    for rank, (name, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (prefix != ROOT and module.startswith(prefix + "."))
            if inside and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), rank, name)
    return None if best is None else (best[1], best[2])


def benchmark_of(module: str, packages: frozenset[str]) -> str | None:
    """The benchmark package ``module`` lies in (``m3kit.benchmarks.m3eval.score`` ->
    ``m3eval``), ``None`` outside one (``m3kit.benchmarks`` itself, a shared module beside
    the benchmark folders)."""
    if not module.startswith(BENCHMARKS + "."):
        return None
    head = module[len(BENCHMARKS) + 1 :].split(".", 1)[0]
    return head if head in packages else None


def module_name(path: Path) -> str:
    """``src/m3kit/schema/io.py`` -> ``m3kit.schema.io``; a package's ``__init__.py`` is the
    package."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    """The absolute name of a relative import ``from <level dots><target> import ...``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, target] if target else base)


def _import_module_literal(node: ast.Call) -> str | None:
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name != "import_module" or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments (what a declaration's f-strings refer to)."""
    out: dict[str, str] = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
            out[node.targets[0].id] = node.value.value
    return out


def _text(node: ast.AST, constants: dict[str, str]) -> str | None:
    """The value of a string literal, or of an f-string whose parts are literals and names of
    module-level string constants; ``None`` for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Name):
                if part.value.id not in constants:
                    return None
                parts.append(constants[part.value.id])
            elif isinstance(part, ast.Constant):
                parts.append(str(part.value))
            else:
                return None
        return "".join(parts)
    return None


def _declared_target(node: ast.Call, constants: dict[str, str]) -> list[str]:
    """The modules a ``Ref("module:attr")`` call or a ``task_module=`` keyword names."""
    out = []
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name == "Ref":
        given = node.args[:1] or [k.value for k in node.keywords if k.arg == "target"]
        for arg in given:
            target = _text(arg, constants)
            if target is not None:
                out.append(target.partition(":")[0])
    for keyword in node.keywords:
        if keyword.arg == "task_module" and (target := _text(keyword.value, constants)):
            out.append(target)
    return out


def imports_of(
    source: str, module: str, is_package: bool, known: frozenset[str]
) -> Iterator[tuple[int, str]]:
    """``(line, imported m3kit module)`` for every import in ``source``, wherever it stands.

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module of the
    tree (``known``), else ``pkg``. In line order.
    """
    found: list[tuple[int, str]] = []
    tree = ast.parse(source)
    constants = _string_constants(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = (
                _resolve(module, is_package, node.level, node.module)
                if node.level
                else node.module or ""
            )
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if sub in known else base))
        elif isinstance(node, ast.Call):
            if name := _import_module_literal(node):
                found.append((node.lineno, name))
            found += [(node.lineno, target) for target in _declared_target(node, constants)]
    return iter(sorted(set(found)))


def violations_in(
    source: str,
    module: str,
    path: str,
    *,
    is_package: bool = False,
    known: frozenset[str] = frozenset(),
    benchmark_packages: frozenset[str] = frozenset(),
) -> list[str]:
    """Each import of ``source`` (module ``module``, shown as ``path``) that breaks a rule."""
    own = layer_of(module)
    if own is None:
        return [f"{path}:1 module {module} is in no layer of ARCHITECTURE.md's table"]
    own_rank, own_name = own
    own_benchmark = benchmark_of(module, benchmark_packages)
    out: list[str] = []
    for line, imported in imports_of(source, module, is_package, known):
        if imported != "m3kit" and not imported.startswith("m3kit."):
            continue
        target = layer_of(imported)
        if target is None:
            out.append(f"{path}:{line} imports {imported} (in no layer of the table)")
            continue
        rank, name = target
        if rank > own_rank or name in UNKNOWN_BELOW.get(own_name, ()):
            out.append(
                f"{path}:{line} imports {imported} (layer {own_name} may not import layer {name})"
            )
            continue
        other = benchmark_of(imported, benchmark_packages)
        if own_benchmark is not None and other is not None and other != own_benchmark:
            out.append(
                f"{path}:{line} imports {imported} "
                f"(benchmark {own_benchmark} may not import benchmark {other})"
            )
    return out


def tree_violations() -> list[str]:
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    known = frozenset(module_name(f) for f in files)
    packages = frozenset(
        p.name for p in (PACKAGE_DIR / "benchmarks").iterdir() if (p / "__init__.py").is_file()
    )
    out: list[str] = []
    for file in files:
        out += violations_in(
            file.read_text(encoding="utf-8"),
            module_name(file),
            file.relative_to(SRC.parent).as_posix(),
            is_package=file.name == "__init__.py",
            known=known,
            benchmark_packages=packages,
        )
    return out


def test_every_import_follows_the_layer_table() -> None:
    found = tree_violations()
    assert not found, f"{len(found)} import(s) break ARCHITECTURE.md's layers:\n" + "\n".join(
        found
    )


def floor_violations(source: str, module: str, path: str, *, is_package: bool = False,
                     known: frozenset[str] = frozenset()) -> list[str]:
    """Each import by a module of the retrieval floor (``m3kit.memory.retrieval``) of a module
    of ``m3kit.memory`` outside it: ``memory/`` has two floors, the memories over the retrieval
    parts they compose, and the parts never reach up to a memory."""
    if not _inside(module, RETRIEVAL):
        return []
    return [f"{path}:{line} imports {imported} (the retrieval floor may not import the "
            "memories above it)"
            for line, imported in imports_of(source, module, is_package, known)
            if _inside(imported, MEMORY) and not _inside(imported, RETRIEVAL)]


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` and the modules of ``package`` it imports (every import, as
    ``imports_of`` counts them)."""
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    known = frozenset(module_name(f) for f in files)
    graph: dict[str, set[str]] = {}
    for file in files:
        module = module_name(file)
        if _inside(module, package):
            graph[module] = {imported for _, imported in imports_of(
                file.read_text(encoding="utf-8"), module, file.name == "__init__.py", known)
                if _inside(imported, package) and imported != module}
    return graph


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each set of modules that import one another, directly
    or through each other (a strongly connected component of more than one module), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(out)


def test_retrieval_floor_imports_no_memory_above_it() -> None:
    files = sorted(PACKAGE_DIR.rglob("*.py"))
    known = frozenset(module_name(f) for f in files)
    found = [v for f in files for v in floor_violations(
        f.read_text(encoding="utf-8"), module_name(f), f.relative_to(SRC.parent).as_posix(),
        is_package=f.name == "__init__.py", known=known)]
    assert not found, "\n".join(found)


def test_memory_modules_import_no_circle() -> None:
    graph = import_graph(MEMORY)
    assert f"{RETRIEVAL}.rerankers" in graph  # the graph is read, not empty
    assert import_cycles(graph) == []


def test_lowest_layers_import_without_inspect_torch_or_models() -> None:
    code = (
        "import sys, m3kit.schema, m3kit.metrics, m3kit.media\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "assert not loaded, f'importing schema, metrics and media loaded {loaded}'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr


# -- the checker itself ---------------------------------------------------------------------------

KNOWN = frozenset(
    {"m3kit", "m3kit.report", "m3kit.report.build", "m3kit.schema", "m3kit.schema.io",
     "m3kit.errors", "m3kit.registry", "m3kit.benchmarks", "m3kit.benchmarks.m3eval",
     "m3kit.benchmarks.m3eval.score", "m3kit.benchmarks.m3exam",
     "m3kit.benchmarks.m3exam.score", "m3kit.harness", "m3kit.harness.run"}
)  # fmt: skip
PACKAGES = frozenset({"m3eval", "m3exam"})


def _check(source: str, module: str, **kwargs: object) -> list[str]:
    path = "src/" + module.replace(".", "/") + ".py"
    return violations_in(source, module, path, known=KNOWN, benchmark_packages=PACKAGES,
                         **kwargs)  # type: ignore[arg-type]  # fmt: skip


def test_checker_reports_a_forbidden_import() -> None:
    assert _check("from m3kit.report import build\n", "m3kit.schema.x") == [
        ("src/m3kit/schema/x.py:1 imports m3kit.report.build "
         "(layer schema may not import layer report)")
    ]  # fmt: skip


def test_checker_counts_deferred_type_checking_and_importlib_imports() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import importlib\n"
        "if TYPE_CHECKING:\n"
        "    from m3kit.registry import x\n"
        "def f():\n"
        "    import m3kit.report\n"
        "    return importlib.import_module('m3kit.cli.main')\n"
    )
    assert _check(source, "m3kit.harness.run") == [
        ("src/m3kit/harness/run.py:4 imports m3kit.registry "
         "(layer harness may not import layer cli)"),
        ("src/m3kit/harness/run.py:6 imports m3kit.report "
         "(layer harness may not import layer report)"),
        ("src/m3kit/harness/run.py:7 imports m3kit.cli.main "
         "(layer harness may not import layer cli)"),
    ]  # fmt: skip


def test_checker_reads_declaration_refs_as_imports() -> None:
    # a declaration pointing at a cli command points up a layer, as a literal or an f-string
    source = (
        "from m3kit.benchmarks.declaration import Benchmark, Ref\n"
        "_HERE = 'm3kit.benchmarks.m3eval'\n"
        "_CLI = 'm3kit.cli'\n"
        "BENCHMARK = Benchmark(\n"
        "    task_module=f'{_HERE}.task',\n"
        "    scoring=Ref(f'{_HERE}.score:SCORING'),\n"
        "    reporting=Ref('m3kit.cli.score_m3eval:REPORTING'),\n"
        "    components=(Ref(target=f'{_CLI}.eval:rows'),),\n"
        "    other=Ref('m3kit.benchmarks.m3exam.score:f'),\n"
        ")\n"
    )
    assert _check(source, "m3kit.benchmarks.m3eval", is_package=True) == [
        ("src/m3kit/benchmarks/m3eval.py:7 imports m3kit.cli.score_m3eval "
         "(layer benchmarks may not import layer cli)"),
        ("src/m3kit/benchmarks/m3eval.py:8 imports m3kit.cli.eval "
         "(layer benchmarks may not import layer cli)"),
        ("src/m3kit/benchmarks/m3eval.py:9 imports m3kit.benchmarks.m3exam.score "
         "(benchmark m3eval may not import benchmark m3exam)"),
    ]  # fmt: skip
    # pointers inside the benchmark's own folder and to lower layers are fine
    assert _check("from m3kit.benchmarks.declaration import Ref\n"
                  "X = Ref('m3kit.benchmarks.m3eval.score:f')\nY = Ref('m3kit.schema:Question')\n",
                  "m3kit.benchmarks.m3eval", is_package=True) == []  # fmt: skip


def test_checker_resolves_relative_imports() -> None:
    # from m3kit/schema/x.py, "..report" is m3kit.report and ".io" is m3kit.schema.io
    source = "from ..report import build\nfrom .io import read\nfrom . import io\n"
    assert _check(source, "m3kit.schema.x") == [
        ("src/m3kit/schema/x.py:1 imports m3kit.report.build "
         "(layer schema may not import layer report)")
    ]  # fmt: skip


def test_checker_allows_lower_layers_and_keeps_benchmarks_apart() -> None:
    allowed = "import m3kit.errors\nfrom m3kit.schema import io\nfrom m3kit import harness\n"
    assert _check(allowed, "m3kit.benchmarks.m3eval.score") == []
    assert _check("from m3kit.benchmarks.m3exam.score import f\n",
                  "m3kit.benchmarks.m3eval.score") == [
        ("src/m3kit/benchmarks/m3eval/score.py:1 imports m3kit.benchmarks.m3exam.score "
         "(benchmark m3eval may not import benchmark m3exam)")
    ]  # fmt: skip
    # the declarations list may import every benchmark
    assert _check("from m3kit.benchmarks import m3eval, m3exam\n", "m3kit.benchmarks",
                  is_package=True) == []  # fmt: skip


def test_checker_applies_knows_nothing_of() -> None:
    assert _check("from m3kit.harness.run import x\n", "m3kit.report.build") == [
        ("src/m3kit/report/build.py:1 imports m3kit.harness.run "
         "(layer report may not import layer harness)")
    ]  # fmt: skip
    assert _check("from m3kit.benchmarks.m3exam import score\n", "m3kit.report.build") == []


def test_checker_refuses_a_module_outside_the_table() -> None:
    assert _check("import m3kit.errors\n", "m3kit.newthing") == [
        "src/m3kit/newthing.py:1 module m3kit.newthing is in no layer of ARCHITECTURE.md's table"
    ]


def test_checker_reports_the_retrieval_floor_reaching_up() -> None:
    source = ("from m3kit.memory.base import Memory\nfrom m3kit.memory import registry\n"
              "from m3kit.memory.retrieval.index import Hit\nfrom .. import base\n"
              "from . import rerank\nfrom m3kit.schema import io\n")
    known = frozenset({"m3kit.memory.base", "m3kit.memory.registry",
                       "m3kit.memory.retrieval.index", "m3kit.memory.retrieval.rerank"})
    path = "src/m3kit/memory/retrieval/x.py"
    found = floor_violations(source, "m3kit.memory.retrieval.x", path, known=known)
    assert found == [
        f"{path}:{line} imports {module} (the retrieval floor may not import the memories "
        "above it)"
        for line, module in ((1, "m3kit.memory.base"), (2, "m3kit.memory.registry"),
                             (4, "m3kit.memory.base"))]
    # a memory may import the floor; the floor's own imports are fine
    assert floor_violations(source, "m3kit.memory.rag", "src/m3kit/memory/rag.py",
                            known=known) == []


def test_cycle_finder_reports_each_circle_once() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": {"a"}}
    assert import_cycles(graph) == [["a", "b", "c"], ["d", "e"]]
    assert import_cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


@pytest.mark.parametrize(
    ("module", "layer"),
    [("m3kit", "floor"), ("m3kit.files", "floor"), ("m3kit.schema.io", "schema"),
     ("m3kit.registry", "cli"), ("m3kit.__main__", "cli"),
     ("m3kit.benchmarks.m3eval", "benchmarks")],
)  # fmt: skip
def test_layer_of(module: str, layer: str) -> None:
    found = layer_of(module)
    assert found is not None and found[1] == layer
