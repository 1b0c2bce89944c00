"""The kinds served by paidtwice's own host (`paidtwice.agent.host`): the deck's agent, and a user's Python
app. The host logs every model request, context operation and step of a run (its step log), stops the
handler at a gate, and serves the run's service under a name of its own; the crash points come from that
log (`_timeline`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paidtwice._exceptions import UsageError
from paidtwice.agent import (
    DECK_AGENT,
    QUESTION,
    SERVICE,
    SERVICE_ALONE,
    SERVICE_AS,
    TREE,
    framework_preload,
    renamed_service,
)
from paidtwice.engine import JournalEntry
from paidtwice.results import CrashPoint
from paidtwice.stub import Lane
from paidtwice.targets._discovery import (
    NOT_PUBLIC,
    AppHandler,
    alone_without_run,
    choose_handlers,
    discover,
    load_in_host,
    needs_input,
    note,
)
from paidtwice.targets._host import AgentHost
from paidtwice.targets._inputs import made_input
from paidtwice.targets._step_log import (
    StepEvent,
    explicit_handlers,
    gate_names,
    model_calls_in_steps,
    read_step_log,
    step_runs,
)
from paidtwice.targets._target import Agent, Launch, OfflineApp, Resolution, Trace
from paidtwice.targets._timeline import derive_points

__all__ = [
    "AppTarget",
    "DeckTarget",
    "HostTrace",
    "check_app",
    "held_only_in_sends",
    "steps_cut_off",
    "steps_run_again",
]

DECK_MODES = ("naive", "journaled")


@dataclass(frozen=True)
class HostTrace:
    """A run as the host logged it (its step log), beside the stub's lane."""

    step_log: Path
    lane: Lane

    def events(self, invocation_id: str) -> list[StepEvent]:
        return read_step_log(self.step_log, invocation_id)

    def points(
        self, invocation_id: str, journal: Sequence[JournalEntry], ended: float | None
    ) -> list[CrashPoint]:
        tool_starts = [t.started for t in self.lane.tool_runs()]
        labels = tuple(e.label() for e in journal)
        return derive_points(self.events(invocation_id), labels, tool_starts, ended=ended)

    def stopped_at(self, invocation_id: str, point: CrashPoint) -> bool:
        """Every gate of the point logged, and its pause begun."""
        if point.gate is None and point.pause_op is None:
            return True
        events = self.events(invocation_id)
        if point.gate is not None:
            logged = {e.name for e in events if e.event == "gate"}
            if not set(point.gate.split(",")) <= logged:
                return False
        # By its name: the n-th operation of the tree may be a callee's when the callees race.
        return point.pause_op is None or point.pause_op in {
            name for (kind, _), name in gate_names(events).items() if kind == "op"
        }

    def root_goes_on(self, invocation_id: str, point: CrashPoint) -> bool:
        return held_only_in_sends(self.events(invocation_id), point)

    def steps(self, invocation_id: str) -> tuple[tuple[str, int], ...]:
        return step_runs(self.events(invocation_id))

    def steps_in_flight(self, invocation_id: str, kill_at: float) -> int:
        explicit = bool(explicit_handlers(self.step_log))
        return steps_cut_off(self.events(invocation_id), kill_at, explicit=explicit)

    def steps_run_again(self, invocation_id: str, kill_at: float) -> int | None:
        return steps_run_again(self.events(invocation_id), kill_at)

    def calls_in_steps(self, invocation_id: str) -> tuple[int, ...]:
        return model_calls_in_steps(self.events(invocation_id))

    def calls_undecided(self, invocation_id: str) -> tuple[int, ...]:
        """None: the host sees each call's step."""
        return ()

    def model_calls_seen(self, invocation_id: str) -> int | None:
        return sum(1 for e in self.events(invocation_id) if e.event == "model_start")

    def explicit_recovery(self, handler: str) -> bool:
        return handler in explicit_handlers(self.step_log)

    def unfollowed(self, invocation_id: str, journal: Sequence[JournalEntry]) -> tuple[str, ...]:
        """The calls and sends to a service the app does not serve (another deployment's)."""
        missed = sorted({e.name for e in self.events(invocation_id) if e.event == "op" and not e.follows})
        return tuple(
            f"{name}, because {name.split('/')[0]} is not a service of this app (another deployment's, or "
            "none): its model calls, steps and kills are not in this sweep"
            for name in missed
        )


def held_only_in_sends(events: Sequence[StepEvent], point: CrashPoint) -> bool:
    """Every gate of the point is in a callee a send started (or one of its own callees), and nothing else
    holds it: the root does not wait for them, so its journal goes on while they are held."""
    if not point.gate or point.model_holds or point.tool_hold is not None or point.pause_op is not None:
        return False
    sent = {e.place for e in events if e.sent and e.place}
    places = [gate.rpartition("/")[0] for gate in point.gate.split(",")]
    return all(p and any(p == s or p.startswith(f"{s}.") for s in sent) for p in places)


