"""An agent process the lab owns: a user's app (or the deck's agent) served by `paidtwice.agent.host`.

It keeps its port across restarts, so Restate's deployment URI stays valid: the lab binds the port's listening
socket and every process of the agent inherits it. `prepare()` starts a replacement that loads the app but
does not accept yet; `go()` lets it serve. The lab uses the two to make a restart's down time exactly the
experiment's restart delay, not the delay plus Python's import time. From a kill to that moment the
replacement resets every connection the server opens (`paidtwice.agent._go`): to Restate the agent is down,
as with the port closed, and the socket never waits for the killed process to let go of it.

Given the lab's fork server, each process is forked from one that has imported `AGENT_PRELOAD` already, so
starting an agent costs a fork and the app's own import, not the SDK's and the web server's.
"""

from __future__ import annotations

import errno
import json
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from paidtwice._exceptions import PaidtwiceError, ServerStartError
from paidtwice.agent._go import go_line
from paidtwice.engine import (
    HOST,
    ForkServer,
    PortLease,
    Process,
    lease_port,
    load_timeout,
    loaded_in,
    too_slow,
    wait_for_load,
    wait_port_free,
    wait_until,
)

__all__ = [
    "AGENT_PRELOAD",
    "AgentAttempt",
    "AgentHost",
    "LeasedAgent",
    "attempt_of",
    "number_attempts",
    "wait_alive",
]

AGENT_PRELOAD = (
    "restate",
    "restate.server",
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "anyio",
    "anyio.lowlevel",
    "anyio._core._sockets",
    "anyio._core._streams",
    "anyio._core._tasks",
    "anyio._backends._asyncio",
    "sniffio",
    "encodings.idna",
    "concurrent.futures.thread",
    "hypercorn.asyncio",
    "hypercorn.config",
    "paidtwice.agent._app",
    "paidtwice.agent._wire",
    "aiohttp",
)
"""What `paidtwice.agent.host` and the deck's agent import, at start-up and lazily while serving (found by
logging, in a forked agent, every import it still made), for a fork server to import once. Not the host
module itself (it runs as `__main__`) and never an app (apps read their environment when imported).
aiohttp is imported by a host with a step log, to log the model requests made through it: a quarter of a
second of CPU each time, paid by a replacement agent inside the pause it must be killed in."""


@dataclass(frozen=True)
class AgentAttempt:
    """One attempt that reached the agent, as the host read it off the wire."""

    invocation_id: str
    """The invocation the attempt served."""
    at: float
    """Wall-clock time the attempt's StartMessage arrived."""
    pid: int
    """The agent process that served it."""
    retry: int
    """The server's count of attempts that failed since the invocation last made progress (0 on the first)."""
    progressed: bool
    """The attempt sent a new command (beyond the replayed journal): the server reset its count then."""
    error_code: int | None
    """The failure code the agent sent (570: journal mismatch); None if it ended otherwise or was killed."""
    ended: float | None = None
    """Wall-clock time the agent sent its last frame (an error, the end, a suspension); None if killed."""
    last_event: str | None = None
    """How it ended on the wire: "error", "end" (the handler returned) or "suspend"; None if cut off."""
    journal_waits: tuple[float, ...] = ()
    """Seconds from each `ctx.run` result the agent proposed to the next frame the server sent back (the
    result journaled): the journal round trips the handler waited on, in order."""
    model_requests: int = 0
    """Model requests its handler began (the host sees each one a handler makes)."""


def attempt_of(records: Sequence[dict[str, Any]], pid: int) -> AgentAttempt | None:
    """One attempt from the wire events logged for it (start, progress, error, end, suspend); None when its
    start was not logged."""
    start = next((r for r in records if r["event"] == "start"), None)
    if start is None:
        return None
    errors = [r["code"] for r in records if r["event"] == "error"]
    endings = [r for r in records if r["event"] in ("error", "end", "suspend")]
    proposed = [r["at"] for r in records if r["event"] == "propose"]
    acked = [r["at"] for r in records if r["event"] == "ack"]
    return AgentAttempt(
        invocation_id=start["invocation"],
        at=start["at"],
        pid=pid,
        retry=start["retry"],
        progressed=any(r["event"] == "progress" for r in records),
        error_code=errors[-1] if errors else None,
        ended=endings[-1]["at"] if endings else None,
        last_event=endings[-1]["event"] if endings else None,
        # A proposal the kill cut off before its answer has no ack: zip leaves it out.
        journal_waits=tuple(ack - sent for sent, ack in zip(proposed, acked, strict=False)),
        model_requests=sum(1 for r in records if r["event"] == "model"),
    )


def number_attempts(attempts: Sequence[AgentAttempt]) -> list[int]:
    """Each attempt's number among all the invocation's attempts, those that never reached the agent included.

    The count in an attempt's StartMessage restarts from 0 at the last attempt that made progress, so an
    attempt is that many attempts after it. A restarted server forgets the count (it is in memory), so an
    attempt is also at least one after the one before.
    """
    numbers: list[int] = []
    base = 1
    for attempt in attempts:
        number = max(base + attempt.retry, (numbers[-1] + 1) if numbers else 1)
        numbers.append(number)
        if attempt.progressed:
            base = number
    return numbers


