"""An agent process the lab owns: a user's app (or the deck's agent) served by `paidtwice.agent.host`.

It keeps its port across restarts, so Restate's deployment URI stays valid. `prepare()` starts a replacement
that loads the app but keeps its port closed; `go()` opens it. The lab uses the two to make a restart's down
time exactly the experiment's restart delay, not the delay plus Python's import time.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from paidtwice._exceptions import ServerStartError
from paidtwice.engine._ports import HOST, PortLease, lease_port
from paidtwice.engine._process import Process, wait_until

__all__ = ["AgentAttempt", "AgentHost"]

_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class AgentAttempt:
    """One attempt that reached the agent, as the host logged it."""

    invocation_id: str
    """The invocation the attempt served."""
    at: float
    """Wall-clock time the attempt entered the handler."""
    pid: int
    """The agent process that served it."""


class AgentHost:
    """One agent process on a port of its own, restartable, killed as a process group."""

    def __init__(
        self,
        *,
        target: str,
        env: Mapping[str, str],
        workdir: Path,
        name: str = "agent",
        cwd: Path | None = None,
    ) -> None:
        self.target = target
        """MODULE:APP served."""
        self.env = dict(env)
        self.workdir = workdir
        """Directory for the agent's log and attempt log."""
        self.name = name
        self.cwd = cwd
        self._lease: PortLease = lease_port()
        self._process: Process | None = None
        self._pending: Process | None = None
        self.starts = 0
        """How many processes have been started on this port."""

    @property
    def port(self) -> int:
        return self._lease.port

    @property
    def uri(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def attempt_log(self) -> Path:
        return self.workdir / f"{self.name}.attempts.jsonl"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.name}.log"

    def _ready_file(self, start: int) -> Path:
        return self.workdir / f"{self.name}.{start}.ready"

    def _spawn(self) -> Process:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
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
            str(self._ready_file(self.starts)),
        ]
        return Process(
            argv,
            name=f"{self.name} on :{self.port}",
            env=self.env,
            log_path=self.log_path,
            ports=[self.port],
            cwd=self.cwd,
            stdin_pipe=True,
            # A replacement is prepared while the old process still serves the port; it binds only on go().
        ).start(ports_free=False)

    def start(self) -> AgentHost:
        """Start the agent and wait until it listens."""
        self.prepare()
        self.go()
        return self

    def prepare(self) -> None:
        """Start a process that loads the app but does not open its port yet."""
        if self._pending is None:
            self._pending = self._spawn()

    def wait_ready(self) -> None:
        """Block until the prepared process has loaded the app."""
        self.prepare()
        process = self._pending
        assert process is not None
        ready = self._ready_file(self.starts)

        def loaded() -> bool:
            if not process.alive():
                raise ServerStartError(f"{process.name} exited while loading the app: {process.log_tail()}")
            return ready.exists()

        if not wait_until(loaded, timeout=_START_TIMEOUT):
            raise ServerStartError(f"{process.name} did not load the app in {_START_TIMEOUT:.0f}s")

    def go(self) -> float:
        """Open the prepared process's port; returns the time it started listening."""
        self.wait_ready()
        process = self._pending
        assert process is not None
        self._pending = None
        if self._process is not None and self._process.alive():
            raise RuntimeError(f"{self.name}: the old process still serves port {self.port}")
        self._process = process
        process.send_line()
        process.wait_listening(self.port, timeout=_START_TIMEOUT, interval=0.005)
        return time.time()

    def kill(self) -> float:
        """SIGKILL the serving process's group; returns when it was sent. The port stays leased."""
        at = time.time()
        if self._process is not None:
            self._process.kill()
            self._process = None
        return at

    def alive(self) -> bool:
        return self._process is not None and self._process.alive()

    def attempts(self, invocation_id: str | None = None) -> list[AgentAttempt]:
        """Attempts that reached the agent, from the host's attempt log, in order."""
        try:
            lines = self.attempt_log.read_text().splitlines()
        except FileNotFoundError:
            return []
        attempts = []
        for line in lines:
            if not line.strip():
                continue
            record = json.loads(line)
            if invocation_id is None or record["invocation"] == invocation_id:
                attempts.append(AgentAttempt(record["invocation"], record["at"], record["pid"]))
        return attempts

    def close(self) -> None:
        try:
            # The serving process first: a prepared replacement never bound the port, so its kill checks
            # that the port is free only once the process that did bind it is gone.
            for process in (self._process, self._pending):
                if process is not None:
                    process.kill()
        finally:
            self._pending = self._process = None
            self._lease.release()

    def __enter__(self) -> AgentHost:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
