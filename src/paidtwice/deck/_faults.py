"""Faults: where a deck row kills a process, one class per kind. Each arms before its moment and lands itself.

A run (`Deck._run_on`) calls, on its row's fault:

    arm(run)         before its agent starts: hold the fault's moment open (the stub holds a model call or a
                     booking; the host or a command's proxy withholds the end of the pause, `hold_pause`,
                     which the runner releases once the fault has landed), and ask for a replacement agent
                     loaded before the invocation is sent (`replacement`)
    land(run)        once the invocation is sent: wait for the moment, confirmed from the journal or the
                     stub's ledger; kill; bring the agent back after the restart delay, once the retries it
                     stands for have found it down (`FaultedRun.refused`); return the `Landing`
    settle(run, ...) once the invocation has completed or paused: bring back what stayed down (a node)

Why held: nothing waits inside a fault's window on anything else, so what the deck checks about a kill (the
journal at the kill, the paid calls, the attempts while down) is the same however late the lab gets there.

Adding a kind: the recipe is in the package's docstring (`paidtwice.deck`).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from paidtwice._exceptions import ExperimentError
from paidtwice.deck._measures import NodeKill
from paidtwice.engine import RestateCluster, epoch
from paidtwice.lab import Engine
from paidtwice.stub import Booking, Lane, ModelCall
from paidtwice.targets import Agent

# The kinds are listed once, in FAULT_KINDS: a row or a test imports a kind's class from here.
__all__ = ["FAULT_KINDS", "Fault", "FaultedRun", "Landing"]


@dataclass
class FaultedRun:
    """One run as its fault sees it: what it kills and reads, and how it waits."""

    name: str
    """The row's name, for messages."""
    engine: Engine
    """The server the run's invocation lives on."""
    agent: Agent
    """The run's agent."""
    lane: Lane
    """The run's lane of the stub."""
    delay: float
    """Seconds the agent stays down after a kill."""
    wait: Callable[[str, Callable[[], bool], float], None]
    """Poll a condition until it holds (what, condition, timeout); gives up when the lab is interrupted."""
    sleep: Callable[[float], None]
    """Sleep, unless the lab is interrupted."""
    refused: int = 0
    """Retries the row's down time stands for, by its retry policy (`retries_while_down`): the replacement
    agent resets as many connections before it serves (0: the clock alone keeps the down time)."""
    invocation_id: str = ""
    """The run's invocation, once sent."""
    landed: threading.Event = field(default_factory=threading.Event)
    """Set once the fault has landed: an answer `arm` held back for its moment may go."""
    hold_pause: bool = False
    """Set by `arm`: the agent's first process withholds the end of its first live durable pause, and of the
    pause in each later attempt, until the fault has landed (the runner then calls `Agent.release_pause`),
    so it never moves past it before (a command's proxy holds it until its attempt's connection ends)."""
    replacement: bool = False
    """Set by `arm`: load the agent's replacement before the invocation is sent."""

    def wait_for_pause(self) -> None:
        """Wait until the invocation's durable pause is journaled."""
        sql = self.engine.sql
        self.wait(
            "the durable pause to be journaled",
            lambda: any(e.type == "Command: Sleep" for e in sql.journal(self.invocation_id)),
            60.0,
        )

    def kill_agent(self) -> float:
        """SIGKILL the agent; its replacement serves `delay` seconds after, once the server's `refused`
        retries have found it down. The kill's time."""
        return self.agent.kill(listen_after=self.delay, refuse=self.refused)

    def agent_back(self, kill_at: float) -> Landing:
        """Wait until the replacement serves; where the kill landed."""
        # The replacement keeps the time and counts the retries itself; the lab only waits, and can be
        # interrupted meanwhile.
        self.sleep(kill_at + self.delay - time.time())
        return Landing(kill_at, self.agent.wait_up())


@dataclass(frozen=True)
class Landing:
    """Where a fault landed."""

    kill_at: float | None
    """Wall-clock time of the kill; None for a run without a fault."""
    up_at: float | None
    """When the killed process listened again; None if nothing was brought back within the run."""
    node_kill: NodeKill | None = None
    """The cluster node killed, for a node kill."""


@dataclass(frozen=True)
class Fault:
    """Where the lab kills a process in a run (one subclass per kind; this base kills nothing)."""

    kind: ClassVar[str] = "none"
    """The kind's name, as records and listings print it."""
    own_server: ClassVar[bool] = False
    """The fault kills restate-server: the run gets a server (or cluster) of its own."""
    nodes: ClassVar[int] = 1
    """Nodes of Restate the fault needs: a node kill needs a cluster."""

    def describe(self) -> str:
        return "none"

    def arm(self, run: FaultedRun) -> None:
        """Before the agent starts: hold the moment open, ask for a replacement agent."""

    def land(self, run: FaultedRun) -> Landing:
        """Once the invocation is sent: wait for the moment, kill, bring back; where it landed."""
        return Landing(None, None)

    def settle(self, run: FaultedRun, landing: Landing) -> float | None:
        """Once the invocation has settled: bring back what stayed down; when it was back."""
        return None


