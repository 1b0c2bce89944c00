"""The kind started by a shell command (`sweep --cmd`): a deployment in any language, seen only through the
protocol proxy the lab registers in front of it (`_command`). Its steps and crash points come from the wire
(`_wire_timeline`): nothing runs inside its process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.agent import CommandAgent, agent_env, check_command, command_label, node_path
from paidtwice.engine import JournalEntry
from paidtwice.results import CrashPoint
from paidtwice.stub import Lane
from paidtwice.targets._target import Agent, Launch, OfflineApp, Resolution, Trace
from paidtwice.targets._wire_timeline import wire_model_calls_in_steps, wire_points

__all__ = ["CommandTarget", "WireTrace"]


CALL_COMMANDS = ("Command: Call", "Command: OneWayCall")
"""The journal entries of a call and of a send to another handler."""


@dataclass(frozen=True)
class WireTrace:
    """A run as the proxy saw it on the wire, beside the stub's lane."""

    agent: CommandAgent
    lane: Lane

    def points(
        self, invocation_id: str, journal: Sequence[JournalEntry], ended: float | None
    ) -> list[CrashPoint]:
        return wire_points(
            journal=journal,
            wire_log=self.agent.wire_log,
            invocation_id=invocation_id,
            steps=self.agent.steps(invocation_id),
            calls=self.lane.model_calls(invocation_id),
            tools=self.lane.tool_runs(invocation_id),
        )

    def stopped_at(self, invocation_id: str, point: CrashPoint) -> bool:
        """The attempt that starts with the point's journal held at the proxy."""
        return point.hold_entries is None or self.agent.held(invocation_id)

    def steps(self, invocation_id: str) -> tuple[tuple[str, int], ...]:
        # Each ProposeRunCompletion is one execution.
        counts: dict[str, int] = {}
        for step in self.agent.steps(invocation_id):
            if step.proposed is not None:
                counts[step.name] = counts.get(step.name, 0) + 1
        return tuple(sorted(counts.items()))

    def steps_in_flight(self, invocation_id: str, kill_at: float) -> int:
        # A step is in flight from its RunCommand until its result; the SDK sends the command first.
        wire = self.agent.steps(invocation_id)
        started = {i for i, w in enumerate(wire) if w.commanded < kill_at}
        ended = {i for i, w in enumerate(wire) if w.proposed is not None and w.proposed < kill_at}
        return len(started - ended)

    def steps_run_again(self, invocation_id: str, kill_at: float) -> int | None:
        """The wire does not say where in the code a step is (a replay sends no command it journaled)."""
        return None

    def calls_in_steps(self, invocation_id: str) -> tuple[int, ...]:
        return self._placed(invocation_id)[0]

    def calls_undecided(self, invocation_id: str) -> tuple[int, ...]:
        return self._placed(invocation_id)[1]

    def _placed(self, invocation_id: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
        return wire_model_calls_in_steps(
            self.agent.steps(invocation_id), self.lane.model_calls(invocation_id)
        )

    def model_calls_seen(self, invocation_id: str) -> int | None:
        """No host sees its requests: its points come from the stub and the wire."""
        return None

    def explicit_recovery(self, handler: str) -> bool:
        """The wire does not say; an SDK's explicit recovery is Python's."""
        return False

    def unfollowed(self, invocation_id: str, journal: Sequence[JournalEntry]) -> tuple[str, ...]:
        """Every call and send: a command's model calls carry no invocation tag, so a callee's calls cannot
        be told from the handler's own, nor its moments planned."""
        calls = sum(1 for e in journal if e.type in CALL_COMMANDS)
        if not calls:
            return ()
        return (
            f"{calls} call{'s' if calls > 1 else ''} to other handlers, because a --cmd deployment's model "
            "calls carry no invocation tag: the callees' model calls are counted as the handler's own, and "
            "no kill lands inside them",
        )


@dataclass(frozen=True)
class CommandTarget:
    """A shell command that serves the deployment, started once per run in its own process group; its
    service renamed by the proxy."""

    command: str
    """The shell command."""
    service: str
    """The service's name in the deployment."""
    handler: str
    """The handler called."""
    input: Any
    """The JSON input of every invocation."""
    mode: str
    """What the records call it (`command_label`)."""
    cwd: str | None = None
    """Directory the command runs in."""
    port_env: str = "PORT"
    """The environment variable that tells the command its port."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment of the command."""
    key: str | None = None
    """As `AppTarget.key`."""
    state: tuple[tuple[str, str], ...] | None = None
    """As `AppTarget.state`."""
    resolution: Resolution = Resolution()
    """As `AppTarget.resolution`."""
    stuck_after: int | None = 3
    """As `AppTarget.stuck_after`."""

    deck_stub = False
    input_type = None
    not_soakable = (
        "a deployment started by a command cannot be soaked: its model calls reach the stub untagged, so "
        "with many invocations at once none can be told to its invocation (soak a Python app: --app)"
    )

    @property
    def label(self) -> str:
        return self.mode

    @staticmethod
    def checked(
        command: str,
        service: str | None,
        handler: str | None,
        input: Any,
        *,
        cwd: str | Path | None,
        port_env: str,
    ) -> CommandTarget:
        """The command's deployment, once it is seen to serve `service`/`handler` (started once and asked
        for its discovery manifest); `UsageError` in one line, naming its log, if it does not."""
        if not service or not handler:
            raise UsageError("sweeping a command needs its service and its handler")
        where = Path(cwd or ".").resolve()
        if not where.is_dir():
            raise UsageError(f"no directory {where}")
        check_dir = Path(tempfile.mkdtemp(prefix="paidtwice-check-"))
        # Only asked what it serves: no stub runs yet, nothing is sent.
        check_env = {
            **os.environ,
            **agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
            **node_path(),
        }
        check_command(
            command, service, handler, env=check_env, workdir=check_dir, port_env=port_env, cwd=where
        )
        shutil.rmtree(check_dir, ignore_errors=True)  # kept only when the error names the log in it
        mode = command_label(service, command)
        return CommandTarget(command, service, handler, input, mode, cwd=str(where), port_env=port_env)

    def recorded_as(self) -> tuple[str, str, Any]:
        return self.service, self.handler, self.input

    def offline(self) -> OfflineApp:
        raise UsageError(
            "replay-check replays journals in its own process, on a Python app's endpoint: a deployment "
            "started by a command cannot be replayed offline (give its Python app with --app, or sweep the "
            "command live with `paidtwice sweep --cmd`)"
        )

    def launch(self, launch: Launch) -> tuple[Agent, Trace]:
        # The lane answers whatever reaches it: the proxy, not a host, knows the invocation.
        launch.lane.single = True
        agent = CommandAgent(
            command=self.command,
            # The stub's URLs and keys are in the launch's environment already, as for any agent.
            env={**launch.env, **node_path()},
            workdir=launch.workdir,
            service=self.service,
            renamed=launch.served_as,
            port_env=self.port_env,
            cwd=Path(self.cwd) if self.cwd else None,
            alone=launch.alone,
        )
        agent.proxy.hold_entries = launch.hold_entries
        # The wire tells a call made in a step from one made before it only if the proxy has read the step's
        # RunCommand by the time the answer goes back.
        launch.lane.settle = agent.proxy.caught_up
        return agent, WireTrace(agent, launch.lane)
