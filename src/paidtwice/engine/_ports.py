"""Loopback ports that no other paidtwice lab on this machine will pick.

Binding to port 0 finds a free port, but between closing that probe and the real server binding it another
lab could take the same number. Each port handed out here is also locked (an flock on a file named after it
under the system temp dir) for as long as this process holds the `PortLease`, and two labs never hold the
same lock. An agent that is killed and restarted keeps its port because the lease outlives the process.
A released lease removes its lock file while it still holds the lock, and the directory once it is empty:
a lab that ended leaves nothing in the temp dir. At exit a process also removes the files no one holds (a
SIGKILLed lab's), in the same way. (A lock is taken only on a file that is still in place after
the flock, so a holder's removal never lets two processes hold one port.)
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["HOST", "PortLease", "is_port_free", "lease_port", "leased_ports", "wait_port_free"]

_LOCK_DIR = Path(tempfile.gettempdir()) / "paidtwice-ports"
HOST = "127.0.0.1"


class PortLease:
    """A loopback port reserved for this process until `release()`."""

    def __init__(self, port: int, lock_fd: int) -> None:
        self.port = port
        """The reserved port number."""
        self._fd = lock_fd
        self._owner = os.getpid()
        """The process that took the lock: only it removes the file (a forked child inherits the object)."""
        with _LEASED_LOCK:
            _HELD.add(self)

    def release(self) -> None:
        if self._fd < 0:
            return
        mine = os.getpid() == self._owner
        if mine:
            with contextlib.suppress(OSError):
                _lock_path(self.port).unlink()
        os.close(self._fd)
        self._fd = -1
        with _LEASED_LOCK:
            _HELD.discard(self)
        if mine:
            with contextlib.suppress(OSError):
                _LOCK_DIR.rmdir()  # only when no other lease (of any lab) has a file in it

    def __repr__(self) -> str:
        return f"PortLease({self.port})"


def is_port_free(port: int) -> bool:
    """True if nothing listens on 127.0.0.1:port and it can be bound now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


_LEASED_BEFORE: set[int] = set()
"""Ports this process has leased: never handed out twice. Restate keys a deployment by its URI, and
registering a URI it knows returns the old deployment (HTTP 200) without discovering the new services, so an
agent on a reused port would be registered as whatever served that port before."""
_LEASED_LOCK = threading.Lock()
_HELD: set[PortLease] = set()
"""Leases not released yet: released at exit, so that a process that ends leaves no lock file."""


@atexit.register
def _release_held() -> None:
    with _LEASED_LOCK:
        held = list(_HELD)
    for lease in held:
        lease.release()
    _remove_unheld()


def _remove_unheld() -> None:
    """Remove the lock files no process holds: those of a lab that was SIGKILLed (the kernel released its
    locks, but nothing removed their files). Each is removed while locked here, as a release does."""
    with contextlib.suppress(OSError):
        for path in _LOCK_DIR.glob("*.lock"):
            if not path.stem.isdigit():
                continue
            fd = _lock(int(path.stem))
            if fd is not None:
                with contextlib.suppress(OSError):
                    path.unlink()
                os.close(fd)
        _LOCK_DIR.rmdir()  # only when no lease of any lab has a file in it


def _lock_path(port: int) -> Path:
    return _LOCK_DIR / f"{port}.lock"


def _lock(port: int) -> int | None:
    """The port's lock, taken (its file descriptor), or None if another process holds it."""
    path = _lock_path(port)
    while True:
        _LOCK_DIR.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
            break
        except FileNotFoundError:
            continue  # another lab removed the empty directory between the two calls
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        # Its last holder may have removed the file between our open and our flock: a lock on that file
        # would not exclude the next process, which creates a new one.
        if os.fstat(fd).st_ino == os.stat(path).st_ino:
            return fd
    except OSError:  # held elsewhere (BlockingIOError), or the file is gone (FileNotFoundError)
        pass
    os.close(fd)
    return None


def lease_port() -> PortLease:
    """Reserve a free loopback port that no other paidtwice process holds and this one never had."""
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind((HOST, 0))
            port = int(probe.getsockname()[1])
        with _LEASED_LOCK:
            if port in _LEASED_BEFORE:
                continue
            _LEASED_BEFORE.add(port)
        fd = _lock(port)
        if fd is None:
            continue
        if is_port_free(port):
            return PortLease(port, fd)
        lease = PortLease(port, fd)
        lease.release()
    raise OSError("no free loopback port could be reserved")


@contextlib.contextmanager
def leased_ports(count: int) -> Iterator[list[int]]:
    """Reserve `count` ports for the duration of the block."""
    leases = [lease_port() for _ in range(count)]
    try:
        yield [lease.port for lease in leases]
    finally:
        for lease in leases:
            lease.release()


def wait_port_free(port: int, *, timeout: float) -> bool:
    """Poll until the port can be bound again; False if it is still taken after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        if is_port_free(port):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
