"""The janitor: ends the lab's process groups and removes its temporary directories when paidtwice dies
without running its `finally`.

Why: a parent-death signal is not inherited, so a grandchild (what `sh -c` runs, a Node or hypercorn worker)
would outlive a killed paidtwice, and a SIGKILL never runs the `finally` that removes `/tmp/paidtwice-lab-*`
and `/tmp/paidtwice-restate-*`. So one process outlives paidtwice by design: the janitor, started on the first
directory registered, in a session of its own and without a parent-death signal.

It reads a pipe whose write end only paidtwice holds. Lines are JSON: `{"remove": PATH}` when a directory
is made, `{"keep": PATH}` when its owner has removed it (or hands it to the user), `{"killpg": PGID}` when a
process group is started and `{"ended": PGID}` when the lab has ended it. At end of file (the kernel closes
the pipe however paidtwice exits) it kills every group and removes every directory still registered.

It is run by path, in isolated mode (`python -I`), and imports nothing but the standard library: it costs a
few milliseconds to start, not the lab's imports.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

__all__ = ["ended", "forget", "kill_at_exit", "remove_at_exit"]

_SETTLE = 0.2
"""Seconds between removing a directory and looking again: the lab's children, killed with paidtwice, may
still be writing for a moment."""
_GIVE_UP = 60.0

_lock = threading.Lock()
_janitor: subprocess.Popen[bytes] | None = None


def remove_at_exit(path: Path) -> None:
    """Have `path` removed when this process exits without removing it itself."""
    _send({"remove": str(path)})


def forget(path: Path) -> None:
    """`path` was removed (or is the user's to keep): the janitor leaves it alone."""
    _send({"keep": str(path)})


def kill_at_exit(pgid: int) -> None:
    """Have the process group `pgid` killed when this process exits without ending it itself."""
    _send({"killpg": pgid})


def ended(pgid: int) -> None:
    """The group `pgid` was ended by the lab: the janitor leaves that number alone (it may be reused)."""
    _send({"ended": pgid})


def _send(message: dict[str, str | int]) -> None:
    global _janitor
    with _lock:
        if _janitor is None:
            if "keep" in message or "ended" in message:
                return
            _janitor = subprocess.Popen(
                [sys.executable, "-I", __file__],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # Its own session: a Ctrl-C at the terminal, or a signal to paidtwice's group, is not for it.
                start_new_session=True,
            )
        if _janitor.stdin is None:
            return
        try:
            _janitor.stdin.write(json.dumps(message).encode() + b"\n")
            _janitor.stdin.flush()
        except OSError:
            pass  # the janitor is gone: only the clean-up after a SIGKILL is lost, nothing the lab measures


def _remove(paths: list[str]) -> None:
    if not paths:
        return
    deadline = time.monotonic() + _GIVE_UP
    time.sleep(_SETTLE)
    while paths and time.monotonic() < deadline:
        for path in paths:
            shutil.rmtree(path, ignore_errors=True)
        time.sleep(_SETTLE)
        # A process that was still writing may have made a file again; look once more after the pause.
        paths = [path for path in paths if os.path.lexists(path)]


def _kill(groups: list[int]) -> None:
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    registered: dict[str, None] = {}
    groups: dict[int, None] = {}
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "remove" in message:
            registered[message["remove"]] = None
        elif "keep" in message:
            registered.pop(message["keep"], None)
        elif "killpg" in message:
            groups[int(message["killpg"])] = None
        elif "ended" in message:
            groups.pop(int(message["ended"]), None)
    _kill(list(groups))
    _remove(list(registered))


if __name__ == "__main__":
    main()
