"""A fork server: one process imports the agents' libraries once, then forks each agent from itself.

Why: an agent's imports (restate, hypercorn, httpx, ssl) cost a third of a second of CPU or more, and on two
cores a concurrent deck's thirty start-ups, not its experiments, set each row's wall time. A child runs
`-m MODULE ARGS` in the environment and directory asked for, as a plain start would; the app is never
imported beforehand (apps read their environment at import time). A fork server can fork another that
imports more (`ForkServer.forked_from`: an app's framework, `paidtwice.agent._preload`). A fork copies one
thread, so a fork server with another thread running refuses (`ForkRefused`) and the lab starts a new
interpreter.

Ownership: the fork server dies with the lab and each child with the fork server (parent-death signals, the
child's checked after it is set), so a SIGKILL of paidtwice takes every agent with it; each child leads its
own session and process group, killed as a group; the lab holds each child's pidfd, and the fork server
ignores SIGCHLD, so the kernel reaps its children.

Wire: a SOCK_SEQPACKET pair; `{"ready": true}` once imported. A request is `{"module", "args", "env", "cwd",
"pass_fds"}` (`"serve": true` for a fork server) with the child's stdin, its log, then a descriptor for each
of `pass_fds`, given to the child at that number. The answer: `{"pid"}` with the child's pidfd,
`{"pid", "exited": true}`, or `{"refused": WHY}`.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import threading
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

from paidtwice._exceptions import ServerStartError
from paidtwice.engine._process import Process, die_with_parent
from paidtwice.engine._startup import load_timeout, too_slow

__all__ = ["ForkRefused", "ForkServer", "ForkedChild"]

_MAX_MESSAGE = 1 << 20
_MAX_FDS = 8
"""Descriptors a request may carry: stdin, the log, and a few the child inherits."""


class ForkRefused(ServerStartError):
    """The fork server did not fork (it runs a thread besides its main one): start the process plainly."""


class ForkedChild:
    """A child of the fork server, seen from the lab: its pid (also its process group) and a pidfd."""

    def __init__(self, pid: int, pidfd: int | None, stdin: IO[bytes] | None) -> None:
        self.pid = pid
        self._pidfd = pidfd
        """Readable once the child has exited; None if it had exited before the fork server could open it."""
        self.stdin = stdin
        self.returncode: int | None = None
        """Never known here: the kernel reaps the child for the fork server (which ignores SIGCHLD)."""
        self._lock = threading.Lock()
        """Held while the pidfd is polled or closed: two threads waiting for one child must not both close
        it (the second close would close a descriptor the process has given to a socket since)."""

    def running(self) -> bool:
        with self._lock:
            return self._pidfd is not None and not _readable(self._pidfd, timeout_ms=0)

    def wait(self) -> None:
        """Block until the child has exited (on a copy of the pidfd: `running` is not held up meanwhile)."""
        with self._lock:
            if self._pidfd is None:
                return
            copy = os.dup(self._pidfd)
        try:
            _readable(copy, timeout_ms=None)
        finally:
            os.close(copy)
        with self._lock:
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None


def _readable(fd: int, *, timeout_ms: int | None) -> bool:
    """Whether `fd` is readable, waiting up to `timeout_ms` (None: until it is). poll, not select: select
    cannot watch a descriptor numbered 1024 or more, and a lab under load holds that many sockets."""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    return bool(poller.poll(timeout_ms))


class ForkServer:
    """The lab's side of a fork server. `start()` does not wait for its imports: `wait_ready()` or the first
    `spawn()` does."""

    def __init__(self, *, preload: Sequence[str], log_path: Path) -> None:
        self.preload = list(preload)
        """Modules imported once, before any fork."""
        self.log_path = log_path
        self._socket: socket.socket | None = None
        self._process: Process | None = None
        self._child: ForkedChild | None = None
        """Set when this fork server was forked from another (`forked_from`)."""
        self._ready = False
        self._lock = threading.Lock()
        self.forks = 0
        """Children forked so far."""

    def start(self) -> ForkServer:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            # `-c`, not `-m`: the engine package imports this module, and runpy would run a second copy.
            entry = f"from {__name__} import main; raise SystemExit(main())"
            self._process = Process(
                [sys.executable, "-c", entry, "--fd", str(theirs.fileno()), *self.preload],
                name="fork server",
                log_path=self.log_path,
                pass_fds=[theirs.fileno()],
            ).start()
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._socket = ours
        return self

    @classmethod
    def forked_from(
        cls,
        parent: ForkServer,
        *,
        preload: Sequence[str],
        env: Mapping[str, str],
        cwd: Path | None,
        log_path: Path,
    ) -> ForkServer:
        """A fork server forked from `parent` that also imports `preload`, with this environment and working
        directory (its children's, less what each child sets). `ForkRefused` if `parent` would not fork."""
        server = cls(preload=preload, log_path=log_path)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        request = {"module": __name__, "args": list(preload), "env": dict(env), "cwd": str(cwd or "")}
        try:
            with log_path.open("ab") as log:
                answer, fds = parent._request({**request, "serve": True}, theirs.fileno(), log.fileno())
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        server._child = ForkedChild(int(answer["pid"]), fds[0] if fds else None, None)
        server._socket = ours
        return server

    def _failed(self, what: str, err: object) -> ServerStartError:
        """The exchange with the fork server broke: no answer can be trusted to match its request now."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        try:
            tail = self.log_path.read_text(errors="replace")[-2000:].strip()
        except OSError:
            tail = ""
        return ServerStartError(f"the fork server failed ({what}: {err}): {tail} (log: {self.log_path})")

    def _receive(self, what: str, timeout: float) -> tuple[dict[str, Any], list[int]]:
        assert self._socket is not None
        self._socket.settimeout(timeout)
        try:
            data, fds, _flags, _address = socket.recv_fds(self._socket, _MAX_MESSAGE, 1)
        except TimeoutError:
            raise self._failed(what, too_slow("no answer", timeout)) from None
        except OSError as err:
            raise self._failed(what, err) from None
        if not data:
            raise self._failed(what, "it exited")
        message: dict[str, Any] = json.loads(data)
        return message, fds

    def wait_ready(self) -> None:
        """Block until the fork server has done its imports."""
        with self._lock:
            self._wait_ready()

    def _wait_ready(self) -> None:
        if self._socket is None:
            raise ServerStartError(f"the fork server is not running (log: {self.log_path})")
        if not self._ready:
            self._receive("waiting for its imports", timeout=load_timeout())
            self._ready = True

    def spawn(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: Path | None,
        log_fd: int,
        stdin: bool,
        pass_fds: Sequence[int] = (),
    ) -> ForkedChild:
        """Fork `argv` (which must read `PYTHON -m MODULE ARGS...`) with this environment and directory; the
        child inherits `pass_fds` at their numbers."""
        if len(argv) < 3 or argv[1] != "-m":
            raise ValueError(f"the fork server runs only `python -m MODULE ...`, not {list(argv)!r}")
        stdin_read, stdin_write = os.pipe() if stdin else (os.open(os.devnull, os.O_RDONLY), -1)
        request = {
            "module": argv[2],
            "args": list(argv[3:]),
            "env": dict(env),
            "cwd": str(cwd or ""),
            "pass_fds": list(pass_fds),
        }
        try:
            answer, fds = self._request(request, stdin_read, log_fd, *pass_fds)
        except BaseException:
            if stdin_write >= 0:
                os.close(stdin_write)
            raise
        finally:
            os.close(stdin_read)
        writer = os.fdopen(stdin_write, "wb") if stdin_write >= 0 else None
        return ForkedChild(int(answer["pid"]), fds[0] if fds else None, writer)

    def _request(
        self, request: dict[str, Any], stdin_fd: int, log_fd: int, *passed: int
    ) -> tuple[dict[str, Any], list[int]]:
        what = f"forking {request['module']}"
        with self._lock:
            self._wait_ready()
            assert self._socket is not None
            self._socket.settimeout(load_timeout())
            try:
                socket.send_fds(self._socket, [json.dumps(request).encode()], [stdin_fd, log_fd, *passed])
            except OSError as err:
                raise self._failed(what, err) from None
            answer, fds = self._receive(what, timeout=load_timeout())
            if "refused" in answer:
                raise ForkRefused(f"{what}: {answer['refused']}")
            self.forks += 1
        return answer, fds

    def close(self) -> None:
        """Kill the fork server; a child still alive dies with it (its parent-death signal)."""
        try:
            if self._process is not None:
                self._process.kill()
            if self._child is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self._child.pid, signal.SIGKILL)
                self._child.wait()
        finally:
            if self._socket is not None:
                self._socket.close()
                self._socket = None


# -- the fork server's own process ---------------------------------------------------------------------


def _exit_code(exit: SystemExit) -> int:
    if exit.code is None or isinstance(exit.code, int):
        return exit.code or 0
    print(exit.code, file=sys.stderr)
    return 1


def _child(channel: socket.socket, parent: int, request: dict[str, Any], fds: list[int]) -> NoReturn:
    """In the forked child: become the program a plain `python -m MODULE ARGS` start would have been."""
    code = 1
    try:
        channel.close()
        os.setsid()
        die_with_parent()
        if os.getppid() != parent:
            os._exit(1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        stdin, log, *passed = fds
        os.dup2(stdin, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(stdin)
        os.close(log)
        _pass_fds(passed, request.get("pass_fds", []))
        os.environ.clear()
        os.environ.update(request["env"])
        if request["cwd"]:
            os.chdir(request["cwd"])
        # As `python -m` would have it: the working directory first on the path.
        sys.path[0] = os.getcwd()
        sys.argv = [request["module"], *request["args"]]
        if request.get("serve"):
            code = main(["--fd", "0", *request["args"]])
        else:
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
            code = 0
    except SystemExit as exit:
        code = _exit_code(exit)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001, S110 - nothing is left to report to
                pass
        os._exit(code)


def _pass_fds(received: list[int], numbers: list[int]) -> None:
    """Put each descriptor received at the number the lab asked for, inheritable, and close the rest."""
    # Moved above every number asked for first, so that no dup2 lands on a descriptor still to be moved.
    floor = max([*numbers, *received, 2]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, floor) for fd in received]
    for fd in received:
        os.close(fd)
    for fd, number in zip(moved, numbers, strict=True):
        os.dup2(fd, number)
        os.close(fd)


def _serve(channel: socket.socket) -> None:
    parent = os.getpid()
    channel.send(json.dumps({"ready": True}).encode())
    while True:
        try:
            data, fds, _flags, _address = socket.recv_fds(channel, _MAX_MESSAGE, _MAX_FDS)
        except OSError:
            return
        if not data:
            return  # the lab closed its end
        request = json.loads(data)
        refused = _threads_running()
        if refused:
            for fd in fds:
                os.close(fd)
            print(f"fork server: not forking {request['module']}: {refused}", file=sys.stderr, flush=True)
            channel.send(json.dumps({"refused": refused}).encode())
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            _child(channel, parent, request, fds)
        for fd in fds:
            os.close(fd)
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            channel.send(json.dumps({"pid": pid, "exited": True}).encode())
            continue
        try:
            socket.send_fds(channel, [json.dumps({"pid": pid}).encode()], [pidfd])
        finally:
            os.close(pidfd)


def _threads_running() -> str | None:
    """Why this process must not fork now (a thread runs besides the main one); None if it may. Counted
    by the kernel's task list, so a thread a C extension started counts too."""
    try:
        count = len(os.listdir("/proc/self/task"))
    except OSError:
        count = threading.active_count()
    if count <= 1:
        return None
    names = ", ".join(t.name for t in threading.enumerate() if t is not threading.main_thread())
    return (
        f"it runs {count - 1} thread(s) besides its main one ({names or 'started outside Python'}); a fork "
        "would copy their locks but not them"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="paidtwice fork server")
    parser.add_argument("--fd", type=int, required=True, help="the SOCK_SEQPACKET socket to the lab")
    parser.add_argument("preload", nargs="*", help="modules to import before any fork")
    args = parser.parse_args(argv)
    channel = socket.socket(fileno=args.fd)
    for module in args.preload:
        try:
            importlib.import_module(module)
        except ImportError as err:
            # Only a saving is lost: the child imports it itself, if it needs it.
            print(f"fork server: not preloaded: {module}: {err}", file=sys.stderr)
    # The kernel reaps the children: the lab watches them through pidfds, and no zombie is left behind.
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    _serve(channel)
    return 0
