"""Registers ``qa_support.py`` (the stage-2 tests' suite, captions-from-truth writer and
scripted model) as the module ``sm_qa_support``: tests are not a package, so the test files
import it by that name; conftest runs before them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path


def _load_support() -> None:
    if "sm_qa_support" in sys.modules:
        return
    spec = importlib.util.spec_from_file_location("sm_qa_support",
                                                  Path(__file__).with_name("qa_support.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sm_qa_support"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)


_load_support()
