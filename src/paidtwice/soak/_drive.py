"""The soak's second phase: the invocations sent, the agent killed and restarted while they run, and on a
cluster, its nodes killed and restarted one at a time.

On a cluster, the invocations go in one wave per node kill, each sent just before its kill (the first also
takes the agent's kills), so that every node kill lands while invocations run: a node killed and started
again takes a cluster more than ten seconds to settle from, and one wave sent at once had settled before a
second kill came.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from paidtwice._exceptions import LabCancelled
from paidtwice.engine import RestateCluster
from paidtwice.lab import Lab
from paidtwice.results import KillSnapshot
from paidtwice.soak._bound import journaled_model_answers, places_in_life, snapshot
from paidtwice.soak._monitor import Monitor
from paidtwice.soak._node_kills import NodeEvent, kill_node
from paidtwice.soak._options import SoakOptions
from paidtwice.soak._setup import Clean
from paidtwice.stub import Lane
from paidtwice.targets import Agent

__all__ = ["Driven", "Driver"]

_SENDERS = 32


@dataclass
class Driven:
    """What the drive did, filled as it goes, so that an interrupted soak still says what it did."""

    ids: list[str] = field(default_factory=list)
    """The invocations sent, once the server had each."""
    snapshots: list[KillSnapshot] = field(default_factory=list)
    """What each agent kill cut off, in order."""
    node_events: list[NodeEvent] = field(default_factory=list)
    """Each node kill, in order."""


@dataclass(frozen=True)
class Driver:
    """Sends the soak's waves and kills its agent and its cluster's nodes, recording into `driven`."""

    lab: Lab
    options: SoakOptions
    clean: Clean
    agent: Agent
    lane: Lane
    monitor: Monitor
    driven: Driven

    def drive(self) -> None:
        """The first wave, the agent's kills, then each next wave just before its node kill."""
        waves = self.options.waves()
        self._send(waves[0])
        self._kill_agent()
        for number in range(self.options.node_kills):
            if number:
                self._send(waves[number])
            self._kill_node()

    def _send(self, invocations: int) -> None:
        """Send `invocations`, adding each one's id to `ids` once the server has it."""
        ids, calling = self.driven.ids, self.clean.calling
        lock = threading.Lock()
        first = len(ids)  # the waves go one after the other: each invocation's number (and key) is its own

        def send(n: int) -> None:
            if self.lab.cancelled.is_set():
                raise LabCancelled("interrupted")
            invocation = calling.send(self.lab, first + n)
            with lock:
                ids.append(invocation)
            self.monitor.sent_one()

        # The server answers a send once it is in its log, which it writes in batches: more sends in flight
        # fill each batch (8 at a time sent 17 a second at a load average of 27 here).
        pool = ThreadPoolExecutor(max_workers=_SENDERS, thread_name_prefix="paidtwice-soak-send")
        try:
            list(pool.map(send, range(invocations)))
        finally:
            # On Ctrl-C the sends not yet started are dropped, not made while the lab waits.
            pool.shutdown(wait=True, cancel_futures=True)

    def _kill_agent(self) -> None:
        """Kill the agent `kills` times, adding each kill's snapshot to `snapshots`. With `by_order`, a call's
        place among its invocation's answers is the answers journaled when its agent life began plus its
        order in that life (a journaled agent's replay asks only for what its journal lacks), not its script
        turn."""
        lab, agent, options, clean = self.lab, self.agent, self.options, self.clean
        alive_since = self.monitor.started
        journaled_at_start: dict[str, int | None] = {}
        for _ in range(options.kills):
            agent.prepare()
            agent.wait_ready()
            self._wait(options.kill_every)
            self.monitor.sample_memory()
            killed_at = agent.kill()
            self._wait(options.restart_delay)
            back_at = agent.restart()
            self.monitor.killed_one()
            # Read after the replacement is up, so the down time stays the restart delay; the snapshot is of
            # the ledger and the journal as they stood before it listened (by their own timestamps).
            answers = journaled_model_answers(
                lab.sql, clean.calling.service, clean.model_steps, completed_after=killed_at, before=back_at
            )
            dead_life = [call for call in self.lane.model_calls() if alive_since <= call.started < back_at]
            places = places_in_life(dead_life, journaled_at_start) if clean.by_order else None
            self.driven.snapshots.append(snapshot(dead_life, answers, killed_at, back_at, places))
            alive_since, journaled_at_start = back_at, answers

    def _kill_node(self) -> None:
        """After `kill_every`, kill the node leading the most partitions and start it again."""
        cluster = self.lab.server
        assert isinstance(cluster, RestateCluster)  # `SoakOptions.check` refuses node kills without one
        self._wait(self.options.kill_every)
        events = self.driven.node_events
        last = events[-1].node if events else None
        events.append(kill_node(self.lab, cluster, restart_delay=self.options.restart_delay, avoid=last))
        self.monitor.killed_node()

    def _wait(self, seconds: float) -> None:
        if self.lab.cancelled.wait(seconds):
            raise LabCancelled("interrupted")
