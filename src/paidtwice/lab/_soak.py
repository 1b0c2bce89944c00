"""Load with faults: many journaled invocations at once, the agent killed and restarted while they run, and
on a cluster, its nodes killed and restarted one at a time.

Nothing may be lost, and journaling bounds what the kills cost: a model call is paid again only if it was in
flight at a kill (its answer never reached the journal), so the extra calls are at most the calls in flight
at the kills, counted from the stub's ledger at each kill.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from paidtwice._exceptions import ExperimentError
from paidtwice.agent._process import AgentAttempt
from paidtwice.engine._cluster import PartitionLeader, RestateCluster
from paidtwice.engine._sql import SqlClient
from paidtwice.lab._runner import QUESTION, Lab, LabCancelled, _epoch
from paidtwice.stub._scripts import SCRIPTS
from paidtwice.stub._server import Lane

__all__ = ["NodeKillLine", "SoakRecord", "soak"]

_CLEAN_MODEL_CALLS = 2
"""Model calls of one clean run of the deck's agent."""


@dataclass(frozen=True)
class NodeKillLine:
    """One node of the cluster killed during a soak."""

    node: str
    """The node killed ("node-2"): the one leading the most partitions, never the one killed last."""
    partitions: tuple[int, ...]
    """The partitions it led at the kill."""
    running: int
    """Invocations on those partitions not yet completed at the kill (their output journaled later)."""
    cut_off: int
    """Model calls made in the attempts this kill cut off, whose answer never reached the journal: the most
    it can cost. An attempt is cut off by the leader's death, and again when leadership moves back to the
    node after its restart; the first attempt after it that reached the agent says when."""
    down: float
    """Seconds from the kill until the node answered again."""


@dataclass(frozen=True)
class SoakRecord:
    """What a soak measured."""

    sent: int
    """Invocations sent."""
    kills: int
    """Times the agent was killed and restarted."""
    completed: int
    """Invocations that completed."""
    paused: int
    """Invocations that ended paused."""
    lost: int
    """Invocations neither completed nor paused when the wait ended (must be 0)."""
    model_calls: int
    """Model calls in all."""
    extra_model_calls: int
    """Model calls beyond the clean count (2 per invocation)."""
    in_flight_at_kills: int
    """Model calls cut off by the kills, summed (made, but their answer not journaled): the most the kills
    can cost."""
    extra_tool_runs: int
    """Tool executions beyond one per invocation."""
    wall_time: float
    """Seconds from the first send until every invocation settled."""
    throughput: float
    """Completed invocations per second."""
    node_kills: tuple[NodeKillLine, ...] = field(default=())
    """On a cluster: each node killed and restarted while the invocations ran, in order."""

    @property
    def cut_off_by_node_kills(self) -> int:
        """Model calls the node kills cut off, summed: the most they can cost."""
        return sum(kill.cut_off for kill in self.node_kills)

    @property
    def ok(self) -> bool:
        bound = self.in_flight_at_kills + self.cut_off_by_node_kills
        return self.lost == 0 and self.extra_model_calls <= bound


def _model_calls_cut_off(sql: SqlClient, ids: list[str], lane: Lane, *, since: float) -> int:
    """Model calls the agent made in its last life (from `since`) whose answer never reached the journal.

    Read at the end of the down time, when nothing new can be journaled for the dead agent and no new agent
    listens yet: every call the stub has recorded since `since` was made by the dead agent, also one the stub
    read only after the kill (the agent sent it just before). Each such call was paid for and will be paid
    again on replay; a step whose command is journaled but whose HTTP call had not gone out yet costs
    nothing, so the journal alone would overcount.
    """
    results: dict[str, int] = {}
    for chunk in range(0, len(ids), 100):
        quoted = ", ".join(f"'{i}'" for i in ids[chunk : chunk + 100])
        rows = sql.query(
            "SELECT id, index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id IN ({quoted}) ORDER BY id, index"
        )
        open_steps: dict[str, list[str]] = {}
        for row in rows:
            invocation = str(row["id"])
            steps = open_steps.setdefault(invocation, [])
            if row["entry_type"] == "Command: Run":
                steps.append(str(row.get("name") or ""))
            elif row["entry_type"] == "Notification: Run" and steps:
                step = steps.pop(0)
                if step == "model" and (_epoch(row.get("appended_at")) or 0.0) >= since:
                    results[invocation] = results.get(invocation, 0) + 1
    calls: dict[str, int] = {}
    for call in lane.model_calls():
        if since <= call.started:
            calls[call.invocation_id] = calls.get(call.invocation_id, 0) + 1
    return sum(max(0, count - results.get(invocation, 0)) for invocation, count in calls.items())


