"""Processes the lab owns: each in its own process group, killed as a group, never left behind.

A `Process` is started in a new session (so its pid is its process-group id) and with a parent-death signal,
so that if paidtwice itself is killed with SIGKILL the kernel kills the child too. `kill()` sends SIGKILL
to the whole group, waits for the child to exit, and confirms that the ports it was serving are free again:
a restart that found the old process still answering would make every later count wrong.

A Python program run as `python -m MODULE` can instead be forked by a `ForkServer`
(`paidtwice.engine._forkserver`), which has imported its libraries already. That child is owned and killed
in the same way. A fork server that refuses to fork (it runs a thread) gets the program started plainly,
and the reason logged at debug level (logger `paidtwice.engine`).
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Protocol

from paidtwice._exceptions import ServerStartError
from paidtwice.engine._janitor import ended, kill_at_exit
from paidtwice.engine._ports import HOST, wait_port_free

if TYPE_CHECKING:
    from paidtwice.engine._forkserver import ForkServer

__all__ = ["Process", "die_with_parent", "port_is_listening", "wait_until"]

_PR_SET_PDEATHSIG = 1
_log = logging.getLogger("paidtwice.engine")


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when its parent dies.

    Runs in a child between fork and exec (or in a forked child). Linux only; elsewhere the finally blocks
    are the only guard."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def port_is_listening(port: int) -> bool:
    """True if something accepts TCP connections on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.5)
        return probe.connect_ex((HOST, port)) == 0


def wait_until(condition: Callable[[], bool], *, timeout: float, interval: float = 0.02) -> bool:
    """Poll `condition` until it holds or `timeout` seconds pass; returns whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


class _Child(Protocol):
    """What `Process` needs of a running child, however it was started."""

    @property
    def pid(self) -> int: ...

    @property
    def stdin(self) -> IO[bytes] | None: ...

    @property
    def returncode(self) -> int | None: ...

    def running(self) -> bool: ...

    def wait(self) -> object: ...


class _Popened:
    """A child started by `subprocess.Popen`: the lab is its parent and reaps it."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def stdin(self) -> IO[bytes] | None:
        return self._popen.stdin

    @property
    def returncode(self) -> int | None:
        return self._popen.returncode

    def running(self) -> bool:
        return self._popen.poll() is None

    def wait(self) -> object:
        return self._popen.wait()


