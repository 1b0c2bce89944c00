"""The protocols every target kind implements: `Target` (what is swept, soaked and replayed), the `Agent` it
starts (the process the lab kills), and the `Trace` a run of it leaves (what the lab can read and count).

A target names one Restate handler and the input it is called with; what differs between kinds is how its
agent is started (paidtwice's host, or the user's command behind a protocol proxy), what its run can be seen
through (the host's step log, or the wire) and so how its crash points are planned and its steps counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import Field, dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Protocol, Self, runtime_checkable

from paidtwice.agent import AgentAttempt
from paidtwice.engine import ForkServer, JournalEntry
from paidtwice.results import CrashPoint
from paidtwice.stub import Lane

__all__ = ["Agent", "Launch", "OfflineApp", "Resolution", "Target", "Trace"]


@dataclass(frozen=True)
class Resolution:
    """How a sweep answers the awakeables and promises its handlers wait for."""

    value: str | None = None
    """JSON every wait is resolved with (`--resolve JSON`); None: the script's `[[awakeable]]` values, else a
    value valid against the wait's type."""
    never: bool = False
    """Resolve nothing (`--resolve never`): a timeout raced against the approval is swept taking its other
    branch; a handler that waits alone ends at once, saying what it waits for."""
    after: float = 0.5
    """Seconds from the handler beginning to wait to the resolution (`--resolve-after`)."""


class Agent(Protocol):
    """A target's process, restartable on one address the server keeps: started, killed (SIGKILL to its
    process group), and listening again after a restart delay, with a replacement loaded ahead."""

    env: dict[str, str]
    """The environment every process of it is started with."""

    @property
    def uri(self) -> str:
        """What the server registers as the deployment."""
        ...

    def start(self, *, hold_pause: bool = False) -> Self:
        """Start it and wait until it listens. With `hold_pause`, it withholds the end of its first live
        durable pause until `release_pause` (the go line's `hold-pause`), in every attempt that reaches it
        meanwhile: the moment a deck's fault kills in, held until the kill has landed."""
        ...

    def release_pause(self) -> None:
        """The fault has landed: the pause held since `start(hold_pause=True)` may end."""
        ...

    def go_on(self, *, gate: str | None, hold_entries: int | None, hold_inbound: bool) -> bool:
        """Hand the run held at its pause since `start(hold_pause=True)` a later moment: stop at `gate` (the
        host's gates) or hold the journal at `hold_entries` (a command's proxy; only what the agent sends,
        without `hold_inbound`), and let the pause end, unless what is held in it is that moment. False
        where the kind cannot hold that moment, and nothing changes."""
        ...

    def prepare(self, *, ahead: int = 1) -> None:
        """Start loading a replacement (its port still shut), when the kind can: `ahead` processes loading
        or loaded, when more than one (before `start`, the process to serve and its replacement)."""
        ...

    def wait_ready(self) -> None:
        """Block until the replacement has loaded."""
        ...

    def kill(self, *, listen_after: float | None = None, refuse: int = 0) -> float:
        """SIGKILL it; when the kill was sent. With `listen_after`, the replacement is told at once to listen
        that many seconds after the kill, once it has turned away `refuse` connections (the retries the down
        time stands for) where the kind can count them; `wait_up` then waits for it."""
        ...

    @property
    def pid(self) -> int | None:
        """The serving process's pid (the soak samples its memory); None while it is down."""
        ...

    def release(self, at: float | None = None) -> None:
        """Let it listen again at wall-clock time `at` (else now); do not wait."""
        ...

    def wait_up(self) -> float:
        """Block until it listens again; the time it did."""
        ...

    def restart(self, at: float | None = None) -> float:
        """`release(at)` then `wait_up()`."""
        ...

    def attempts(self, invocation_id: str | None = None) -> list[AgentAttempt]:
        """The attempts that reached it, in the order they started."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


class Trace(Protocol):
    """What one run of a target shows, read after (or while) it runs: the source of its crash points and of
    what a point counts beyond the stub's ledgers and the journal."""

    def points(
        self, invocation_id: str, journal: Sequence[JournalEntry], ended: float | None
    ) -> list[CrashPoint]:
        """The crash points of a clean run whose journal is `journal` (its output appended at `ended`)."""
        ...

    def stopped_at(self, invocation_id: str, point: CrashPoint) -> bool:
        """The run is stopped at what the point waits for that only this trace sees (gates, a pause, a
        held journal); the stub's held calls are checked by the caller."""
        ...

    def root_goes_on(self, invocation_id: str, point: CrashPoint) -> bool:
        """The point's moment is held only where the swept invocation does not wait (a sent callee): its
        journal may hold more than the moment's entries at the kill without the kill missing."""
        ...

    def steps(self, invocation_id: str) -> tuple[tuple[str, int], ...]:
        """(step name, executions), sorted by name."""
        ...

    def steps_in_flight(self, invocation_id: str, kill_at: float) -> int:
        """Step executions started and not finished at `kill_at`."""
        ...

    def steps_run_again(self, invocation_id: str, kill_at: float) -> int | None:
        """Step executions after `kill_at` at a place of the code where one had started before it (run
        again, not run for the first time on the replay's path); None when this trace cannot tell."""
        ...

    def calls_in_steps(self, invocation_id: str) -> tuple[int, ...]:
        """The model calls (stub numbers) made inside a ctx.run step: their answers are journaled."""
        ...

    def calls_undecided(self, invocation_id: str) -> tuple[int, ...]:
        """The model calls (stub numbers) this trace cannot prove inside a step or outside every one; not in
        `calls_in_steps`."""
        ...

    def model_calls_seen(self, invocation_id: str) -> int | None:
        """How many model calls the handler was seen making; None when this trace cannot see them."""
        ...

    def explicit_recovery(self, handler: str) -> bool:
        """SERVICE/HANDLER (as served) runs under `explicit_recovery`: every retry runs every step again."""
        ...

    def unfollowed(self, invocation_id: str, journal: Sequence[JournalEntry]) -> tuple[str, ...]:
        """The calls and sends of the run (its journal `journal`) this trace could not follow into the
        invocation tree, each "TARGET, because WHY"; empty when it followed every one."""
        ...


