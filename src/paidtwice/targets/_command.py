"""The kind started by a shell command (`sweep --cmd`): a deployment in any language, seen only through the
protocol proxy the lab registers in front of it (`_command`). Its steps and crash points come from the wire
(`_wire_timeline`): nothing runs inside its process.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.agent import (
    CommandHost,
    WireStep,
    agent_env,
    command_label,
    command_manifest,
    node_path,
    read_wire,
    renamed_service,
)
from paidtwice.engine import JournalEntry
from paidtwice.results import DEFAULT_RESULTS, RESULTS_ENV, CrashPoint, default_records_path
from paidtwice.stub import Lane
from paidtwice.targets._discovery import (
    NOT_PUBLIC,
    AppHandler,
    choose_handlers,
    handlers_of,
    needs_input,
    note,
)
from paidtwice.targets._inputs import made_input
from paidtwice.targets._target import Agent, Launch, OfflineApp, Resolution, Trace
from paidtwice.targets._wire_timeline import wire_model_calls_in_steps, wire_points

__all__ = ["CommandTarget", "WireTrace"]


@dataclass(frozen=True)
class WireTrace:
    """A run as the proxy saw it on the wire, beside the stub's lane."""

    agent: CommandHost
    lane: Lane

    def points(
        self, invocation_id: str, journal: Sequence[JournalEntry], ended: float | None
    ) -> list[CrashPoint]:
        return wire_points(
            journal=journal,
            wire_log=self.agent.wire_log,
            invocation_id=invocation_id,
            steps=self.tree_steps(invocation_id),
            calls=self.lane.model_calls(invocation_id),
            tools=self.lane.tool_runs(invocation_id),
        )

    def tree_steps(self, invocation_id: str) -> list[WireStep]:
        """The steps of the invocation and of the handlers of its deployment it called (one process runs
        them all, its model calls on one lane), in the order their RunCommands passed the proxy."""
        steps = [s for i in self.agent.tree(invocation_id) for s in self.agent.steps(i)]
        return sorted(steps, key=lambda s: s.commanded)

    def stopped_at(self, invocation_id: str, point: CrashPoint) -> bool:
        """The attempt that starts with the point's journal held at the proxy."""
        return point.hold_entries is None or self.agent.held(invocation_id)

    def root_goes_on(self, invocation_id: str, point: CrashPoint) -> bool:
        """The proxy holds the root's own journal: it never goes on past the moment."""
        return False

    def steps(self, invocation_id: str) -> tuple[tuple[str, int], ...]:
        """Each execution begun, as the host counts them: a RunCommand (the SDK sends it as the step starts),
        or a result with none before it in its attempt (a replay runs a journaled command's step again).
        One cut off counts too: by a kill, or by the handler's own cancellation (a race's loser), which a
        clean run does not redo but a replay may finish."""
        counts: dict[str, int] = {}
        for step in self.tree_steps(invocation_id):
            counts[step.name] = counts.get(step.name, 0) + 1
        return tuple(sorted(counts.items()))

    def steps_in_flight(self, invocation_id: str, kill_at: float) -> int:
        # A step is in flight from its RunCommand until its result; the SDK sends the command first.
        wire = self.tree_steps(invocation_id)
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
        return wire_model_calls_in_steps(self.tree_steps(invocation_id), self.lane.model_calls(invocation_id))

    def model_calls_seen(self, invocation_id: str) -> int | None:
        """No host sees its requests: its points come from the stub and the wire."""
        return None

    def explicit_recovery(self, handler: str) -> bool:
        """The wire does not say; an SDK's explicit recovery is Python's."""
        return False

    def unfollowed(self, invocation_id: str, journal: Sequence[JournalEntry]) -> tuple[str, ...]:
        """The calls and sends of the tree to a service the deployment does not serve (another
        deployment's): the handlers it serves run in the run's process, their model calls on its lane."""
        tree = set(self.agent.tree(invocation_id))
        missed = sorted(
            {
                f"{r['service']}/{r['handler']}"
                for r in read_wire(self.agent.wire_log)
                if r["event"] == "call" and r["invocation"] in tree and not r["follows"]
            }
        )
        return tuple(
            f"{name}, because {name.split('/')[0]} is not a service of this deployment (another "
            "deployment's, or none): its model calls, steps and kills are not in this sweep"
            for name in missed
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
    input_made: bool = False
    """As `AppTarget.input_made`."""

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
    def discovered(
        command: str,
        handlers: Sequence[str],
        input: Any,
        *,
        cwd: str | Path | None,
        port_env: str,
        seed: int,
        results_dir: Path | None = None,
    ) -> list[CommandTarget]:
        """The `handlers` named (SERVICE/HANDLER or SERVICE), or every handler the deployment's discovery
        manifest lists, once the command is started once and seen to serve them; `UsageError` in one line,
        naming its log (kept in `results_dir`, `_kept_log`), if it does not. A handler given no `input` gets
        one made from its input schema, or a string when the manifest has none (an untyped TypeScript
        parameter: a string reads as text, and destructuring one, `{ message }`, gives undefined fields
        rather than a TypeError)."""
        where = Path(cwd or ".").resolve()
        if not where.is_dir():
            raise UsageError(f"no directory {where}")
        # Only asked what it serves: no stub runs yet, nothing is sent.
        check_env = {
            **agent_env(openai_url="http://127.0.0.1:9/v1", anthropic_url="http://127.0.0.1:9"),
            **node_path(),
        }
        with tempfile.TemporaryDirectory(prefix="paidtwice-check-", ignore_cleanup_errors=True) as scratch:
            check_dir = Path(scratch)
            try:
                chosen, left_out = command_handlers(
                    command, handlers, env=check_env, workdir=check_dir, port_env=port_env, cwd=where
                )
            except UsageError as err:
                raise UsageError(_kept_log(str(err), check_dir / "command.log", results_dir)) from None
        for handler in left_out:
            if handler.private:
                note(f"not swept alone: {handler.name} {NOT_PUBLIC}")
                continue
            note(
                f"not swept: {handler.name}, a Workflow's shared handler, works beside the workflow's run "
                f"(name it to sweep it alone: --handler {handler.name})"
            )
        inputs = {h.name: _input(h, input, seed) for h in chosen}
        return [
            CommandTarget(
                command,
                h.service,
                h.handler,
                inputs[h.name],
                command_label(h.service if len(chosen) == 1 else h.name, command),
                cwd=str(where),
                port_env=port_env,
                input_made=input is None and inputs[h.name] is not None and h.name not in handlers,
            )
            for h in chosen
        ]

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
        # A served name not made from the service's (a command that names its service from its environment,
        # as the deck's does) tags nothing: the deployment's services keep their names.
        prefix = renamed_service(self.service, "")
        tag = launch.served_as.removeprefix(prefix) if launch.served_as.startswith(prefix) else ""
        agent = CommandHost(
            command=self.command,
            # The stub's URLs and keys are in the launch's environment already, as for any agent.
            env={**launch.env, **node_path()},
            workdir=launch.workdir,
            service=self.service,
            renamed=launch.served_as,
            port_env=self.port_env,
            cwd=Path(self.cwd) if self.cwd else None,
            # Every service of the deployment under the run's tag: the run's tree stays in its process.
            tag=tag,
            step_log=launch.step_log if launch.traced else None,
        )
        agent.proxy.hold_entries = launch.hold_entries
        agent.proxy.hold_inbound = launch.hold_inbound
        if launch.traced:
            # The wire tells a call made in a step from one made before it only if the proxy has read the
            # step's RunCommand by the time the answer goes back.
            launch.lane.settle = agent.proxy.catch_up.wait
        return agent, WireTrace(agent, launch.lane)


def _input(handler: AppHandler, given: Any, seed: int) -> Any:
    """The input `handler` is called with: the one given, none when it takes none, else one made from its
    input schema, else a string."""
    if given is not None or handler.input_type is None:
        return given
    if handler.input_schema is None:
        return made_input({"type": "string"}, handler=handler.name, seed=seed)
    if not needs_input(handler.input_schema):
        return None
    return made_input(handler.input_schema, handler=handler.name, seed=seed)


def _kept_log(message: str, log: Path, results_dir: Path | None) -> str:
    """`message`, naming the command's log where it is kept: copied from the check's scratch folder (which
    goes) to the results folder (`results_dir`, by default $PAIDTWICE_RESULTS or paidtwice-results), where
    the user finds the records of the commands they run."""
    if str(log) not in message or not log.is_file():
        return message
    folder = results_dir or Path(os.environ.get(RESULTS_ENV) or DEFAULT_RESULTS)
    kept = default_records_path(folder, "command-check").with_suffix(".log")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(log, kept)
    except OSError as err:
        return message.replace(str(log), f"not kept ({err.strerror}: {folder})")
    return message.replace(str(log), str(kept))


def command_handlers(
    command: str,
    wanted: Sequence[str],
    *,
    env: Mapping[str, str],
    workdir: Path,
    port_env: str,
    cwd: Path | None,
) -> tuple[list[AppHandler], list[AppHandler]]:
    """The handlers to sweep and those left out, as `choose_handlers` picks them from `wanted`
    (SERVICE/HANDLER, or SERVICE) in the manifest the command serves (started once); a UsageError naming
    its log if it cannot be swept (`command_manifest`), or serves no such service or handler."""
    found = handlers_of(command_manifest(command, env=env, workdir=workdir, port_env=port_env, cwd=cwd))
    log = workdir / "command.log"
    for name in wanted:
        service, _, handler = name.partition("/")
        handlers = [h.handler for h in found if h.service == service]
        if not handlers:
            known = ", ".join(dict.fromkeys(h.service for h in found)) or "none"
            raise UsageError(f"the command serves no service {service} (it serves: {known}); its log: {log}")
        if handler and handler not in handlers:
            raise UsageError(
                f"service {service} has no handler {handler} (it has: {', '.join(handlers)}); its log: {log}"
            )
    if not found:
        raise UsageError(f"the command serves no handler; its log: {log}")
    return choose_handlers(found, wanted, app="the command")
