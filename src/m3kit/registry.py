"""inspect-ai's entry point into m3kit.

``[project.entry-points.inspect_ai] m3kit = "m3kit.registry"``: inspect imports this module when
it meets a name in the ``m3kit/`` namespace (``inspect eval m3kit/synth_nback``,
``--model m3kit/builtin``). Importing it registers the tasks, solvers, scorers and metrics of
every declared benchmark (``m3kit.benchmarks.BENCHMARKS``) and m3kit's model providers.
"""

from __future__ import annotations

import importlib
from typing import Any

from m3kit.benchmarks import BENCHMARKS


def _registered() -> dict[str, Any]:
    """Every declared benchmark's tasks, solvers and scorers, by name (importing them registers
    them with inspect)."""
    out: dict[str, Any] = {}
    for benchmark in BENCHMARKS:
        for function in benchmark.task_functions():
            out[function.__name__] = function
        for ref in benchmark.components:
            component = ref.load()
            out[component.__name__] = component
    return out


_REGISTERED = _registered()
globals().update(_REGISTERED)
__all__ = sorted(_REGISTERED)  # computed: the names inspect finds are the declared ones

# m3kit's model providers (``m3kit/builtin``, ``m3kit/hf``) register themselves on import
# (``@modelapi``).
importlib.import_module("m3kit.models")
