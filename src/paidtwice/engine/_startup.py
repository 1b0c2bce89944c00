"""How long the lab waits for a process it started to load its code and listen. A fixed limit trips on a
busy machine over an app with heavy imports (litellm: seconds of CPU per import), so the wait grows with
the slowest load measured in this run, and `PAIDTWICE_LOAD_TIMEOUT` sets it outright."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from paidtwice._exceptions import UsageError

__all__ = [
    "LOAD_TIMEOUT",
    "env_seconds",
    "group_cpu_seconds",
    "load_timeout",
    "loaded_in",
    "too_slow",
    "wait_for_load",
]

LOAD_TIMEOUT = "PAIDTWICE_LOAD_TIMEOUT"
"""The variable that sets the wait, in seconds."""

_FLOOR_S = 60.0
"""The wait before any load was measured (and at least, after)."""
_SCALE = 5.0
"""The wait after a load was measured: this many times the slowest (loads run side by side on a sweep's
parallel points, each slower than one alone)."""

_STALLED_S = 10.0
"""A loading process that used no CPU for this long is stuck (on the network, a lock, input), not slow."""
_PATIENCE = 5.0
"""A load that is still using CPU past its wait is given up to this many times the wait: on a busy machine a
process gets a small share of a core, and its load takes the wall time that share does."""

_CPU_EVERY_S = 0.5
"""How often a load's CPU time is read (a process group's means reading every process's /proc entry)."""

_slowest = 0.0
_lock = threading.Lock()


def loaded_in(seconds: float) -> None:
    """Note a load the lab measured (an agent's import of the app, the app's discovery, a command's start)."""
    global _slowest
    with _lock:
        _slowest = max(_slowest, seconds)


def env_seconds(name: str) -> float | None:
    """The seconds environment variable `name` sets; None when unset or blank. `UsageError` when it is not a
    positive number."""
    given = os.environ.get(name, "").strip()
    if not given:
        return None
    try:
        seconds = float(given)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise UsageError(f"{name}={given!r} is not a positive number of seconds")
    return seconds


def load_timeout() -> float:
    """Seconds to wait for a load: `PAIDTWICE_LOAD_TIMEOUT` when set, else 60 or 5 times the slowest load
    measured so far, whichever is more. `UsageError` when the variable is not a positive number."""
    seconds = env_seconds(LOAD_TIMEOUT)
    if seconds is not None:
        return seconds
    with _lock:
        return max(_FLOOR_S, _SCALE * _slowest)


def too_slow(what: str, timeout: float) -> str:
    """The one line for a load that took longer than `timeout`: what did not happen, what was measured, and
    the variable to set."""
    with _lock:
        slowest = f"; the slowest load measured so far took {_slowest:.1f}s" if _slowest else ""
    return f"{what} in {timeout:.0f}s{slowest} (set {LOAD_TIMEOUT}=SECONDS to wait longer)"


def group_cpu_seconds(pid: int) -> float | None:
    """CPU seconds used so far by `pid`'s process group (the process alone when it shares this process's
    group); None when the process is gone. Read from /proc: Linux only, None elsewhere."""
    try:
        group = os.getpgid(pid)
    except OSError:
        return None
    pids = [pid] if group == os.getpgrp() else [int(d) for d in os.listdir("/proc") if d.isdigit()]
    ticks = 0
    for one in pids:
        try:
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if one == pid or int(fields[2]) == group:
            ticks += sum(int(f) for f in fields[11:15])  # utime, stime and their reaped children's
    return ticks / os.sysconf("SC_CLK_TCK")


def wait_for_load(
    done: Callable[[], bool], pid: int, *, timeout: float, interval: float = 0.02
) -> float | None:
    """Poll `done` until it holds, and return None; once `timeout` passed, give up when the process (its
    group) used no CPU in the last `_STALLED_S`, or when `_PATIENCE` times `timeout` passed whatever it did
    (`timeout` itself when `PAIDTWICE_LOAD_TIMEOUT` set it), and return the seconds waited. A load starved of
    CPU by a busy machine is waited for; one that waits on something else is not."""
    # A wait the user set is kept as set: past it, a load is too slow for them, busy machine or not.
    patience = 1.0 if os.environ.get(LOAD_TIMEOUT, "").strip() else _PATIENCE
    began = last_change = checked = time.monotonic()
    used = group_cpu_seconds(pid)
    while not done():
        now = time.monotonic()
        window = min(_STALLED_S, timeout)
        # The CPU is read only where a stall could end the wait: a load done in time never scans /proc.
        if now - began >= timeout - window and now - checked >= _CPU_EVERY_S:
            checked = now
            seen = group_cpu_seconds(pid)
            if seen is not None and seen != used:
                used, last_change = seen, now
        waited = now - began
        if waited >= patience * timeout or (waited >= timeout and now - last_change >= window):
            return waited
        time.sleep(interval)
    return None