def wait_alive(
    process: Process,
    ready: Callable[[], bool],
    *,
    exited: Callable[[], str],
    late: str | Callable[[], str],
    timeout: float | None = None,
    interval: float = 0.02,
    error: type[PaidtwiceError] = ServerStartError,
) -> None:
    """Block until `ready()` holds; `error(exited())` if the process exits first, an error saying `late`
    (or what it returns then: "... did not load the app"), the wait and how to lengthen it if it does not
    hold within `timeout`
    (None: `load_timeout()`). The one wait of every agent kind (loading, listening)."""
    timeout = load_timeout() if timeout is None else timeout

    def up() -> bool:
        if not process.alive():
            raise error(exited())
        return ready()

    pid = process.pid
    waited = (
        wait_for_load(up, pid, timeout=timeout, interval=interval)
        if pid is not None
        else (None if wait_until(up, timeout=timeout, interval=interval) else timeout)
    )
    if waited is not None:
        raise error(too_slow(late if isinstance(late, str) else late(), waited))


class LeasedAgent:
    """What every agent kind shares: a leased port the server reaches it on, a context manager that
    closes it. A kind implements `start`, `prepare`/`wait_ready` (load a replacement ahead), `kill`,
    `release(at)`/`wait_up` (listen again at `at`), `attempts` and `close`
    (`paidtwice.targets.Agent`)."""

    def __init__(self, *, env: Mapping[str, str], workdir: Path, cwd: Path | None) -> None:
        self.env = dict(env)
        """The environment every process of the agent is started with."""
        self.workdir = workdir
        """Directory for the agent's logs."""
        self.cwd = cwd
        """Directory the agent runs in."""
        self._lease: PortLease = lease_port()
        self.starts = 0
        """How many processes have been started."""

    @property
    def port(self) -> int:
        return self._lease.port

    @property
    def uri(self) -> str:
        return f"http://{HOST}:{self.port}"

    def release(self, at: float | None = None) -> None:
        raise NotImplementedError

    def wait_up(self) -> float:
        raise NotImplementedError

    def restart(self, at: float | None = None) -> float:
        """Listen again at wall-clock time `at` (else now); the time it listened."""
        self.release(at)
        return self.wait_up()

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AgentHost(LeasedAgent):
    """One agent process on a port of its own, restartable, killed as a process group."""

    def __init__(
        self,
        *,
        target: str,
        env: Mapping[str, str],
        workdir: Path,
        name: str = "agent",
        cwd: Path | None = None,
        forkserver: ForkServer | None = None,
    ) -> None:
        super().__init__(env=env, workdir=workdir, cwd=cwd)
        self.target = target
        """MODULE:APP served."""
        self.name = name
        self.forkserver = forkserver
        """Fork each process from it; without one, each process is a new interpreter."""
        self._process: Process | None = None
        self._ready: Path | None = None
        """Ready file of the serving process."""
        self._pending: list[tuple[Process, Path]] = []
        self._spawned: dict[Path, float] = {}
        """When each pending process was started (wall clock), by its ready file: its load is measured."""
        self._listener: socket.socket | None = None
        """The port's listening socket, which every process of the agent inherits; None until a process is
        started, and again once a kill left no process to turn the server's connections away."""

    @property
    def attempt_log(self) -> Path:
        return self.workdir / f"{self.name}.attempts.jsonl"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def _ready_file(self, start: int) -> Path:
        return self.workdir / f"{self.name}.{start}.ready"

    def _spawn(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        ready = self._ready_file(self.starts)
        argv = [
            sys.executable,
            "-m",
            "paidtwice.agent.host",
            self.target,
            "--port",
            str(self.port),
            "--attempt-log",
            str(self.attempt_log),
            "--wait-for-go",
            "--ready-file",
            str(ready),
        ]
        if self._listener is None:
            self._listener = _listen(self.port)
        listen_fd = self._listener.fileno()
        argv += ["--listen-fd", str(listen_fd)]
        spawned = time.time()
        process = Process(
            argv,
            name=f"{self.name} on :{self.port}",
            env=self.env,
            log_path=self.log_path,
            cwd=self.cwd,
            stdin_pipe=True,
            pass_fds=[listen_fd],
            forkserver=self.forkserver,
            # A replacement is prepared while the old process still serves the port; it accepts only on go().
        ).start(ports_free=False)
        self._pending.append((process, ready))
        self._spawned[ready] = spawned

    def start(self) -> AgentHost:
        """Start the agent and wait until it listens."""
        self.prepare()
        self.go()
        return self

    def prepare(self, *, ahead: int = 1) -> None:
        """Start processes that load the app but do not open the port yet, until `ahead` are loading or
        loaded (2 before `start`: the process to serve and its replacement load side by side)."""
        while len(self._pending) < ahead:
            self._spawn()

    def wait_ready(self) -> None:
        """Block until the prepared process has loaded the app."""
        self.prepare()
        process, ready = self._pending[0]
        wait_alive(
            process,
            ready.exists,
            exited=lambda: f"{process.name} exited while loading the app: {process.log_tail()}",
            late=f"{process.name} did not load the app",
        )
        spawned = self._spawned.pop(ready, None)
        if spawned is not None:
            loaded_in(ready.stat().st_mtime - spawned)

    def go(self, at: float | None = None, *, hold_pause: bool = False) -> float:
        """Open the prepared process's port, at wall-clock time `at` if given (else now); returns the time it
        started listening, as the process saw it. With `hold_pause`, the process withholds the end of its
        first live durable pause (`HOLD_PAUSE`)."""
        self.release(at, hold_pause=hold_pause)
        return self.wait_up()

    def release(self, at: float | None = None, *, hold_pause: bool = False, refuse: int = 0) -> None:
        """Tell the prepared process to serve from wall-clock time `at` if given (else now), once it has
        reset `refuse` connections; do not wait."""
        self.wait_ready()
        if self._process is not None and self._process.alive():
            raise RuntimeError(f"{self.name}: the old process still serves port {self.port}")
        self._process, self._ready = self._pending.pop(0)
        self._process.send_line(go_line(at, hold_pause=hold_pause, refuse=refuse))

    def wait_up(self) -> float:
        """Block until the released process listens; returns the time it started listening."""
        process, ready = self._process, self._ready
        assert process is not None and ready is not None
        listening: list[float] = []

        def up() -> bool:
            *complete, _partial = ready.read_text().split("\n")
            for line in complete:
                if line.startswith("listening "):
                    listening.append(float(line.split()[1]))
                    return True
            return False

        wait_alive(
            process,
            up,
            exited=lambda: f"{process.name} exited before listening: {process.log_tail()}",
            late=f"{process.name} did not listen on :{self.port}",
            interval=0.005,
        )
        return listening[0]

    def kill(self, *, listen_after: float | None = None, refuse: int = 0) -> float:
        """SIGKILL the serving process's group; returns when it was sent. The port stays leased.

        With `listen_after`, the prepared replacement is told, as soon as the signal is sent, to serve that
        many seconds after it and once it has reset `refuse` connections (the retries the down time stands
        for): the lab's confirmation that the group is gone, slow on a busy machine, is then no part of the
        down time. Without, a prepared replacement resets connections until it is released; with none
        prepared, the port is closed once the group is gone."""
        at = time.time()
        process, self._process = self._process, None
        if process is not None:
            process.send_kill()
        if listen_after is not None:
            self.release(at + listen_after, refuse=refuse)
        elif self._pending:
            self._pending[0][0].send_line(go_line(None, hold=True))
        elif self._listener is not None:
            self._listener.close()
            self._listener = None
        if process is not None:
            process.kill()
        return at

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    @property
    def pid(self) -> int | None:
        """The serving process's pid; None while the agent is down."""
        return self._process.pid if self._process is not None else None

    def attempts(self, invocation_id: str | None = None) -> list[AgentAttempt]:
        """Attempts that reached the agent, from the host's attempt log, in the order they started."""
        try:
            lines = self.attempt_log.read_text().splitlines()
        except FileNotFoundError:
            return []
        events: dict[tuple[int, int], list[dict[str, Any]]] = {}
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            if invocation_id is None or record["invocation"] == invocation_id:
                events.setdefault((record["pid"], record["attempt"]), []).append(record)
        attempts = [attempt_of(records, pid) for (pid, _), records in events.items()]
        return sorted((a for a in attempts if a is not None), key=lambda a: a.at)

    def close(self) -> None:
        try:
            for process in (self._process, *(p for p, _ in self._pending)):
                if process is not None:
                    process.kill()
            if self._listener is not None:
                self._listener.close()
                self._listener = None
                if not wait_port_free(self.port, timeout=5.0):
                    raise ServerStartError(f"{self.name} was closed but port {self.port} is still taken")
        finally:
            self._pending = []
            self._process = None
            self._lease.release()


_BIND_TIMEOUT = 10.0
"""Seconds the lab waits for the agent's port to be free to bind it (a killed process may still hold it)."""


def _listen(port: int) -> socket.socket:
    """The agent's listening socket on `port`, inheritable by its processes."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    deadline = time.monotonic() + _BIND_TIMEOUT
    while True:
        try:
            sock.bind((HOST, port))
            break
        except OSError as err:
            if err.errno != errno.EADDRINUSE or time.monotonic() > deadline:
                sock.close()
                raise ServerStartError(f"the agent's port {port} could not be bound: {err}") from err
            time.sleep(0.005)
    sock.listen(1024)
    return sock