def steps_cut_off(events: Sequence[StepEvent], kill_at: float, *, explicit: bool = False) -> int:
    """Step executions the kill at `kill_at` cut off: started before it and not returned, or returned with
    their result not yet journaled, which the retry shows by running them again at the same place (Restate
    runs again only what its journal lacks). `explicit`: some handler runs under explicit_recovery, whose
    retries run journaled steps too, so running again proves nothing there."""
    first_life = [e for e in events if e.at < kill_at]
    started = {e.n: e for e in first_life if e.event == "step_start"}
    cut = set(started) - {e.n for e in first_life if e.event == "step_end"}
    if not explicit:
        again = {(e.by, e.pos, e.name) for e in events if e.event == "step_start" and e.at >= kill_at}
        cut |= {n for n, e in started.items() if e.pos and (e.by, e.pos, e.name) in again}
    return len(cut)


def steps_run_again(events: Sequence[StepEvent], kill_at: float) -> int | None:
    """Step executions after `kill_at` where one had started before it, at the same place of the same
    handler's code: work run again (the first run cut off in flight, or its result lost). A step run for
    the first time after the kill (further along, or on another path) is not counted. None when the log
    does not give the places (an older host)."""
    starts = [e for e in events if e.event == "step_start"]
    if any(e.pos == 0 for e in starts):
        return None
    before = {(e.by, e.pos, e.name) for e in starts if e.at < kill_at}
    return sum(1 for e in starts if e.at >= kill_at and (e.by, e.pos, e.name) in before)


def _host(app: str, cwd: str | None, launch: Launch, naming: dict[str, str]) -> tuple[Agent, Trace]:
    """An agent served by paidtwice's host, and its step log; forked, where the launch offers it, from a
    fork server that has imported the app's framework (`paidtwice.agent._preload`)."""
    forkserver = launch.forkserver
    modules = framework_preload(app, cwd) if launch.preloading is not None else ()
    if modules and launch.preloading is not None:
        forkserver = launch.preloading(modules, Path(cwd) if cwd else None)
    alone = {SERVICE_ALONE: "1"} if launch.alone else {}
    agent = AgentHost(
        target=app,
        env={**launch.env, **naming, **alone},
        workdir=launch.workdir,
        name="agent",
        cwd=Path(cwd) if cwd else None,
        forkserver=forkserver,
    )
    return agent, HostTrace(launch.step_log, launch.lane)


@dataclass(frozen=True)
class DeckTarget:
    """The deck's weather agent in one mode (or an app written to its environment): it names its service
    from its environment."""

    mode: str
    """"naive" or "journaled"."""
    app: str = DECK_AGENT
    """MODULE:APP served: the deck's agent, or an app that reads the deck agent's environment."""
    cwd: str | None = None
    """Directory it imports from (None: the current one)."""
    pause: str | None = "5"
    """Seconds of its durable pause (PAIDTWICE_PAUSE_S); None: the lab's, else the agent's own (2)."""
    key: str | None = None
    state: tuple[tuple[str, str], ...] | None = None
    resolution: Resolution = Resolution()
    stuck_after: int | None = None
    """Its retry policy pauses it within seconds, as in the deck: no need to call it stuck."""

    service = "Agent"
    handler = "run"
    input = QUESTION
    input_made = False
    label = ""
    deck_stub = True
    input_type = None
    not_soakable = None

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        # A longer pause than the deck's 2 s gives a loaded machine room to land the kill inside it; no count
        # depends on its length.
        pause = () if self.pause is None else (("PAIDTWICE_PAUSE_S", self.pause),)
        return (("PAIDTWICE_AGENT_MODE", self.mode), *pause)

    @staticmethod
    def each(modes: Sequence[str]) -> list[DeckTarget]:
        """The deck's agent in each of `modes`; `UsageError` for a mode it has not."""
        bad = [m for m in modes if m not in DECK_MODES]
        if bad or not modes:
            raise UsageError(f"unknown mode {', '.join(bad) or '(none)'} (known: naive, journaled)")
        return [DeckTarget(mode) for mode in modes]

    def recorded_as(self) -> tuple[str, str, Any]:
        # The deck's agent names its service from its environment: the lab's name is the code's name there.
        return "", "", None

    def launch(self, launch: Launch) -> tuple[Agent, Trace]:
        return _host(self.app, self.cwd, launch, {SERVICE: launch.served_as})

    def offline(self) -> OfflineApp:
        # Its mode, not the sweep's longer pause: the journals were recorded by whatever pause, and a
        # durable sleep replays from the journal. The service is `Agent`, or $PAIDTWICE_SERVICE as given.
        return OfflineApp(self.app, self.cwd, (("PAIDTWICE_AGENT_MODE", self.mode),))


