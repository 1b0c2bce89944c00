"""A deployment in any language, started by a command, seen through a protocol proxy the lab registers.

Nothing runs inside the agent's process: what the sweep counts comes from the stub's ledgers, the journal and
the service protocol on the wire. The proxy sits between restate-server and the command's port. It holds a
frame the server sends (an attempt's start, a completion) to stop the agent at a chosen journal entry before
it does anything more. It serves every service of the deployment under the run's own name, so many runs of
one command share a server and each run's calls between its handlers stay in its process. It reads the
frames both ways and logs, one line per event, each attempt's start (invocation, known entries, retry
count), its first new command, every step execution (a ProposeRunCompletion, named by its RunCommand), each
call and the callee's invocation, its failure code (570: journal mismatch) and how it ended. A Node command
also gets a preload (`listen_port.cjs`) that moves a fixed-port HTTP/2 listen to the run's leased port."""

from __future__ import annotations

import json
import os
import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from paidtwice._exceptions import PaidtwiceError, ServerStartError, UsageError
from paidtwice.agent._app import MANIFEST_ACCEPT
from paidtwice.agent._process import AgentAttempt, LeasedAgent, attempt_of, wait_alive
from paidtwice.agent._proxy import Proxy
from paidtwice.engine import HOST, PortLease, Process, ensure_node_binary, lease_port, port_is_listening

__all__ = ["CommandHost", "WireStep", "command_label", "command_manifest", "listens_elsewhere", "node_path"]

LISTEN_PORT = "PAIDTWICE_LISTEN_PORT"
"""The port the Node preload (`listen_port.cjs`) moves a fixed-port listen to: the run's leased port."""
_HOLDS = ("held", "went-on")
"""The wire log's events that say whether the proxy holds an attempt's journal (the last one counts)."""
_PRELOAD = Path(__file__).with_name("listen_port.cjs")
_MOVED = "paidtwice: moved the"
"""How the preload's line on the command's stderr begins."""
_SAYS_IT_LISTENS = re.compile(
    r"(?i)\b(?:listen\w*|running|serving)\b[^\n]{0,60}?(?:port\s*|:|\bon\s+)(\d{2,5})\b"
)
"""A log line saying where a server listens: "started listening on 9080", "Running on http://0.0.0.0:9080"."""


@dataclass(frozen=True)
class WireStep:
    """A ctx.run step as the proxy saw it: its RunCommand, and its ProposeRunCompletion once it executed."""

    name: str
    """The step's name (RunCommand field 12)."""
    attempt: int
    """The proxy's number of the attempt that sent it."""
    commanded: float
    """Wall-clock time its RunCommand passed the proxy."""
    proposed: float | None
    """Wall-clock time its result (ProposeRunCompletion) passed the proxy; None if never (cut off)."""
    value: str = ""
    """Its proposed result as text (the start of it, as the proxy logged it); empty for a failure or none."""


def command_label(name: str, command: str) -> str:
    """What a command sweep's matrices and records call the agent (their `mode`): the service swept (or
    SERVICE/HANDLER, when the sweep has several handlers) and the command that serves it, as given."""
    return f"{name} ({' '.join(command.split())})"


def node_path() -> dict[str, str]:
    """Node 22 first on a command's PATH (TypeScript Restate SDK 1.17 needs it), and the preload that moves
    a Node server's fixed port to the run's own (`listen_port.cjs`) in NODE_OPTIONS, after the user's."""
    node = ensure_node_binary()
    options = " ".join(filter(None, [os.environ.get("NODE_OPTIONS", ""), f'--require "{_PRELOAD}"']))
    return {"PATH": f"{node.parent}{os.pathsep}{os.environ.get('PATH', '')}", "NODE_OPTIONS": options}


def listens_elsewhere(log: Path, port: int) -> str:
    """ ", though its log says it listens on PORT" when the command's log names another port than `port`
    (a fixed port a preload could not move: not Node, or not an HTTP/2 server); else ""."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    if _MOVED in text:
        return ""  # the preload moved it: what the SDK logs is the port it asked for
    said = [int(p) for p in _SAYS_IT_LISTENS.findall(text)]
    other = next((p for p in reversed(said) if p != port), None)
    if other is None:
        return ""
    return (
        f"; it says it listens on {other}: serve on the port in the variable --port-env names, as a Node "
        "HTTP/2 server's fixed port is moved to it and another language's is not"
    )


def read_wire(log: Path, invocation_id: str | None = None) -> list[dict[str, Any]]:
    """The proxy's log lines, for one invocation if given."""
    try:
        lines = log.read_text().splitlines()
    except FileNotFoundError:
        return []
    records = []
    for line in lines:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if invocation_id is None or record["invocation"] == invocation_id:
            records.append(record)
    return records


