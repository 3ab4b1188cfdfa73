"""m3kit's run defaults, shared by ``m3kit eval`` and the tasks (so ``inspect eval`` gets them
too, as task-level generate config that command-line options still override)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from m3kit.errors import M3kitError

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

__all__ = [
    "DEFAULT_ATTEMPT_TIMEOUT",
    "DEFAULT_MAX_CONNECTIONS",
    "DEFAULT_MAX_RETRIES",
    "REFUSAL_PROBES",
    "REFUSAL_PROBE_INTERVAL_S",
    "REFUSAL_PROBE_TIMEOUT_S",
    "inspect_max_retries",
    "task_generate_config",
]

# inspect's adaptive default starts at 20 concurrent requests and grows: too many for a local
# server. Four keeps one GPU busy without queueing minutes of requests behind each other.
DEFAULT_MAX_CONNECTIONS = 4
# inspect's own default retries forever; m3kit gives up, records the sample as failed, goes on.
# Attempts in total (m3kit's ``--max-retries``), not inspect's retries after the first attempt.
DEFAULT_MAX_RETRIES = 4
# Seconds before one model request is abandoned and retried (a hung server).
DEFAULT_ATTEMPT_TIMEOUT = 300
# A request whose every attempt found the connection refused or reset is followed by this many
# probes of the endpoint, this far apart: all refused, the server is down and the run stops
# (exit 2, finished samples kept for --resume) instead of spending every remaining sample's
# attempts on it. Small, so a dead server stops a run within one sample's attempts plus ~3 s;
# more than one, so a server restarting in place is not taken for a dead one.
REFUSAL_PROBES = 3
REFUSAL_PROBE_INTERVAL_S = 1.0
REFUSAL_PROBE_TIMEOUT_S = 5.0


def inspect_max_retries(attempts: int) -> int:
    """inspect's ``max_retries`` (retries after the first attempt) for ``attempts`` in total."""
    if attempts < 1:
        raise M3kitError(f"max_retries counts attempts in total and must be at least 1, got "
                         f"{attempts}", field="max_retries")
    return attempts - 1


def task_generate_config() -> GenerateConfig:
    from inspect_ai.model import GenerateConfig

    return GenerateConfig(
        max_connections=DEFAULT_MAX_CONNECTIONS,
        max_retries=inspect_max_retries(DEFAULT_MAX_RETRIES),
        attempt_timeout=DEFAULT_ATTEMPT_TIMEOUT,
    )
