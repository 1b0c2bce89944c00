"""The agent of the kinds paidtwice's own host serves (`_app`): `AgentHost`, one app served by
`paidtwice.agent.host`, restartable on one port.

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

import json
import socket
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from paidtwice._exceptions import ServerStartError
from paidtwice.agent import (
    GATES,
    RELEASE_PAUSE,
    AgentAttempt,
    LeasedAgent,
    attempt_of,
    go_line,
    listening_socket,
    wait_alive,
)
from paidtwice.engine import ForkServer, Process, loaded_in, wait_port_free

__all__ = ["AgentHost"]


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
            try:
                self._listener = listening_socket(self.port)
            except OSError as err:
                raise ServerStartError(f"the agent's port {self.port} could not be bound: {err}") from err
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

    def start(self, *, hold_pause: bool = False) -> AgentHost:
        """Start the agent and wait until it listens; with `hold_pause`, its first process withholds the end
        of its first live durable pause (`HOLD_PAUSE`) until `release_pause`."""
        self.prepare()
        self.go(hold_pause=hold_pause)
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

    def release_pause(self) -> None:
        """Tell the serving process its fault has landed: the pause it holds (`start(hold_pause=True)`) ends,
        in whichever attempt now waits in it. Nothing to a process that holds none."""
        if self._process is not None and self._process.alive():
            self._process.send_line(RELEASE_PAUSE)

    def go_on(self, *, gate: str | None, hold_entries: int | None, hold_inbound: bool) -> bool:
        """Tell the serving process its gates from now on (`GATES`), then to end the pause it holds (the
        lines are read in order, on the handlers' loop). The host holds no journal: False with
        `hold_entries`."""
        if hold_entries is not None or self._process is None or not self._process.alive():
            return False
        self._process.send_line(f"{GATES}{gate or ''}")
        self._process.send_line(RELEASE_PAUSE)
        return True

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
