"""The janitor: removes the lab's temporary directories when paidtwice dies without running its `finally`.

Every process the lab starts dies with paidtwice (a parent-death signal), however paidtwice dies. Its
directories (`/tmp/paidtwice-lab-*`, `/tmp/paidtwice-restate-*`) are removed by the code that made them, in a
`finally`, which a SIGKILL (or a SIGTERM in a program that does not handle it) never runs. So one process
outlives paidtwice by design: the janitor, started on the first directory registered, in a session of its
own and without a parent-death signal.

It reads a pipe whose write end only paidtwice holds. Lines are JSON: `{"remove": PATH}` when a directory
is made, `{"keep": PATH}` when its owner has removed it (or hands it to the user). The kernel closes the pipe
when paidtwice exits, whichever way; at end of file the janitor removes every directory still registered and
exits. After a normal exit nothing is left registered, and it exits at once.

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

__all__ = ["forget", "remove_at_exit"]

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


def _send(message: dict[str, str]) -> None:
    global _janitor
    with _lock:
        if _janitor is None:
            if "keep" in message:
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


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    registered: dict[str, None] = {}
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if "remove" in message:
            registered[message["remove"]] = None
        elif "keep" in message:
            registered.pop(message["keep"], None)
    _remove(list(registered))


if __name__ == "__main__":
    main()
