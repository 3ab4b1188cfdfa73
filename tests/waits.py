"""The bounds of the tests' waits: far above what the awaited thing takes on any machine, so a
bound is reached only by a hang (or a retry loop where none should run), never by a busy CI."""

from __future__ import annotations

# A check that must fail at once rather than retry (a retry loop with backoff takes minutes):
# the bound proves the retries did not run, it does not measure the check's speed.
FAST_S = 60.0