class CommandHost(LeasedAgent):
    """The user's command on a port of its own behind a protocol proxy; restartable, killed as a group.

    An `Agent` of `paidtwice.targets` as `AgentHost` is: `uri` (the proxy's, which is what is registered),
    `start`, `prepare`/`wait_ready` (nothing to load ahead: a command cannot be started with its port shut),
    `kill`, `release(at)` then `wait_up()` (the deployment is up again at `at`), `attempts`.

    A restart does not wait for the command to load: `release` starts the replacement at once, on a port of
    its own, and `wait_up` points the proxy at it at `at`. Until then the proxy still points at the killed
    process's port, so the server finds the deployment down for exactly the restart delay asked for (or
    longer, if the replacement takes longer than that to listen), however long the command takes to load.
    """

    def __init__(
        self,
        *,
        command: str,
        env: Mapping[str, str],
        workdir: Path,
        service: str,
        renamed: str,
        port_env: str = "PORT",
        cwd: Path | None = None,
        tag: str = "",
        step_log: Path | None = None,
    ) -> None:
        super().__init__(env=env, workdir=workdir, cwd=cwd)
        self.command = command
        self.port_env = port_env
        workdir.mkdir(parents=True, exist_ok=True)
        self._leases: list[PortLease] = [self._lease]
        """Every port a process of this agent was given; released on close (a lease is never reused)."""
        self.proxy = Proxy(
            target_port=self._lease.port,
            service=service,
            renamed=renamed,
            log=self.wire_log,
            tag=tag,
            step_log=step_log,
            code=cwd if cwd is not None else Path.cwd(),
            group=lambda: self.pid,
        )
        self._process: Process | None = None
        self._start_at: float | None = None
        self._proxy_up = False

    @property
    def uri(self) -> str:
        """The proxy's (registered once); `port` is the latest process's (the replacement's, once `release`
        started it)."""
        return f"http://{HOST}:{self.proxy.port}"

    @property
    def wire_log(self) -> Path:
        return self.workdir / "wire.jsonl"

    @property
    def log_path(self) -> Path:
        return self.workdir / "command.log"

    def _spawn(self) -> None:
        if self.starts:
            # A port of its own: the proxy goes on pointing at the killed process's port until the restart.
            self._lease = lease_port()
            self._leases.append(self._lease)
        self.starts += 1
        env = {**self.env, self.port_env: str(self.port), LISTEN_PORT: str(self.port)}
        self._process = Process(
            ["/bin/sh", "-c", self.command],
            name=f"{shlex.split(self.command)[0] if self.command.strip() else 'command'} on :{self.port}",
            env=env,
            log_path=self.log_path,
            ports=[self.port],
            cwd=self.cwd,
        ).start()

    def start(self, *, hold_pause: bool = False) -> CommandHost:
        """Start the proxy and the command, and wait until the command listens. With `hold_pause`, the proxy
        withholds the end of the first live durable pause until the kill (`Proxy.hold_pause`)."""
        self.proxy.hold_pause = hold_pause
        if not self._proxy_up:
            self.proxy.start()
            self._proxy_up = True
        self._spawn()
        self.wait_up()
        return self

    def release_pause(self) -> None:
        """Nothing held to release: the proxy's hold ends with the attempt it holds (`Proxy.hold_pause`)."""

    def prepare(self, *, ahead: int = 1) -> None:
        """Nothing to prepare: a command is started when it is to listen."""

    def wait_ready(self) -> None:
        """Nothing is loaded ahead (see `prepare`)."""

    def release(self, at: float | None = None) -> None:
        """The deployment is to be up again at `at`: start the replacement now, so it has loaded by then."""
        self._start_at = at
        if self._process is None or not self._process.alive():
            self._spawn()

    def wait_up(self) -> float:
        """Block until the latest process listens and the time `release` gave has come, then point the proxy
        at it; the time the deployment is up again."""
        if self._process is None or not self._process.alive():
            self._spawn()
        self._wait_listening(interval=0.01, error=ServerStartError)
        if self._start_at is not None:
            time.sleep(max(0.0, self._start_at - time.time()))
        self.proxy.target_port = self.port
        return time.time()

    def _wait_listening(self, *, interval: float, error: type[PaidtwiceError]) -> None:
        """Block until the spawned process listens on its port; `error`, naming its log, if it exits first
        or does not listen within `load_timeout()`."""
        process = self._process
        assert process is not None
        wait_alive(
            process,
            lambda: port_is_listening(self.port),
            exited=lambda: (
                f"the command exited ({process.returncode}) before listening on ${self.port_env}="
                f"{self.port}; its log: {self.log_path}"
            ),
            late=lambda: (
                f"the command (its log: {self.log_path}{listens_elsewhere(self.log_path, self.port)}) "
                f"did not listen on ${self.port_env}={self.port}"
            ),
            interval=interval,
            error=error,
        )

    def kill(self, *, listen_after: float | None = None, refuse: int = 0) -> float:
        """SIGKILL the command's group; returns when it was sent. With `listen_after`, the replacement is
        started at once (on a port of its own) to be up that many seconds after the kill. `refuse` is not
        counted here: the proxy lets the replacement be reached on the clock alone."""
        at = time.time()
        if self._process is not None:
            self._process.kill()
            self._process = None
        self.proxy.release()
        if listen_after is not None:
            self.release(at + listen_after)
        return at

    @property
    def pid(self) -> int | None:
        """The command's process (its shell's) pid; None while it is down."""
        return self._process.pid if self._process is not None else None

    def attempts(self, invocation_id: str | None = None) -> list[AgentAttempt]:
        """Attempts that reached the command's process, from the proxy's log, in the order they started."""
        by_attempt: dict[int, list[dict[str, Any]]] = {}
        for record in read_wire(self.wire_log, invocation_id):
            by_attempt.setdefault(int(record["attempt"]), []).append(record)
        attempts = [attempt_of(records, number) for number, records in sorted(by_attempt.items())]
        return sorted((a for a in attempts if a is not None), key=lambda a: a.at)

    def steps(self, invocation_id: str) -> list[WireStep]:
        """Every RunCommand the command sent for the invocation, with its proposal if it executed."""
        steps: list[WireStep] = []
        opened: dict[tuple[int, int], int] = {}
        for record in read_wire(self.wire_log, invocation_id):
            key = (int(record["attempt"]), int(record.get("id", -1)))
            if record["event"] == "run":
                opened[key] = len(steps)
                steps.append(WireStep(record["name"], key[0], float(record["at"]), None))
            elif record["event"] == "step":
                at, value = float(record["at"]), str(record.get("value", ""))
                if key in opened:
                    i = opened.pop(key)
                    steps[i] = WireStep(steps[i].name, key[0], steps[i].commanded, at, value)
                else:
                    steps.append(WireStep(record["name"], key[0], at, at, value))
        return steps

    def tree(self, invocation_id: str) -> list[str]:
        """The invocation and every invocation it called or sent to through this proxy, and theirs."""
        records = read_wire(self.wire_log)
        callees: dict[str, list[str]] = {}
        for record in records:
            if record["event"] == "callee":
                callees.setdefault(record["invocation"], []).append(str(record["callee"]))
        tree = [invocation_id]
        for parent in tree:
            tree += [c for c in dict.fromkeys(callees.get(parent, [])) if c not in tree]
        return tree

    def held(self, invocation_id: str) -> bool:
        """The proxy holds the invocation's journal: it logged a hold, and the frame held has not gone on
        since (a run held at its pause and handed a later moment, `go_on`)."""
        events = [r["event"] for r in read_wire(self.wire_log, invocation_id) if r["event"] in _HOLDS]
        return bool(events) and events[-1] == "held"

    def go_on(self, *, gate: str | None, hold_entries: int | None, hold_inbound: bool) -> bool:
        """The run held at its pause since `start(hold_pause=True)` is handed a later moment: the proxy holds
        the journal there instead (`Proxy.go_on`). No gate can be set in a command's process: False with
        one."""
        if gate:
            return False
        self.proxy.go_on(hold_entries=hold_entries, hold_inbound=hold_inbound)
        return True

    def close(self) -> None:
        try:
            if self._process is not None:
                self._process.kill()
        finally:
            self._process = None
            try:
                self.proxy.close()
            finally:
                for lease in self._leases:
                    lease.release()