@dataclass(frozen=True)
class AppTarget:
    """A user's Python app (MODULE:APP, or MODULE), served by paidtwice's host, which renames the swept
    service for each run."""

    app: str
    """MODULE:APP served by `paidtwice.agent.host`."""
    service: str
    """The service's name in the user's code."""
    handler: str
    """The handler called."""
    input: Any
    """The JSON input of every invocation."""
    mode: str
    """What the records call it: its SERVICE/HANDLER when swept from the command line."""
    env: tuple[tuple[str, str], ...] = ()
    """Extra environment of the agent process."""
    cwd: str | None = None
    """Directory the agent runs in (the user's project, so MODULE imports)."""
    key: str | None = None
    """The key each invocation is sent with, for a Virtual Object or a Workflow; None: `DEFAULT_KEY` if the
    service is keyed, none otherwise."""
    state: tuple[tuple[str, str], ...] | None = None
    """The state a Virtual Object (or Workflow) is given under its key before each run, as (name, JSON
    value); None: the script file's `[state]` table, if it has one."""
    resolution: Resolution = Resolution()
    """How the awakeables and Workflow promises the handler waits for are answered
    (`paidtwice.sweep._approvals`)."""
    input_type: str | None = None
    """The content type the input is sent with, when the handler's manifest names one that is not JSON
    (bytes: the input, a string, is sent as its UTF-8); None: JSON."""
    stuck_after: int | None = 3
    """Settle a point as stuck after this many journal mismatches in a row; None: wait until it pauses. A
    mismatch is deterministic: the next attempts replay the same code against the same journal. (A service
    without a retry policy of its own gets the server's: 70 attempts, up to a minute apart, then pause.)"""
    input_made: bool = False
    """`input` was made from the handler's schema, the handler not named (`Target.input_made`)."""

    deck_stub = False
    not_soakable = None

    @property
    def label(self) -> str:
        return f"{self.app} {self.service}/{self.handler}" if self.service else self.app

    @staticmethod
    def discovered(
        app: str, handlers: Sequence[str], input: Any, *, app_dir: str | Path | None, seed: int
    ) -> list[AppTarget]:
        """The `handlers` named (SERVICE/HANDLER or SERVICE), or every handler the app's discovery manifest
        lists, once the app is seen to import and to serve them; a handler given no `input` whose schema
        needs one gets a value made from its schema."""
        cwd = str(Path(app_dir or ".").resolve())
        if not Path(cwd).is_dir():
            raise UsageError(f"no directory {app_dir} to import {app} from")
        found = discover(app, cwd=cwd)
        chosen, left_out = choose_handlers(found, handlers, app=app)
        for handler in left_out:
            if handler.private:
                note(f"not swept alone: {handler.name} {NOT_PUBLIC}")
                continue
            if handler.waits_on_the_run:
                note(f"not swept: {alone_without_run(handler, found)}")
                continue
            note(
                f"not swept: {handler.name}, a Workflow's shared handler, works beside the workflow's run "
                f"(name it to sweep it alone: --handler {handler.name})"
            )
        inputs = {h.name: _input(h, input, seed) for h in chosen}
        # Named by what is swept: two handlers of one app (a journaled and a naive form) are two matrices,
        # two heatmaps, never "app" twice.
        return [
            AppTarget(
                app,
                h.service,
                h.handler,
                inputs[h.name],
                mode=h.name,
                cwd=cwd,
                input_type=h.input_type if h.input_type and "json" not in h.input_type else None,
                input_made=input is None and inputs[h.name] is not None and h.name not in handlers,
            )
            for h in chosen
        ]

    @staticmethod
    def checked(
        app: str,
        service: str,
        handler: str,
        input: Any,
        *,
        key: str | None = None,
        app_dir: Path | None = None,
    ) -> AppTarget:
        """The app's `service`/`handler`, once it is seen to import and to serve it (in a process of its own,
        nothing started yet); `UsageError` in one line if it does not."""
        cwd = str((app_dir or Path(".")).resolve())
        if not Path(cwd).is_dir():
            raise UsageError(f"no directory {cwd}")
        problem = check_app(app, service, handler, cwd=cwd)
        if problem:
            raise UsageError(problem)
        return AppTarget(app, service, handler, input, mode="app", cwd=cwd, key=key)

    def recorded_as(self) -> tuple[str, str, Any]:
        return self.service, self.handler, self.input

    def launch(self, launch: Launch) -> tuple[Agent, Trace]:
        # Every other service of the app is served under the run's tag too, and the calls between them
        # followed: the handlers it calls are swept with it, as one tree (`paidtwice.agent._tree`).
        tag = launch.served_as.removeprefix(renamed_service(self.service, ""))
        naming = {SERVICE_AS: f"{self.service}={launch.served_as}", TREE: tag}
        return _host(self.app, self.cwd, launch, naming)

    def offline(self) -> OfflineApp:
        return OfflineApp(self.app, self.cwd, self.env)


def _input(handler: AppHandler, given: Any, seed: int) -> Any:
    """The input `handler` is called with: the one given, else (when its schema needs one) a value made
    from its input schema (each point's record and the summary say which)."""
    if given is not None or not needs_input(handler.input_schema):
        return given
    return made_input(handler.input_schema, handler=handler.name, seed=seed)


def check_app(app: str, service: str, handler: str, *, cwd: str) -> str | None:
    """Why the app cannot be swept (not importable, no such service or handler); None if it can."""
    done = load_in_host(app, ["--check", f"{service}/{handler}"], cwd=cwd)
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return lines[-1].removeprefix("paidtwice: ") if lines else f"{app} cannot be loaded"
