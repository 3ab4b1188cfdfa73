"""What every benchmark's figures share: pyplot on a file-only backend, and intervals drawn as
error bars around their values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["error_bars", "pyplot"]


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend: figures go to files, never to a display,
    whatever the user's default backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def error_bars(ax: Any, positions: Sequence[float] | Any, values: Sequence[float | None],
               bounds: Sequence[tuple[float, float] | None], *, color: Any = "black",
               horizontal: bool = False) -> None:
    """Each value's interval (``bounds``: ``(lo, hi)``, ``None`` where there is none) as an
    error bar at ``positions`` (``horizontal``: along x, for horizontal bars); nothing when no
    value has one."""
    import numpy as np

    if not any(b is not None for b in bounds):
        return
    value = np.array([np.nan if v is None else v for v in values], dtype=float)
    lo = np.array([np.nan if b is None else b[0] for b in bounds], dtype=float)
    hi = np.array([np.nan if b is None else b[1] for b in bounds], dtype=float)
    # an interval around its value: below it by value - lo, above by hi - value
    spread = np.vstack([value - lo, hi - value])
    style = {"fmt": "none", "ecolor": color, "elinewidth": 1, "capsize": 3}
    if horizontal:
        ax.errorbar(value, positions, xerr=spread, **style)
    else:
        ax.errorbar(positions, value, yerr=spread, **style)
