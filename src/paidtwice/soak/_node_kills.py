"""Node kills on a cluster, and what each one cost: the node killed and started again (`kill_node`), and, once
everything has settled, each kill's line (`node_kill_lines`): the partitions it led, the invocations running
on them, and the model calls made in the attempts it cut off whose answer never reached the journal.

A node killed and started again takes a cluster more than ten seconds to settle from, so the soak sends its
invocations in one wave per node kill, each just before its kill (see `SoakOptions.waves`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from paidtwice._exceptions import LabCancelled
from paidtwice.agent import AgentAttempt
from paidtwice.engine import PartitionLeader, RestateCluster, SqlClient, epoch
from paidtwice.lab import Lab
from paidtwice.results import NodeKillLine
from paidtwice.soak._bound import model_answer_times
from paidtwice.stub import Lane

__all__ = ["NodeEvent", "kill_node", "node_kill_lines"]

_CHUNK = 100
"""Invocation ids per query of the final journals."""


@dataclass(frozen=True)
class NodeEvent:
    """One node killed and started again."""

    node: str
    """Its name."""
    led: tuple[PartitionLeader, ...]
    """The partitions it led at the kill."""
    killed_at: float
    """When the SIGKILL was sent."""
    back_at: float
    """When it was started again."""


def kill_node(lab: Lab, cluster: RestateCluster, *, restart_delay: float, avoid: str | None) -> NodeEvent:
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
    return NodeEvent(victim, led, killed_at, back_at)


@dataclass(frozen=True)
class _Journals:
    """What the final journals say of the soak's invocations, by invocation id."""

    keys: dict[str, int]
    """Its partition key."""
    answers: dict[str, list[float]]
    """When each model answer was appended, in journal order."""
    outputs: dict[str, float]
    """When its output was appended."""


def node_kill_lines(
    sql: SqlClient,
    ids: list[str],
    created: dict[str, float | None],
    lane: Lane,
    attempts: list[AgentAttempt],
    events: list[NodeEvent],
    model_steps: frozenset[str],
) -> tuple[NodeKillLine, ...]:
    """Each node kill's figures, read once everything has settled, from the final journals' append times,
    the stub's ledger and the agent host's wire log."""
    journals = _read_journals(sql, ids, model_steps)
    cut_off = _cut_off(lane, attempts, events, journals.answers)
    lines = []
    for event, count in zip(events, cut_off, strict=True):
        hit = [
            i for i in ids if any(p.first_key <= journals.keys.get(i, -1) <= p.last_key for p in event.led)
        ]
        lines.append(
            NodeKillLine(
                node=event.node,
                partitions=tuple(p.partition for p in event.led),
                running=sum(
                    1
                    for i in hit
                    if (created.get(i) or float("inf"))
                    <= event.killed_at
                    < journals.outputs.get(i, float("inf"))
                ),
                cut_off=count,
                down=round(event.back_at - event.killed_at, 3),
            )
        )
    return tuple(lines)


def _read_journals(sql: SqlClient, ids: list[str], model_steps: frozenset[str]) -> _Journals:
    """The partition keys, model answers and outputs of `ids`, a hundred invocations per query."""
    journals = _Journals(keys={}, answers={}, outputs={})
    for chunk in range(0, len(ids), _CHUNK):
        quoted = ", ".join(f"'{i}'" for i in ids[chunk : chunk + _CHUNK])
        for row in sql.query(f"SELECT id, partition_key FROM sys_invocation_status WHERE id IN ({quoted})"):
            journals.keys[str(row["id"])] = int(row["partition_key"])
        rows = sql.query(
            "SELECT id, index, entry_type, name, appended_at FROM sys_journal "
            f"WHERE id IN ({quoted}) ORDER BY id, index"
        )
        journals.answers.update(model_answer_times(rows, model_steps))
        for row in rows:
            if row["entry_type"] == "Command: Output":
                journals.outputs[str(row["id"])] = epoch(row.get("appended_at")) or 0.0
    return journals


def _cut_off(
    lane: Lane, attempts: list[AgentAttempt], events: list[NodeEvent], answers: dict[str, list[float]]
) -> list[int]:
    """The model calls each node kill cut off, whose answer never reached the journal.

    The node kills come after the agent's own kills, so only attempts served by the agent's last process
    count here, and the calls and answers of that life. Such an attempt that ended without its last frame
    was cut off by the cluster; it is put to the kill whose window holds the start of the invocation's next
    attempt. A journaled agent asks one question at a time and goes on only once its answer is journaled,
    so a cut-off attempt that made a model request paid at most its last one in vain. An invocation's calls
    paid in vain (its calls in that life less the model answers journaled since) are put, one each, to its
    cut-off attempts that made a request, up to as many as it paid in vain. Which process and attempt made a
    request is the host's word, not a time: a handler cut off on the server goes on until it reads the end
    of its stream, and may ask the model again after the next attempt has started; and the stub may read a
    request after the process that sent it was gone."""
    last_pid = attempts[-1].pid if attempts else -1
    served: dict[str, list[AgentAttempt]] = {}
    for attempt in attempts:
        if attempt.pid == last_pid:
            served.setdefault(attempt.invocation_id, []).append(attempt)
    ends = [event.killed_at for event in events[1:]] + [float("inf")]
    cut_off = [0] * len(events)
    for invocation, its in served.items():
        since = its[0].at
        made = sum(1 for call in lane.model_calls(invocation) if call.agent == last_pid)
        in_vain = made - sum(1 for at in answers.get(invocation, []) if at >= since)
        for attempt, following in zip(its, its[1:], strict=False):
            if in_vain <= 0:
                break
            if attempt.last_event is not None or not attempt.model_requests:
                continue
            window = next(
                (n for n, event in enumerate(events) if event.killed_at <= following.at < ends[n]), None
            )
            if window is not None:
                cut_off[window] += 1
                in_vain -= 1
    return cut_off