@dataclass(frozen=True)
class Launch:
    """What a run gives its target to start an agent with."""

    env: Mapping[str, str]
    """The agent's environment: the model's clients pointed at the run's lane, the step log, the gate."""
    workdir: Path
    """The run's own directory (logs)."""
    served_as: str
    """The name the run's service is served under (each run has one of its own)."""
    step_log: Path
    """Where a host logs the run's steps."""
    lane: Lane
    """The stub's lane that answers the run's model and tool calls."""
    forkserver: ForkServer | None = None
    """The lab's fork server, for a kind that starts Python processes."""
    hold_entries: int | None = None
    """Hold the attempt that starts with this many journal entries (a kind that sees the wire)."""
    alone: bool = False
    """Serve (and so register) the run's service alone, the app's other services left out: a sweep point's
    agent is killed and closed, so a service another run calls must stay with an agent that lives on (the
    clean run's). Otherwise the whole app, the run's service renamed."""
    preloading: Callable[[Sequence[str], Path | None], ForkServer] | None = None
    """A fork server that has also imported these modules (a framework the app imports), for agents run in
    this directory with this launch's environment (`Lab.forkserver_for`); None: `forkserver` alone."""
    hold_inbound: bool = True
    """False: at `hold_entries`, hold only what the agent sends, not what the server sends it."""
    traced: bool = True
    """False: the run reads nothing of its `Trace` (the deck measures from the journal, the stub's ledgers
    and the attempts), so the kind sets up only what the agent needs: a command's proxy writes no step log
    and the stub's answers do not wait for the proxy to read the step they are made in."""


@dataclass(frozen=True)
class OfflineApp:
    """What replay-check imports into its own process to replay a target's journals offline, no server."""

    app: str
    """MODULE:APP, or MODULE (the one app it holds, else an app of every Restate service it defines)."""
    app_dir: str | None = None
    """The directory it imports from; None: the current one."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment it is imported and replayed under, over the process's own (the deck agent's mode)."""


@runtime_checkable
class Target(Protocol):
    """One Restate handler to sweep, soak or replay, how its agent starts, and what its runs show.

    The fields are what every kind has; `launch` is where the kinds differ. A kind is a frozen dataclass
    (the sweep sets a key, a state or a resolution on any kind with `dataclasses.replace`)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def mode(self) -> str:
        """What the records call it (the deck's "naive"/"journaled", SERVICE/HANDLER, a command's label)."""
        ...

    @property
    def service(self) -> str:
        """The service's name in the user's code."""
        ...

    @property
    def handler(self) -> str: ...

    @property
    def input(self) -> Any:
        """The JSON input of every invocation."""
        ...

    @property
    def input_made(self) -> bool:
        """The input is one paidtwice made from the handler's schema, for a handler the user did not name
        (SERVICE/HANDLER): a clean run that fails on it lists the handler as not swept, the others swept."""
        ...

    @property
    def input_type(self) -> str | None:
        """The content type the input is sent with when the handler takes other than JSON (bytes); None:
        JSON."""
        ...

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        """Extra environment of the agent."""
        ...

    @property
    def key(self) -> str | None:
        """The key of a Virtual Object's or Workflow's invocations; None: a default when keyed."""
        ...

    @property
    def state(self) -> tuple[tuple[str, str], ...] | None:
        """State (name, JSON) set under the key before each run; None: the script's `[state]`, if any."""
        ...

    @property
    def resolution(self) -> Resolution:
        """How the awakeables and promises the handler waits for are answered."""
        ...

    @property
    def stuck_after(self) -> int | None:
        """Settle a point as stuck after this many journal mismatches in a row; None: wait for a pause."""
        ...

    @property
    def label(self) -> str:
        """Who it is in a soak's record (`app`): "MODULE:APP SERVICE/HANDLER", a command's label, or "" for
        the deck's agent."""
        ...

    @property
    def deck_stub(self) -> bool:
        """It calls the stub as the deck's agent does: its tools through the stub's tool endpoints (so they
        are counted), each model call's script turn its conversation's turn. False for a user's code: only
        its model calls are counted, a call placed among its invocation's answers by its order."""
        ...

    @property
    def not_soakable(self) -> str | None:
        """Why the soak cannot drive it, in one line; None when it can: the stub tells which invocation each
        model call belongs to with many in flight at once (paidtwice's host tags each request)."""
        ...

    def recorded_as(self) -> tuple[str, str, Any]:
        """(service, handler, input) as a point's record names them."""
        ...

    def launch(self, launch: Launch) -> tuple[Agent, Trace]:
        """An agent for one run (not started yet) and the trace its run leaves."""
        ...

    def offline(self) -> OfflineApp:
        """The app replay-check loads in its own process to replay this target's journals (whichever of
        its handlers they name); `UsageError` in one line for a kind whose code paidtwice cannot import."""
        ...