@dataclass(frozen=True)
class NoFault(Fault):
    """No kill: the clean run."""


@dataclass(frozen=True)
class KillInPause(Fault):
    """SIGKILL the agent in its durable pause, once the pause's Sleep is journaled (after the tool ran)."""

    kind: ClassVar[str] = "kill-in-pause"

    def describe(self) -> str:
        return "kill in the durable pause, after the tool ran"

    def arm(self, run: FaultedRun) -> None:
        run.hold_pause = True
        run.replacement = True

    def land(self, run: FaultedRun) -> Landing:
        run.wait_for_pause()
        calls_in_pause = len(run.lane.model_calls(run.invocation_id))
        kill_at = run.kill_agent()
        # The host withholds the pause's end, so the agent cannot have moved on; checked all the same, from
        # what would show it: another model call, or (an agent that asks none after its pause) its output.
        # Only what began before the kill counts: a busy lab may get here after the replacement served.
        calls = run.lane.model_calls(run.invocation_id)
        if len([c for c in calls if c.started < kill_at]) > calls_in_pause or any(
            e.type == "Command: Output" and (epoch(e.appended_at) or kill_at) < kill_at
            for e in run.engine.sql.journal(run.invocation_id)
        ):
            raise ExperimentError(
                f"{run.name}: the agent went on past its durable pause before the kill, though its end was "
                "held back"
            )
        return run.agent_back(kill_at)


def _in_flight(
    run: FaultedRun,
    what: str,
    ledger: Callable[[], Sequence[ModelCall] | Sequence[Booking]],
    call: int,
    after: float,
) -> float:
    """Wait until call `call` of the ledger is in flight, then until `after` seconds into it; kill the agent
    there. The stub holds the call until its caller leaves, so it is still in flight however late."""

    def current() -> ModelCall | Booking | None:
        calls = ledger()
        return calls[call - 1] if len(calls) >= call else None

    def in_flight() -> bool:
        found = current()
        return found is not None and found.finished is None

    run.wait(f"{what} to be in flight", in_flight, 60.0)
    started = current()
    assert started is not None
    run.sleep(started.started + after - time.time())
    if not in_flight():
        raise ExperimentError(f"{run.name}: {what} finished before the kill, though the stub held it")
    return run.kill_agent()


@dataclass(frozen=True)
class KillMidCall(Fault):
    """SIGKILL the agent `after` seconds into model call `call`, which the stub holds until the kill."""

    kind: ClassVar[str] = "kill-mid-call"
    call: int = 1
    """Which model call of the invocation (1 = the first)."""
    after: float = 1.0
    """Seconds into that call."""

    def describe(self) -> str:
        return f"kill {self.after:g} s into model call {self.call}"

    def arm(self, run: FaultedRun) -> None:
        run.lane.model_call_held = self.call
        run.lane.model_call_billed_after = self.after
        run.replacement = True

    def land(self, run: FaultedRun) -> Landing:
        calls = lambda: run.lane.model_calls(run.invocation_id)  # noqa: E731
        return run.agent_back(_in_flight(run, f"model call {self.call}", calls, self.call, self.after))


@dataclass(frozen=True)
class KillMidBooking(Fault):
    """SIGKILL the agent `after` seconds into booking request `call`, which the stub holds until the kill."""

    kind: ClassVar[str] = "kill-mid-booking"
    call: int = 1
    """Which booking request of the invocation (1 = the first)."""
    after: float = 1.0
    """Seconds into that request."""

    def describe(self) -> str:
        return f"kill {self.after:g} s into booking request {self.call}"

    def arm(self, run: FaultedRun) -> None:
        run.lane.booking_held = self.call
        run.replacement = True

    def land(self, run: FaultedRun) -> Landing:
        bookings = lambda: run.lane.bookings(run.invocation_id)  # noqa: E731
        return run.agent_back(_in_flight(run, f"booking {self.call}", bookings, self.call, self.after))


@dataclass(frozen=True)
class ServerKillInPause(Fault):
    """Kill restate-server itself in the pause and start it again on its data (on a cluster, every node)."""

    kind: ClassVar[str] = "server-kill-in-pause"
    own_server: ClassVar[bool] = True

    def describe(self) -> str:
        return "kill restate-server in the pause, restart it on its data"

    def arm(self, run: FaultedRun) -> None:
        run.hold_pause = True

    def land(self, run: FaultedRun) -> Landing:
        run.wait_for_pause()
        kill_at = time.time()
        run.engine.server.restart()
        return Landing(kill_at, time.time())


