"""How long the lab waits for a process it started to load its code and listen. A fixed limit trips on a
busy machine over an app with heavy imports (litellm: seconds of CPU per import), so the wait grows with
the slowest load measured in this run, and `PAIDTWICE_LOAD_TIMEOUT` sets it outright."""

from __future__ import annotations

import os
import threading

from paidtwice._exceptions import UsageError

__all__ = ["LOAD_TIMEOUT", "load_timeout", "loaded_in", "too_slow"]

LOAD_TIMEOUT = "PAIDTWICE_LOAD_TIMEOUT"
"""The variable that sets the wait, in seconds."""

_FLOOR_S = 60.0
"""The wait before any load was measured (and at least, after)."""
_SCALE = 5.0
"""The wait after a load was measured: this many times the slowest (loads run side by side on a sweep's
parallel points, each slower than one alone)."""

_slowest = 0.0
_lock = threading.Lock()


def loaded_in(seconds: float) -> None:
    """Note a load the lab measured (an agent's import of the app, the app's discovery, a command's start)."""
    global _slowest
    with _lock:
        _slowest = max(_slowest, seconds)


def load_timeout() -> float:
    """Seconds to wait for a load: `PAIDTWICE_LOAD_TIMEOUT` when set, else 60 or 5 times the slowest load
    measured so far, whichever is more. `UsageError` when the variable is not a positive number."""
    given = os.environ.get(LOAD_TIMEOUT, "").strip()
    if given:
        try:
            seconds = float(given)
        except ValueError:
            seconds = 0.0
        if not seconds > 0:
            raise UsageError(f"{LOAD_TIMEOUT}={given!r} is not a positive number of seconds")
        return seconds
    with _lock:
        return max(_FLOOR_S, _SCALE * _slowest)


def too_slow(what: str, timeout: float) -> str:
    """The one line for a load that took longer than `timeout`: what did not happen, what was measured, and
    the variable to set."""
    with _lock:
        slowest = f"; the slowest load measured so far took {_slowest:.1f}s" if _slowest else ""
    return f"{what} in {timeout:.0f}s{slowest} (set {LOAD_TIMEOUT}=SECONDS to wait longer)"