class Process:
    """One child process in its own process group, owned by the lab.

    Use it as a context manager: the group is killed on exit, also on an exception or Ctrl-C.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        env: Mapping[str, str] | None = None,
        log_path: Path,
        ports: Sequence[int] = (),
        cwd: Path | None = None,
        stdin_pipe: bool = False,
        pass_fds: Sequence[int] = (),
        forkserver: ForkServer | None = None,
    ) -> None:
        self.argv = list(argv)
        """Command line the process runs."""
        self.name = name
        """Short name used in messages ("restate-server", "agent on :41234")."""
        self.env = dict(env) if env is not None else None
        self.log_path = log_path
        """File that receives the process's stdout and stderr."""
        self.ports = list(ports)
        """Ports the process serves; each must be free again after `kill()`."""
        self.cwd = cwd
        self.stdin_pipe = stdin_pipe
        """Give the process a pipe on stdin, for `send_line()`."""
        self.pass_fds = list(pass_fds)
        """File descriptors the child inherits, at their numbers."""
        self.forkserver = forkserver
        """Fork the process from this fork server (argv must read `PYTHON -m MODULE ...`) instead of
        starting a new interpreter."""
        self._child: _Child | None = None

    @property
    def pid(self) -> int | None:
        return self._child.pid if self._child is not None else None

    def start(self, *, ports_free: bool = True) -> Process:
        """Start the process; unless `ports_free` is False, its ports must be free first."""
        if self._child is not None and self._child.running():
            raise RuntimeError(f"{self.name} is already running")
        for port in self.ports if ports_free else ():
            if not wait_port_free(port, timeout=5.0):
                raise ServerStartError(
                    f"{self.name}: port {port} is still taken by another process; "
                    "a restart now would talk to the old one"
                )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        log = self.log_path.open("ab")
        try:
            self._child = self._forked(log) if self.forkserver is not None else None
            if self._child is None:
                self._child = _Popened(
                    subprocess.Popen(
                        self.argv,
                        env=self.env,
                        cwd=self.cwd,
                        stdin=subprocess.PIPE if self.stdin_pipe else subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        start_new_session=True,
                        preexec_fn=die_with_parent,
                        pass_fds=self.pass_fds,
                    )
                )
                # The parent-death signal reaches the child only, not what it starts in its group.
                kill_at_exit(self._child.pid)
        except OSError as err:
            raise ServerStartError(f"{self.name} could not be started: {err}") from err
        finally:
            log.close()
        return self

    def _forked(self, log: IO[bytes]) -> _Child | None:
        """The process forked from the fork server; None if it refused to fork (then it starts plainly)."""
        from paidtwice.engine._forkserver import ForkRefused

        assert self.forkserver is not None
        try:
            return self.forkserver.spawn(
                self.argv,
                env=self.env if self.env is not None else os.environ,
                cwd=self.cwd,
                log_fd=log.fileno(),
                stdin=self.stdin_pipe,
                pass_fds=self.pass_fds,
            )
        except ForkRefused as refused:
            _log.debug("%s started as a new interpreter, not forked: %s", self.name, refused)
            return None

    def send_line(self, line: str = "") -> None:
        """Write one line to the process's stdin (it must have been started with `stdin_pipe`)."""
        if self._child is None or self._child.stdin is None:
            raise RuntimeError(f"{self.name} has no stdin pipe")
        self._child.stdin.write((line + "\n").encode())
        self._child.stdin.flush()

    def alive(self) -> bool:
        return self._child is not None and self._child.running()

    @property
    def returncode(self) -> int | None:
        """Exit status, once known; never for a forked child, which the kernel reaps for the fork server."""
        return self._child.returncode if self._child is not None else None

    def log_tail(self, lines: int = 3) -> str:
        try:
            text = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(line.strip() for line in text[-lines:])

    def send_kill(self) -> None:
        """SIGKILL the whole process group; do not wait (`kill` waits, and confirms its ports are free)."""
        if self._child is None:
            return
        try:
            os.killpg(self._child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def kill(self, *, ports_free: bool = True) -> None:
        """SIGKILL the whole process group, wait for it to exit, and confirm its ports are free (unless
        `ports_free` is False: a successor was told to take them over as soon as they are)."""
        child = self._child
        if child is None:
            return
        self.send_kill()
        child.wait()
        if child.stdin is not None:
            child.stdin.close()
        # The group may hold more than the leader (a server's workers): wait until none is left.
        if wait_until(lambda: not _group_alive(child.pid), timeout=5.0) and isinstance(child, _Popened):
            ended(child.pid)
        for port in self.ports if ports_free else ():
            if not wait_port_free(port, timeout=5.0):
                raise ServerStartError(f"{self.name} was killed but port {port} is still taken")

    def stop(self, *, grace: float = 5.0) -> None:
        """SIGTERM the group, then SIGKILL whatever is left after `grace` seconds."""
        child = self._child
        if child is None:
            return
        if child.running():
            try:
                os.killpg(child.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            wait_until(lambda: not child.running(), timeout=grace, interval=0.05)
        self.kill()

    def __enter__(self) -> Process:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()


def _group_alive(pgid: int) -> bool:
    """Some process of the group still runs. A zombie does not count: it holds no port and no file, and a
    grandchild orphaned by the kill (`sh -c` runs its command as one) is reaped by init, which here takes
    seconds (1.7 s measured), not by us."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _group_runs(pgid)


def _group_runs(pgid: int) -> bool:
    """A process of the group that is not a zombie, from /proc; True where there is no /proc to read."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue  # gone since the listing
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False
