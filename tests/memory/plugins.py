"""Memories from other packages, installed for real: a package source with an entry point in
``m3kit.memories`` is installed by pip into a temporary folder, which a test puts on
``sys.path`` (``monkeypatch.syspath_prepend``); m3kit finds it through ``importlib.metadata``
as it finds any installed package.

``KEYWORD_SOURCE`` is a complete plugin (``m3kit-keyword-memory``: a keyword-overlap memory and
a factory function); ``plugin_source`` writes a one-module package for the cases a plugin gets
wrong (a built-in's name, an import that fails).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

KEYWORD_SOURCE = Path(__file__).parent / "plugin_memory"
KEYWORD_PACKAGE = "m3kit-keyword-memory"
KEYWORD_ENTRY_POINT = "m3kit_keyword_memory:KeywordMemory"


BROKEN_PACKAGE = "m3kit-broken-memory"


def install(sources: Sequence[Path], target: Path) -> Path:
    """The ``sources`` (package folders with a ``pyproject.toml``) installed into the folder
    ``target`` by one pip call, built by the setuptools already installed (no index, no
    download); ``target``, to put on ``sys.path``.

    Each source is copied first: a setuptools build writes ``build/`` and ``*.egg-info`` into
    the folder it builds."""
    work = target.with_name(f"{target.name}-sources")
    copies = [shutil.copytree(source, work / f"{i}-{source.name}")
              for i, source in enumerate(sources)]
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--disable-pip-version-check",
                    "--target", str(target), *map(str, copies)], check=True)
    return target


def broken_source(root: Path) -> Path:
    """``m3kit-broken-memory``: three memories that cannot be used. ``broken``'s module
    imports a package that is not installed; ``not-a-memory`` is a class that is no Memory;
    ``makes-a-string`` a function that returns a string."""
    return plugin_source(root, BROKEN_PACKAGE, {
        "broken": "m3kit_broken_memory:BrokenMemory",
        "not-a-memory": "json:JSONDecoder",
        "makes-a-string": "os:getcwd",
    }, "import m3kit_missing_dependency  # noqa: F401 (not installed: the import fails)\n")


def plugin_source(root: Path, package: str, entry_points: Mapping[str, str], module: str
                  ) -> Path:
    """A package ``package`` in ``root``: one module, ``package`` with ``-`` as ``_``, holding
    ``module`` (Python text), and ``entry_points`` (name -> ``module:attr``) in the group
    ``m3kit.memories``."""
    name = package.replace("-", "_")
    root.mkdir(parents=True)
    (root / f"{name}.py").write_text(textwrap.dedent(module))
    declared = "\n".join(f'"{key}" = "{value}"' for key, value in entry_points.items())
    (root / "pyproject.toml").write_text(textwrap.dedent(f"""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "{package}"
        version = "0.1.0"

        [tool.setuptools]
        py-modules = ["{name}"]

        [project.entry-points."m3kit.memories"]
        """) + declared + "\n")
    return root
