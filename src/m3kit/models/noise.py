"""One warning of inspect-ai's that says nothing to a user, dropped while m3kit calls models.

inspect-ai 0.3.285 logs ``Hooks: No request registered for request_id: ...`` from its HTTP
hooks (``inspect_ai.model._providers.util.hooks``) for each retried request of an
OpenAI-compatible provider: on a failing server, one line per attempt buried the progress bars
and m3kit's own retry lines. Only this message of that logger is dropped; every other record
passes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["INSPECT_HOOKS_LOGGER", "INSPECT_HOOKS_NOISE", "inspect_hooks_filtered",
           "inspect_hooks_noise_dropped"]

INSPECT_HOOKS_LOGGER = "inspect_ai.model._providers.util.hooks"
INSPECT_HOOKS_NOISE = "Hooks: No request registered for request_id"


class _DropHooksNoise(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(INSPECT_HOOKS_NOISE)


@contextmanager
def inspect_hooks_filtered(rule: logging.Filter) -> Iterator[None]:
    """``rule`` on the logger of inspect's HTTP hooks while the block runs."""
    hooks = logging.getLogger(INSPECT_HOOKS_LOGGER)
    hooks.addFilter(rule)
    try:
        yield
    finally:
        hooks.removeFilter(rule)


def inspect_hooks_noise_dropped() -> contextlib.AbstractContextManager[None]:
    """Drop inspect's hooks warning (see the module doc) from its logger while the block
    runs."""
    return inspect_hooks_filtered(_DropHooksNoise())