def soak(
    lab: Lab,
    *,
    invocations: int = 200,
    kills: int = 5,
    kill_every: float = 0.7,
    restart_delay: float = 0.3,
    timeout: float = 300.0,
    node_kills: int = 0,
) -> SoakRecord:
    """Send `invocations` at once to one journaled agent and kill it `kills` times while they run; then, on a
    cluster, kill `node_kills` nodes one after the other, each started again before the next."""
    if invocations < 1 or kills < 0 or node_kills < 0:
        raise ExperimentError("a soak needs at least one invocation and a non-negative number of kills")
    cluster = lab.server
    if node_kills and not isinstance(cluster, RestateCluster):
        raise ExperimentError("node kills need a cluster: run the soak with --cluster 3")
    service = f"Agent_soak_{lab._next_id()}"
    lane = lab.stub.open_lane(SCRIPTS["steady"], name=service.lower())
    admin, ingress, sql = lab.admin, lab.ingress, lab.sql
    with lab.new_agent(mode="journaled", lane=lane, service=service) as agent:
        agent.start()
        admin.register_deployment(agent.uri)
        started = time.time()
        with ThreadPoolExecutor(max_workers=8) as pool:
            ids = list(pool.map(lambda _: ingress.send(service, "run", QUESTION), range(invocations)))
        in_flight = 0
        alive_since = started
        for _ in range(kills):
            agent.prepare()
            agent.wait_ready()
            if lab.cancelled.wait(kill_every):
                raise LabCancelled("interrupted")
            agent.kill()
            if lab.cancelled.wait(restart_delay):
                raise LabCancelled("interrupted")
            # Read at the end of the down time: what the agent sent just before dying is in by now.
            in_flight += _model_calls_cut_off(sql, ids, lane, since=alive_since)
            alive_since = agent.go()
        node_events: list[_NodeEvent] = []
        for _ in range(node_kills):
            assert isinstance(cluster, RestateCluster)
            if lab.cancelled.wait(kill_every):
                raise LabCancelled("interrupted")
            last = node_events[-1].node if node_events else None
            node_events.append(_kill_node(lab, cluster, restart_delay=restart_delay, avoid=last))
        deadline = time.monotonic() + timeout
        statuses: dict[str, str] = {}
        while True:
            pending = [i for i in ids if statuses.get(i) not in ("completed", "paused")]
            for chunk in range(0, len(pending), 100):
                rows = sql.invocations(pending[chunk : chunk + 100])
                statuses.update({i: row.status for i, row in rows.items()})
            if all(statuses.get(i) in ("completed", "paused") for i in ids):
                break
            if time.monotonic() > deadline or lab.cancelled.is_set():
                break
            time.sleep(0.2)
        wall = time.time() - started
        attempts = agent.attempts() if node_events else []
    completed = sum(1 for i in ids if statuses.get(i) == "completed")
    paused = sum(1 for i in ids if statuses.get(i) == "paused")
    calls = lane.model_calls()
    runs = lane.tool_runs()
    per_invocation: dict[str, int] = {}
    for run in runs:
        per_invocation[run.invocation_id] = per_invocation.get(run.invocation_id, 0) + 1
    node_lines = _node_kill_lines(sql, ids, lane, attempts, node_events) if node_events else ()
    return SoakRecord(
        node_kills=node_lines,
        sent=len(ids),
        kills=kills,
        completed=completed,
        paused=paused,
        lost=len(ids) - completed - paused,
        model_calls=len(calls),
        extra_model_calls=len(calls) - _CLEAN_MODEL_CALLS * len(ids),
        in_flight_at_kills=in_flight,
        extra_tool_runs=sum(count - 1 for count in per_invocation.values() if count > 1),
        wall_time=round(wall, 3),
        throughput=round(completed / wall, 2) if wall > 0 else 0.0,
    )


@dataclass(frozen=True)
class _NodeEvent:
    node: str
    led: tuple[PartitionLeader, ...]
    killed_at: float
    back_at: float