def command_manifest(
    command: str,
    *,
    env: Mapping[str, str],
    workdir: Path,
    port_env: str,
    cwd: Path | None,
) -> dict[str, Any]:
    """Start the command once and read its discovery manifest; a UsageError naming its log (in `workdir`)
    if it cannot be swept (exits at once, listens on no port, refuses discovery)."""
    agent = CommandHost(
        command=command,
        env=env,
        workdir=workdir,
        service="",
        renamed="",
        port_env=port_env,
        cwd=cwd,
    )
    try:
        agent._spawn()
        agent._wait_listening(interval=0.02, error=UsageError)
        try:
            with httpx.Client(http1=False, http2=True, timeout=30.0) as client:
                response = client.get(
                    f"http://{HOST}:{agent.port}/discover",
                    headers={"accept": MANIFEST_ACCEPT},
                )
            manifest = response.json()
        except (httpx.HTTPError, ValueError) as err:
            raise UsageError(
                f"the command does not serve a Restate endpoint ({err}); its log: {agent.log_path}"
            ) from None
        if response.status_code != 200 or not isinstance(manifest, dict):
            said = manifest.get("message", response.text) if isinstance(manifest, dict) else response.text
            raise UsageError(
                f"the command's endpoint refused discovery ({response.status_code}: {said}); "
                f"its log: {agent.log_path}"
            )
        return manifest
    finally:
        agent.close()