@dataclass(frozen=True)
class NodeKillInPause(Fault):
    """SIGKILL the cluster node leading the invocation's partition in the pause; start it again once the
    invocation has settled."""

    kind: ClassVar[str] = "node-kill-in-pause"
    nodes: ClassVar[int] = 3

    def describe(self) -> str:
        return "kill the cluster node leading the invocation's partition in the pause"

    def arm(self, run: FaultedRun) -> None:
        run.hold_pause = True

    def land(self, run: FaultedRun) -> Landing:
        """In the pause, SIGKILL the node leading the invocation's partition; wait for another node to take
        the partition over, and for the cluster's leaders to settle (the pause is held until then)."""
        cluster = run.engine.server
        if not isinstance(cluster, RestateCluster):
            raise ExperimentError(f"{run.name}: node-kill-in-pause needs a cluster")
        run.wait_for_pause()
        led = cluster.leader_of(run.invocation_id)
        if led.leader is None:
            raise ExperimentError(f"partition {led.partition} of {run.invocation_id} has no leader to kill")
        killed_at = cluster.kill_node(led.leader)
        took_over: list[str] = []

        def moved() -> bool:
            for partition in cluster.leaders(quiet=True):
                if partition.partition == led.partition and partition.leader not in (None, led.leader):
                    took_over.append(partition.leader)
                    return True
            return False

        run.wait(f"another node to lead partition {led.partition}", moved, 120.0)
        node_kill = NodeKill(led.partition, led.leader, killed_at, took_over[0], time.time())
        # Landed once the leaders stay put: the first node to take over hands the partition on when the
        # cluster reconfigures without the dead node (a second or more later), and an attempt going past
        # the pause meanwhile would be cut off with its model call answered but not journaled.
        cluster.wait_healthy(down={led.leader})
        return Landing(killed_at, None, node_kill)

    def settle(self, run: FaultedRun, landing: Landing) -> float | None:
        """Start the killed node again on its data; returns when it answered. Then wait until every
        partition has a leader again, so the next run finds the cluster whole."""
        cluster = run.engine.server
        if landing.node_kill is None or not isinstance(cluster, RestateCluster):
            return None
        cluster.start_node(landing.node_kill.node)
        back_at = time.time()
        cluster.wait_healthy()
        return back_at


@dataclass(frozen=True)
class PauseMidCall(Fault):
    """The operator's pause (the admin API's PATCH /invocations/{id}/pause) sent `after` seconds into model
    call `call`, whose answer the stub holds back for a while (the row's `hold`), and on until the pause was
    sent; once the invocation is paused, resumed on its pinned deployment. Nothing is killed: what the pause
    did to the call in flight is read from the stub's ledger (was it answered, was it asked again)."""

    kind: ClassVar[str] = "pause-mid-call"
    call: int = 1
    """Which model call of the invocation (1 = the first)."""
    after: float = 1.0
    """Seconds into that call."""

    def describe(self) -> str:
        return f"operator's pause {self.after:g} s into model call {self.call}, then resume"

    def arm(self, run: FaultedRun) -> None:
        run.lane.settle = _answer_once_landed(run, self.call, run.lane.settle)

    def land(self, run: FaultedRun) -> Landing:
        def calls() -> list[ModelCall]:
            return run.lane.model_calls(run.invocation_id)

        admin, sql = run.engine.admin, run.engine.sql
        try:
            run.wait(f"model call {self.call} to be in flight", lambda: len(calls()) >= self.call, 60.0)
            run.sleep(calls()[self.call - 1].started + self.after - time.time())
            if calls()[self.call - 1].finished is not None:
                raise ExperimentError(f"{run.name}: model call {self.call} finished before the pause")
            admin.pause(run.invocation_id)
        finally:
            run.landed.set()

        def status() -> str:
            row = sql.invocation(run.invocation_id)
            return row.status if row is not None else "unknown"

        run.wait("the invocation to pause", lambda: status() in ("paused", "completed"), 120.0)
        if status() == "paused":
            admin.resume(run.invocation_id)
            # The run settles on a pause: this one is the operator's own, so it waits here for the resumed
            # invocation to end (a later pause, as its retry policy's, is what the run then reads).
            run.wait("the resumed invocation to complete", lambda: status() == "completed", 120.0)
        return Landing(None, None)


_LANDING_WAIT = 120.0
"""Seconds a held answer waits for its fault to land, at most (the lab may have given up on the run)."""


def _answer_once_landed(
    run: FaultedRun, call: int, before: Callable[[], Awaitable[None]] | None
) -> Callable[[], Awaitable[None]]:
    """The stub's wait before each answer on the run's lane: model call `call`'s waits until the fault has
    landed; the others go as they would."""

    async def settle() -> None:
        if before is not None:
            await before()
        if len(run.lane.model_calls(run.invocation_id)) == call and not run.landed.is_set():
            await asyncio.to_thread(run.landed.wait, _LANDING_WAIT)

    return settle


FAULT_KINDS: dict[str, type[Fault]] = {
    kind.kind: kind
    for kind in (
        NoFault,
        KillInPause,
        KillMidCall,
        KillMidBooking,
        ServerKillInPause,
        NodeKillInPause,
        PauseMidCall,
    )
}
"""Every kind of fault a row may name, by the name records and listings print
(tests/lab/test_fault_kinds.py fails on a kind defined but left out of it, unused by any row, or untested)."""
