"""How much memory decoded frames may take, and the refusal when a request cannot fit.

A decoded RGB frame takes ``width × height × 3`` bytes (an 8000×8000 frame: 192 MB), so a
request is checked before decoding: the frames it would hold at once, at their output size, plus
one frame at the source size (the frame being converted), against a budget. The default budget
is half of the memory this process may use (physical memory, lowered by an address-space limit
or a cgroup limit when one is set), leaving the rest to the decoder, the interpreter and the
caller.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from m3kit.errors import MediaTooLargeError

RGB_BYTES_PER_PIXEL = 3
# Share of the usable memory that decoded frames of one request may take.
FRAME_BUDGET_FRACTION = 0.5
# cgroup v2 limit of this process's group; "max" there means none.
_CGROUP_LIMIT = Path("/sys/fs/cgroup/memory.max")


def frame_bytes(width: int, height: int) -> int:
    """Bytes of one decoded RGB ``uint8`` frame of ``width`` × ``height``."""
    return int(width) * int(height) * RGB_BYTES_PER_PIXEL


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask, which a container or ``taskset`` may
    narrow below the machine's count)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def usable_memory_bytes() -> int:
    """Memory this process may use: physical memory, or less when a limit says so."""
    limits: list[int] = []
    with contextlib.suppress(ValueError, OSError, AttributeError):
        limits.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
        if soft not in (resource.RLIM_INFINITY, -1) and soft > 0:
            limits.append(int(soft))
    except (ImportError, ValueError, OSError):
        pass
    try:
        text = _CGROUP_LIMIT.read_text().strip()
        if text.isdigit():
            limits.append(int(text))
    except OSError:
        pass
    return min(limits) if limits else 8 * 2**30


def default_frame_budget() -> int:
    """Bytes the decoded frames of one request may take by default."""
    return int(usable_memory_bytes() * FRAME_BUDGET_FRACTION)


def check_frames_fit(
    count: int,
    out_size: tuple[int, int],
    source_size: tuple[int, int],
    *,
    budget_bytes: int | None = None,
    path: str | Path | None = None,
) -> None:
    """Refuse, with ``MediaTooLargeError`` naming the sizes, ``count`` frames of ``out_size``
    held at once (plus one frame of ``source_size`` being converted) past ``budget_bytes``."""
    budget = default_frame_budget() if budget_bytes is None else int(budget_bytes)
    each = frame_bytes(*out_size)
    need = count * each + frame_bytes(*source_size)
    if need <= budget:
        return
    fits = max(0, (budget - frame_bytes(*source_size)) // each) if each else 0
    raise MediaTooLargeError(
        f"{count} decoded frames of {out_size[0]}x{out_size[1]} need {_gib(need)} of memory, "
        f"over the budget of {_gib(budget)} ({fits} fit): ask for fewer frames or a smaller "
        "size (--max-side), or write them to files as they are decoded",
        path=path,
    )


def _gib(n: int) -> str:
    return f"{n / 2**30:.2f} GiB"
