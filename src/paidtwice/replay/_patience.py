"""How long a replay is waited for. Not a fixed wall window: on a loaded machine the replays of a batch share
a small slice of a core, and 30 s of wall time left good journals undecided. A replay is waited for while the
event loop's thread works (every replay and the app's code run on it), given up when that thread did nothing
for `stalled_after` seconds (the code waits on something nothing gives), and after an overall bound,
`PAIDTWICE_REPLAY_TIMEOUT` (or `--timeout`), whatever happens."""

from __future__ import annotations

import asyncio
import time

from paidtwice.engine import env_seconds

__all__ = ["REPLAY_TIMEOUT", "STALLED_AFTER", "replay_timeout", "wait_settled"]

REPLAY_TIMEOUT = "PAIDTWICE_REPLAY_TIMEOUT"
"""The variable that sets the overall bound on one replay, in seconds."""
_DEFAULT_TIMEOUT_S = 600.0

STALLED_AFTER = 30.0
"""Seconds of an idle loop thread after which a replay is stuck."""
_WORKING_SHARE = 0.002
"""The share of a core the loop's thread must use over the window to count as working: far below what a
working replay gets on a machine loaded 100 times over its cores, far above this wait's own checks."""
_CHECKS_PER_WINDOW = 8


def replay_timeout() -> float:
    """The overall bound on one replay: `PAIDTWICE_REPLAY_TIMEOUT`, else 600 s. `UsageError` when the variable
    is not a positive number."""
    seconds = env_seconds(REPLAY_TIMEOUT)
    return _DEFAULT_TIMEOUT_S if seconds is None else seconds


async def wait_settled(settled: asyncio.Future[None], *, timeout: float, stalled_after: float) -> str | None:
    """Wait, on the loop running the replay, until `settled` is done (None), or say why the replay was given
    up: its loop idle for `stalled_after` seconds, or `timeout` seconds in all."""
    loop = asyncio.get_running_loop()
    began = last_work = loop.time()
    used = time.thread_time()  # this coroutine runs on the loop's thread: its CPU is the replays' work
    while not settled.done():
        await asyncio.wait({settled}, timeout=stalled_after / _CHECKS_PER_WINDOW)
        now, seen = loop.time(), time.thread_time()
        if seen - used >= _WORKING_SHARE * stalled_after:
            used, last_work = seen, now
        if settled.done():
            break
        if now - last_work >= stalled_after:
            return (
                f"the replay is stuck: nothing ran for {stalled_after:g}s (the code waits on something "
                "neither the journal nor the stub model gives)"
            )
        if now - began >= timeout:
            return (
                f"the replay was still running after {timeout:g}s (set {REPLAY_TIMEOUT}=SECONDS or --timeout "
                "to wait longer)"
            )
    return None
