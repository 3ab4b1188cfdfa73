"""Fixtures of the synthesis tests. The scripted backend lives beside the tests as a plain
file; it is loaded by path (tests here are not a package, and no ``sys.path`` entry is
added) and handed out as fixtures."""

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


@pytest.fixture(scope="session")
def fake() -> ModuleType:
    """The ``m3exam_synthesis_fake`` module: ``ScriptedBackend`` and its good responses."""
    path = Path(__file__).with_name("m3exam_synthesis_fake.py")
    spec = importlib.util.spec_from_file_location("m3exam_synthesis_fake", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def scripted(fake: ModuleType) -> type:
    """The ``ScriptedBackend`` class: ``scripted({"stage": [responses]})``."""
    return fake.ScriptedBackend