def _kill_node(lab: Lab, cluster: RestateCluster, *, restart_delay: float, avoid: str | None) -> _NodeEvent:
    """SIGKILL the node leading the most partitions (never the one killed last), keep it down for
    `restart_delay`, start it again on its data, and wait until the cluster has settled."""
    leaders = cluster.leaders()
    counts = {node.name: sum(1 for p in leaders if p.leader == node.name) for node in cluster.nodes}
    victim = max((name for name in counts if name != avoid), key=lambda name: counts[name])
    killed_at = cluster.kill_node(victim)
    if lab.cancelled.wait(restart_delay):
        raise LabCancelled("interrupted")
    cluster.start_node(victim)
    back_at = time.time()
    cluster.wait_healthy()
    led = tuple(p for p in leaders if p.leader == victim)
    return _NodeEvent(victim, led, killed_at, back_at)


def _node_kill_lines(
    sql: SqlClient,
    ids: list[str],
    lane: Lane,
    attempts: list[AgentAttempt],
    events: list[_NodeEvent],
) -> tuple[NodeKillLine, ...]:
    """Each node kill's figures, read once everything has settled, from the final journals' append times,
    the stub's ledger and the agent host's wire log.

    The node kills come after the agent's own kills, so only attempts served by the agent's last process
    count here. Such an attempt that ended without its last frame was cut off by the cluster; it is put
    to the kill whose window holds the start of the invocation's next attempt. Each model call belongs to
    the attempt that had started last when it was made, and was paid for in vain if no model answer was
    journaled between its start and the next call's (a journaled agent asks one question at a time)."""
    keys: dict[str, int] = {}
    answers: dict[str, list[float]] = {}
    outputs: dict[str, float] = {}
    for chunk in range(0, len(ids), 100):
        quoted = ", ".join(f"'{i}'" for i in ids[chunk : chunk + 100])
        for row in sql.query(f"SELECT id, partition_key FROM sys_invocation_status WHERE id IN ({quoted})"):
            keys[str(row["id"])] = int(row["partition_key"])
        open_steps: dict[str, list[str]] = {}
        for row in sql.query(
            "SELECT id, index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id IN ({quoted}) ORDER BY id, index"
        ):
            invocation = str(row["id"])
            at = _epoch(row.get("appended_at")) or 0.0
            steps = open_steps.setdefault(invocation, [])
            if row["entry_type"] == "Command: Run":
                steps.append(str(row.get("name") or ""))
            elif row["entry_type"] == "Notification: Run" and steps and steps.pop(0) == "model":
                answers.setdefault(invocation, []).append(at)
            elif row["entry_type"] == "Command: Output":
                outputs[invocation] = at
    calls: dict[str, list[float]] = {}
    for call in lane.model_calls():
        calls.setdefault(call.invocation_id, []).append(call.started)
    last_pid = attempts[-1].pid if attempts else -1
    served: dict[str, list[AgentAttempt]] = {}
    for attempt in attempts:
        if attempt.pid == last_pid:
            served.setdefault(attempt.invocation_id, []).append(attempt)
    ends = [event.killed_at for event in events[1:]] + [float("inf")]
    cut_off = [0] * len(events)
    for invocation, its in served.items():
        starts = sorted(calls.get(invocation, []))
        for attempt, following in zip(its, its[1:], strict=False):
            if attempt.last_event is not None:
                continue
            window = next(
                (n for n, event in enumerate(events) if event.killed_at <= following.at < ends[n]), None
            )
            if window is None:
                continue
            for n, start in enumerate(starts):
                if not attempt.at <= start < following.at:
                    continue
                until = starts[n + 1] if n + 1 < len(starts) else float("inf")
                if not any(start <= at < until for at in answers.get(invocation, [])):
                    cut_off[window] += 1
    lines = []
    for event, count in zip(events, cut_off, strict=True):
        hit = [i for i in ids if any(p.first_key <= keys.get(i, -1) <= p.last_key for p in event.led)]
        lines.append(
            NodeKillLine(
                node=event.node,
                partitions=tuple(p.partition for p in event.led),
                running=sum(1 for i in hit if outputs.get(i, float("inf")) > event.killed_at),
                cut_off=count,
                down=round(event.back_at - event.killed_at, 3),
            )
        )
    return tuple(lines)
