"""The soak's second phase: the invocations sent, the agent killed and restarted while they run, and on a
cluster, its nodes killed and restarted one at a time.

The agent's kills begin while the first wave is still being sent (`Driver._send_with_kills`). On a
cluster, the invocations go in one wave per node kill, each sent just before its kill (the first also takes
the agent's kills), so that every node kill lands while invocations run: a node killed and started again
takes a cluster more than ten seconds to settle from, and one wave sent at once had settled before a second
kill came.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from paidtwice._exceptions import LabCancelled
from paidtwice.engine import RestateCluster
from paidtwice.lab import Lab
from paidtwice.soak._bound import AgentKill, journaled_model_answers
from paidtwice.soak._monitor import Monitor
from paidtwice.soak._node_kills import NodeEvent, kill_node
from paidtwice.soak._options import SoakOptions
from paidtwice.soak._setup import Clean
from paidtwice.stub import Lane
from paidtwice.targets import Agent

__all__ = ["Driven", "Driver"]

_SENDERS = 32
_SENT_POLL = 0.02
"""Seconds between two looks at how many of the first wave's sends are in."""


@dataclass
class Driven:
    """What the drive did, filled as it goes, so that an interrupted soak still says what it did."""

    ids: list[str] = field(default_factory=list)
    """The invocations sent, once the server had each."""
    kills: list[AgentKill] = field(default_factory=list)
    """Each agent kill, in order: what it cut off is counted at the end (`snapshot`)."""
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
        """The first wave with the agent's kills, then each next wave just before its node kill."""
        waves = self.options.waves()
        self._send_with_kills(waves[0])
        for number in range(self.options.node_kills):
            if number:
                self._send(waves[number])
            self._kill_node()

    def _send_with_kills(self, invocations: int) -> None:
        """Send the first wave and kill the agent while it goes: the kills begin once the first sends are
        in, not the last. On a busy machine sending 200 took longer than an invocation runs, and kills
        after the last send found every invocation settled: they tested nothing."""
        stop = threading.Event()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="paidtwice-soak-wave") as wave:
            sending = wave.submit(self._send, invocations, stop)
            try:
                while len(self.driven.ids) < min(invocations, _SENDERS) and not sending.done():
                    self._wait(_SENT_POLL)
                self._kill_agent()
            except BaseException:
                stop.set()  # the sends not yet made are dropped
                raise
            sending.result()

    def _send(self, invocations: int, stop: threading.Event | None = None) -> None:
        """Send `invocations`, adding each one's id to `ids` once the server has it; those not yet made
        when `stop` is set are dropped."""
        ids, calling = self.driven.ids, self.clean.calling
        lock = threading.Lock()
        first = len(ids)  # the waves go one after the other: each invocation's number (and key) is its own

        def send(n: int) -> None:
            if self.lab.cancelled.is_set() or (stop is not None and stop.is_set()):
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
        """Kill the agent `kills` times, adding each kill to `kills` with the journal's model answers as they
        stood when the replacement listened (read then: a completed invocation's journal may be gone by the
        end)."""
        lab, agent, options, clean = self.lab, self.agent, self.options, self.clean
        alive_since = self.monitor.started
        for _ in range(options.kills):
            agent.prepare()
            agent.wait_ready()
            self._wait(options.kill_every)
            self.monitor.sample_memory()
            pid = agent.pid
            assert pid is not None  # it listened again before each kill
            killed_at = agent.kill()
            self._wait(options.restart_delay)
            back_at = agent.restart()
            self.monitor.killed_one()
            # Read after the replacement is up, so the down time stays the restart delay; `snapshot` counts
            # only what the journal held before it listened (by the journal's own timestamps).
            answers = journaled_model_answers(
                lab.sql, clean.calling.service, clean.model_steps, completed_after=killed_at
            )
            self.driven.kills.append(AgentKill(pid, alive_since, killed_at, back_at, answers))
            alive_since = back_at

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
